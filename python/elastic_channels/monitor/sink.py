"""Where the monitor's rows go: the metrics table on the target, through SQL.

:class:`SqlMetricsSink` speaks Snowflake SQL through a :class:`~.sql_client.SqlClient`
(the SQL API on an account, the same API on the emulator), so there is one code path
for both. Rows are upserted with ``MERGE`` on (RUN_ID, IS_FLEET, WORKER_ID, POD_NAME,
IS_SUMMARY, WINDOW_START), a summary row on (RUN_ID, WORKER_ID, POD_NAME, IS_SUMMARY)
alone: writing a window or a summary again replaces its row, never adds one (two pods
that claim one worker id have rows of their own).

A statement holds at most CHUNK_ROWS rows and CHUNK_BYTES of values (the emulator takes
request bodies up to 1 MiB, Snowflake statements with their bindings up to 1 MB): the
bytes bound it, ~250 rows of ~3.5 KB. Up to IN_FLIGHT statements of one upsert run at
once (its rows have one key each, so no two statements touch one row; the upsert
returns once all are done), so a target's per-statement latency is paid once per
IN_FLIGHT statements, not once per statement. When the target refuses a statement for what it holds
(HTTP 400, 413, 422: a value it cannot store, a body too large), the statement's rows
are split in halves and written again, down to the single rows it refuses: those are
set aside and returned with the target's reason, every other row is written. A target
that fails as a whole (unreachable, the table gone) raises :class:`SqlError` and sets
nothing aside.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model import METRICS_TABLE_NAME, TABLE_NAME
from ..snowflake.ddl import METRICS_COLUMNS, stages_table
from .landing_reads import LandingReads, iso_utc
from .merge_sql import merge_head
from .rows import WRITTEN_COLUMNS
from .sql_client import SqlClient, SqlError, SqlUnreachable, TypedNull
from .stage_table import StageTable

__all__ = ["MetricsSink", "RefusedRow", "SqlMetricsSink"]

#: Rows per MERGE statement at most (each row binds ~45 values; CHUNK_BYTES binds first).
CHUNK_ROWS = 1000
#: MERGE statements of one upsert in flight at once (the emulator runs 4 at once).
IN_FLIGHT = 4
#: Bytes of bound values per MERGE (as the request's JSON spells them), under the
#: emulator's 1 MiB request cap with room for the statement's text.
CHUNK_BYTES = 900_000
#: HTTP statuses that refuse what a statement holds rather than say the target fails.
REFUSALS = frozenset({400, 413, 422})
_KEY = ("RUN_ID", "IS_FLEET", "WORKER_ID", "POD_NAME", "IS_SUMMARY", "WINDOW_START")


@dataclass(frozen=True)
class RefusedRow:
    """A row the target refused on its own, and the target's words."""

    row: dict[str, Any]
    reason: str


@dataclass
class _Bound:
    """A row, its values as bound, and their size in the request."""

    row: dict[str, Any]
    params: list[Any]
    size: int


@dataclass
class _Attempt:
    refused: list[RefusedRow] = field(default_factory=list)
    probed: bool = False


class MetricsSink(Protocol):
    """What the monitor needs from a target."""

    def ensure_table(self) -> None: ...

    def upsert(self, rows: Sequence[dict[str, Any]]) -> list[RefusedRow]: ...

    def read_rows(
        self,
        run_id: str,
        *,
        fleet: bool | None = None,
        summary: bool | None = False,
        window_start: float | None = None,
    ) -> list[dict[str, Any]]: ...

    def visible_latency(
        self, run_id: str, window_s: float, start: float, end: float, last: float | None = None
    ) -> dict[float, dict[str, Any]]: ...

    def landed_rows(self, run_id: str) -> int: ...


def _key_of(row: dict[str, Any]) -> tuple[Any, ...]:
    """A row's key: a summary row's window span is not part of it."""
    return tuple(
        None if k == "WINDOW_START" and row.get("IS_SUMMARY") else row.get(k) for k in _KEY
    )


