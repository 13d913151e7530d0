"""An aggregate whose partial results add up: counts, sums, minimums and maximums
grouped by keys, over the rows committed in a span of commit times (see
``running_aggregate`` for why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from .dialect import Dialect
from .statement import Binder, Statement

__all__ = ["Aggregate"]

#: How partial results of each kind of measure add up.
_MERGE = {"count": "sum", "sum": "sum", "min": "min", "max": "max"}


@dataclass(frozen=True)
class Aggregate:
    """``SELECT keys, measures FROM table WHERE RUN_ID = ? GROUP BY keys``, each
    measure ``(name, how, column)``: ``how(column)`` with ``how`` in count (``count(*)``),
    sum, min, max (so partial results add up); ``times``: the measures that are
    timestamps. ``run_column``: the SQL of the run id's column; ``key_sql``: the SQL
    of each key, when it is not the key's name (a workload's quoted column)."""

    name: str
    table: str
    keys: tuple[str, ...]
    measures: tuple[tuple[str, str, str], ...]
    times: tuple[str, ...] = ()
    run_column: str = "RUN_ID"
    key_sql: tuple[str, ...] = ()

    def _keys(self) -> list[tuple[str, str]]:
        """(SQL, name) of each key."""
        return list(zip(self.key_sql or self.keys, self.keys, strict=True))

    def statement(
        self, d: Dialect, run_id: str | None, since_iso: str | None, settle_iso: str | None
    ) -> Statement:
        """The rows committed after ``since_iso`` (all with None), grouped by the keys
        and ``SETTLED`` (committed no later than ``settle_iso``; none with None), with
        ``LAST_COMMIT_SEEN``, each group's latest commit."""
        b = Binder()  # values bound in the order their ``?`` appear: SELECT, then WHERE
        if settle_iso is None:
            settled = "FALSE"
        else:
            settled = f"{d.commit_time} <= {d.timestamp(b, settle_iso)}"
        where = ["TRUE" if run_id is None else f"{self.run_column} = {b(run_id)}"]
        if since_iso is not None:
            where.append(f"{d.commit_time} > {d.timestamp(b, since_iso)}")
        keys = self._keys()
        select = [
            *(sql if sql == name else f"{sql} AS {name}" for sql, name in keys),
            f"{settled} AS SETTLED",
            *(f"{_sql(how, expr)} AS {name}" for name, how, expr in self.measures),
            f"max({d.commit_time}) AS LAST_COMMIT_SEEN",
        ]
        group = [*(sql for sql, _ in keys), "SETTLED"]
        sql = (
            f"SELECT {', '.join(select)} FROM {self.table} WHERE {' AND '.join(where)} "
            f"GROUP BY {', '.join(group)}"
        )
        return Statement(sql, b.params)

    def merge(self, parts: Sequence[pd.DataFrame]) -> pd.DataFrame:
        """Partial results (each with the keys and measures) as one."""
        cols = [*self.keys, *(n for n, _, _ in self.measures)]
        frames = [p[cols] for p in parts if not p.empty]
        if not frames:
            return pd.DataFrame(columns=cols)
        both = pd.concat(frames, ignore_index=True)
        for name, how, _ in self.measures:
            if how in ("count", "sum"):
                both[name] = pd.to_numeric(both[name])
        if not self.keys:
            return pd.DataFrame([{n: both[n].agg(_MERGE[h]) for n, h, _ in self.measures}])
        merges = {name: _MERGE[h] for name, h, _ in self.measures}
        return both.groupby(list(self.keys), as_index=False, dropna=False).agg(merges)


def _sql(how: str, column: str) -> str:
    return "count(*)" if how == "count" else f"{how}({column})"
