"""The "Latest rows" queries over any workload's landing table (``landing.LandingView``).

Every name from the workload is a quoted identifier (``landing.ident``) and every value
is bound (:class:`~.statement.Binder`); result columns get names of the code's own
(``C0``, ``C1``, ... in the workload's order), so no column name of a workload is ever
an alias the target must take.

- :func:`runs_aggregate`: per run (a workload with a run-id column), its rows and first
  and last commit: sums and extremes, kept across refreshes (``running_aggregate``);
- :func:`span_totals`: the rows and last commit of a table without a run-id column,
  between two commit times (a run's sending span from the metrics table);
- :func:`latest_rows`: the newest rows among those committed in the
  :data:`RECENT_WINDOW_S` seconds before the last commit (the target skips older rows
  by their commit-time statistics), newest send time first, with their commit time and
  ingest-to-visible delay;
- :func:`recent_delay`: ingest-to-visible p50/p99 over the same rows, as the Resort
  sales page computes it (``sales_sql.recent_delay``).
"""

from __future__ import annotations

from .aggregate import Aggregate
from .dialect import Dialect
from .landing import LandingView, ident
from .sales_sql import RECENT_WINDOW_S
from .statement import Binder, Statement

__all__ = [
    "MAX_ROWS",
    "RECENT_WINDOW_S",
    "Scope",
    "latest_rows",
    "out_name",
    "recent_delay",
    "runs_aggregate",
    "span_totals",
]

MAX_ROWS = 500
#: NUMBER columns with more digits than a double holds exactly are read as text.
EXACT_DIGITS = 15
_RUN_TIMES = ("FIRST_COMMIT", "LAST_COMMIT")


class Scope:
    """Which rows a query covers: one run's (by its run-id column), or those committed
    from ``since_iso`` to ``until_iso`` (a table without one; None: no bound)."""

    def __init__(
        self, run_id: str | None = None, since_iso: str | None = None, until_iso: str | None = None
    ) -> None:
        self.run_id, self.since_iso, self.until_iso = run_id, since_iso, until_iso

    def where(self, d: Dialect, b: Binder, v: LandingView) -> str:
        parts = ["TRUE"]
        if self.run_id is not None and v.run_id is not None:
            parts.append(f"{ident(v.run_id)} = {b(self.run_id)}")
        if self.since_iso is not None:
            parts.append(f"{d.commit_time} >= {d.timestamp(b, self.since_iso)}")
        if self.until_iso is not None:
            parts.append(f"{d.commit_time} <= {d.timestamp(b, self.until_iso)}")
        return " AND ".join(parts)


def out_name(i: int) -> str:
    """The result column of the workload's ``i``-th column."""
    return f"C{i}"


def runs_aggregate(d: Dialect, v: LandingView) -> Aggregate:
    """Per run (``RUN_ID``): ``ROWS``, ``FIRST_COMMIT``, ``LAST_COMMIT``."""
    if v.run_id is None:
        raise ValueError(f"{v.table} has no run-id column: no runs to list")
    measures = (
        ("ROWS", "count", "*"),
        ("FIRST_COMMIT", "min", d.commit_time),
        ("LAST_COMMIT", "max", d.commit_time),
    )
    return Aggregate(
        f"rows_runs_{d.name}_{v.workload}_{v.table}", v.table_sql(d), ("RUN_ID",), measures,
        _RUN_TIMES, run_column=ident(v.run_id), key_sql=(ident(v.run_id),),
    )  # fmt: skip


def span_totals(d: Dialect, v: LandingView, scope: Scope) -> Statement:
    """``ROWS``, ``FIRST_COMMIT``, ``LAST_COMMIT`` of the rows ``scope`` covers."""
    b = Binder()
    sql = (
        f"SELECT count(*) AS ROWS, min({d.commit_time}) AS FIRST_COMMIT, "
        f"max({d.commit_time}) AS LAST_COMMIT FROM {v.table_sql(d)} WHERE {scope.where(d, b, v)}"
    )
    return Statement(sql, b.params)


def _recent(d: Dialect, b: Binder, v: LandingView, scope: Scope, last_commit_iso: str) -> str:
    where = scope.where(d, b, v)  # bound first: it comes first in the text
    since = d.minus_seconds(d.timestamp(b, last_commit_iso), RECENT_WINDOW_S)
    return f"{where} AND {d.commit_time} >= {since}"


def _shown(d: Dialect, v: LandingView, column: str) -> str:
    """A column as the page shows it: VARIANT as compact JSON text, a NUMBER too wide
    for a double as text, anything else as it is."""
    t = v.type_of(column)
    if t.kind == "VARIANT":
        return d.json_compact(ident(column))
    if t.kind == "NUMBER" and (t.precision or 38) > EXACT_DIGITS:
        return f"CAST({ident(column)} AS VARCHAR)"
    return ident(column)


def latest_rows(
    d: Dialect, v: LandingView, scope: Scope, last_commit_iso: str, limit: int
) -> Statement:
    """The ``limit`` newest rows (at most :data:`MAX_ROWS`) committed in the
    :data:`RECENT_WINDOW_S` seconds before ``last_commit_iso``: every column (``C<i>``),
    ``COMMIT_TIME``, and ``DELAY_MS`` (ingest-to-visible) when there is a send time.
    Newest first by the send time (else the commit time), then by the unique id."""
    b = Binder()
    recent = _recent(d, b, v, scope, last_commit_iso)
    cols = [f"{_shown(d, v, name)} AS {out_name(i)}" for i, (name, _) in enumerate(v.columns)]
    cols.append(f"{d.commit_time} AS COMMIT_TIME")
    if v.send_time is not None:
        cols.append(f"{d.diff_ms(ident(v.send_time), d.commit_time)} AS DELAY_MS")
    order = [f"{ident(v.order_by) if v.order_by else d.commit_time} DESC"]
    if v.unique_id is not None:
        order.append(ident(v.unique_id))
    limit = max(1, min(int(limit), MAX_ROWS))
    sql = (
        f"SELECT {', '.join(cols)} FROM {v.table_sql(d)} WHERE {recent} "
        f"ORDER BY {', '.join(order)} LIMIT {limit}"
    )
    return Statement(sql, b.params)


def recent_delay(d: Dialect, v: LandingView, scope: Scope, last_commit_iso: str) -> Statement:
    """Ingest-to-visible p50/p99 (ms) of the rows committed in the
    :data:`RECENT_WINDOW_S` seconds before ``last_commit_iso`` (needs a send time)."""
    if v.send_time is None:
        raise ValueError(f"{v.table} has no send-time column: no ingest-to-visible")
    b = Binder()
    delay = d.diff_ms(ident(v.send_time), d.commit_time)
    recent = _recent(d, b, v, scope, last_commit_iso)
    sql = (
        f"SELECT count(*) AS ROWS, {d.approx_quantile(delay, 0.5)} AS DELAY_P50_MS, "
        f"{d.approx_quantile(delay, 0.99)} AS DELAY_P99_MS FROM {v.table_sql(d)} WHERE {recent}"
    )
    return Statement(sql, b.params)