class SqlMetricsSink(LandingReads):
    """The metrics table (and the landing table's commit times) over SQL."""

    def __init__(
        self,
        client: SqlClient,
        *,
        table: str = METRICS_TABLE_NAME,
        landing_table: str = TABLE_NAME,
    ) -> None:
        self.client = client
        self.table = table
        LandingReads.__init__(self, client, landing_table)
        self._merge_head = self._merge_sql_head()
        #: The per-stage table beside it (``<table>_STAGES``).
        self.stages = StageTable(client, stages_table(table))

    # --- the table ----------------------------------------------------------------------

    def ensure_table(self) -> None:
        """Create the metrics table if it is not there (as ``setup`` does); a role that
        may only write to an existing one never needs to create it."""
        try:
            self.client.execute(f"SELECT RUN_ID FROM {self.table} LIMIT 0")
        except SqlUnreachable:
            raise  # says the server cannot be reached: not a missing table
        except SqlError:
            pass
        else:
            self._add_missing_columns()
            self.stages.ensure()
            return
        cols = ",\n".join(f'    "{n}" {t}' for n, t in METRICS_COLUMNS)
        try:
            self.client.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (\n{cols}\n)")
        except SqlError as e:
            raise SqlError(
                f"the metrics table {self.table} is missing and cannot be created ({e}); "
                "run `elastic-channels setup` with a role that may create it"
            ) from None
        self.stages.ensure()

    def _add_missing_columns(self) -> None:
        """A table made before a column existed (WORKER_STATE, IS_SUMMARY ...) gets it, as
        ``setup``'s ``ADD COLUMN IF NOT EXISTS`` does (nothing else moves)."""
        have = {
            c.upper() for c in self.client.execute(f"SELECT * FROM {self.table} LIMIT 0").columns
        }
        for name, sf_type in METRICS_COLUMNS:
            if name in have or " DEFAULT " in sf_type:
                continue
            alter = f"ALTER TABLE {self.table} ADD COLUMN {name} {sf_type}"
            try:
                self.client.execute(alter)
            except SqlError as e:
                raise SqlError(
                    f"the metrics table {self.table} lacks {name} and cannot be altered "
                    f"({e}); add it (`{alter}`) or run `elastic-channels setup` with a role "
                    "that may"
                ) from None

    # --- writes ---------------------------------------------------------------------------

    def _merge_sql_head(self) -> str:
        on = (  # rows written before IS_SUMMARY existed have it NULL: windows
            "T.RUN_ID = S.RUN_ID AND T.IS_FLEET = S.IS_FLEET AND "
            "COALESCE(T.WORKER_ID, -1) = COALESCE(S.WORKER_ID, -1) AND "
            "COALESCE(T.POD_NAME, '') = COALESCE(S.POD_NAME, '') AND "
            "COALESCE(T.IS_SUMMARY, FALSE) = S.IS_SUMMARY AND "
            "(S.IS_SUMMARY OR T.WINDOW_START = S.WINDOW_START)"
        )
        # A summary row's span (WINDOW_START) may move; a window row's stays the same.
        fixed = ("RUN_ID", "IS_FLEET", "WORKER_ID", "POD_NAME")
        return merge_head(self.table, WRITTEN_COLUMNS, on, fixed)

    def upsert(self, rows: Sequence[dict[str, Any]]) -> list[RefusedRow]:
        """Insert or replace rows (one per key: the last of duplicates wins); the rows the
        target refused, set aside (SqlError: the target failed as a whole)."""
        unique = list({_key_of(r): r for r in rows}.values())
        names = [n for n, _ in WRITTEN_COLUMNS]
        nulls = [TypedNull.of(t) for _, t in WRITTEN_COLUMNS]
        attempt = _Attempt()
        chunks: list[list[_Bound]] = [[]]
        size = 0
        for r in unique:
            values = (r.get(n) for n in names)
            params = [null if v is None else v for v, null in zip(values, nulls, strict=True)]
            bound = _Bound(r, params, sum(_bound_size(v) for v in params))
            if chunks[-1] and (len(chunks[-1]) == CHUNK_ROWS or size + bound.size > CHUNK_BYTES):
                chunks.append([])
                size = 0
            chunks[-1].append(bound)
            size += bound.size
        if len(chunks) == 1:
            if chunks[0]:
                self._write(chunks[0], attempt)
            return attempt.refused
        with ThreadPoolExecutor(min(IN_FLIGHT, len(chunks)), "monitor-merge") as pool:
            futures = [pool.submit(self._write, c, attempt) for c in chunks]
            wait(futures)  # every statement ends before the first failure is raised
        for f in futures:
            f.result()
        return attempt.refused

    def _write(self, chunk: list[_Bound], attempt: _Attempt) -> None:
        """One MERGE of ``chunk``; refused for what it holds, each half again, down to
        the single rows the target refuses."""
        one = "(" + ", ".join("?" for _ in WRITTEN_COLUMNS) + ")"
        sql = self._merge_head.replace("{values}", ", ".join(one for _ in chunk))
        try:
            self.client.execute(sql, [p for b in chunk for p in b.params])
        except SqlError as e:
            if e.status not in REFUSALS:
                raise
            if not attempt.probed:  # the rows' fault, or the table's?
                self._probe(e)
                attempt.probed = True
            if len(chunk) == 1:
                attempt.refused.append(RefusedRow(chunk[0].row, str(e)))
                return
            half = len(chunk) // 2
            self._write(chunk[:half], attempt)
            self._write(chunk[half:], attempt)

    def _probe(self, refusal: SqlError) -> None:
        """SqlError (the target failing as a whole) unless the table can be read."""
        try:
            self.client.execute(f"SELECT RUN_ID FROM {self.table} LIMIT 0")
        except SqlError as e:
            raise SqlError(
                f"{refusal}; and the metrics table {self.table} cannot be read: {e}"
            ) from None

    # --- reads ------------------------------------------------------------------------------

    def read_rows(
        self,
        run_id: str,
        *,
        fleet: bool | None = None,
        summary: bool | None = False,
        window_start: float | None = None,
    ) -> list[dict[str, Any]]:
        """The run's rows (fleet only, worker only, or both), by window start: window rows,
        or with ``summary`` the workers' summary rows only (None: both); with
        ``window_start`` (epoch s), those of that window only."""
        where = "RUN_ID = ?"
        params: list[Any] = [run_id]
        if window_start is not None:
            where += " AND WINDOW_START = CAST(? AS TIMESTAMP_TZ)"
            params.append(iso_utc(window_start))
        if fleet is not None:
            where += f" AND IS_FLEET = {'TRUE' if fleet else 'FALSE'}"
        if summary is not None:
            where += f" AND COALESCE(IS_SUMMARY, FALSE) = {'TRUE' if summary else 'FALSE'}"
        cols = ", ".join(n for n, _ in METRICS_COLUMNS)
        result = self.client.execute(
            f"SELECT {cols} FROM {self.table} WHERE {where} "
            "ORDER BY WINDOW_START, IS_FLEET, WORKER_ID",
            params,
        )
        return result.dicts()


def _bound_size(value: Any) -> int:
    """A bound value's bytes in the request's JSON, or more (its binding's wrapping)."""
    return 48 + (len(json.dumps(value)) if isinstance(value, str) else 32)
