"""The "Run" queries over the monitor's metrics table (one row per worker per window).

The table's columns are read from the target (``information_schema``) and each figure
the page draws is looked up under the names the monitor may give it
(:data:`CONCEPTS`), so a column the monitor adds later shows up, and one it does not
write is left out of the page, never a failed query. When the monitor writes fleet-wide
rows (``IS_FLEET``, with percentiles from merged histograms) the page charts those;
otherwise it aggregates the workers' windows per time bucket on the target.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model import METRICS_TABLE_NAME
from .dialect import Dialect, sql_string

__all__ = [
    "CONCEPTS",
    "MetricsColumns",
    "fleet_series",
    "landed",
    "landed_count",
    "runs",
    "totals",
    "workers",
]

TABLE = METRICS_TABLE_NAME

#: figure -> the column names it may have, preferred first.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "run": ("RUN_ID",),
    "worker": ("WORKER_ID",),
    "start": ("WINDOW_START",),
    "end": ("WINDOW_END",),
    "rows": ("ROWS_APPENDED", "ROWS_SENT", "ROWS"),
    "bytes": ("BYTES_APPENDED", "BYTES_SENT", "BYTES"),
    "mb_s": ("MB_PER_SEC", "MB_PER_S", "MBPS"),
    "rows_s": ("ROWS_PER_SEC", "ROWS_PER_S"),
    "target_bps": ("TARGET_BPS", "TARGET_BYTES_PER_SEC"),
    "workers": ("WORKERS_REPORTING", "WORKERS"),
    "ack_p50": ("ACK_P50_MS", "ACK_LATENCY_P50_MS"),
    "ack_p99": ("ACK_P99_MS", "ACK_LATENCY_P99_MS"),
    "visible_p50": ("INGEST_TO_VISIBLE_P50_MS", "VISIBLE_P50_MS", "INGEST_VISIBLE_P50_MS"),
    "visible_p99": ("INGEST_TO_VISIBLE_P99_MS", "VISIBLE_P99_MS", "INGEST_VISIBLE_P99_MS"),
    "behind_p99": ("BEHIND_SCHEDULE_P99_MS",),
    "behind_max": ("BEHIND_SCHEDULE_MAX_MS", "BEHIND_SCHEDULE_MS"),
    "resends": ("RESENT_BATCHES", "RESENDS", "RESENT_ROWS"),
    "retries": ("SDK_RETRIES", "RETRIES"),
    "errors": ("ERRORS", "ERROR_COUNT"),
    "cpu_mcores": ("CPU_MILLICORES", "CPU_MCORES"),
    "cpu_pct": ("CPU_PCT", "CPU_PERCENT"),
    "rss": ("RSS_MIB", "PEAK_RSS_MIB"),
    "unacked": ("UNACKED_ROWS", "IN_FLIGHT_ROWS"),
    "in_flight": ("IN_FLIGHT_BYTES",),
    "is_summary": ("IS_SUMMARY",),
    "is_fleet": ("IS_FLEET",),
    "state": ("STATE", "WORKER_STATE", "STATUS"),
    "error": ("ERROR", "ERROR_MESSAGE", "LAST_ERROR"),
    "raw": ("RAW",),
}

#: (concept, label on the page) of the per-window series, in drawing order.
SERIES = (
    ("mb_s", "MB/s"), ("rows_s", "rows/s"),
    ("workers", "workers reporting"), ("ack_p50", "ack p50 ms"), ("ack_p99", "ack p99 ms"),
    ("visible_p50", "ingest-to-visible p50 ms"), ("visible_p99", "ingest-to-visible p99 ms"),
    ("behind_p99", "behind schedule p99 ms"), ("behind_max", "behind schedule max ms"),
    ("resends", "resends"), ("retries", "SDK retries"), ("errors", "errors"),
)  # fmt: skip
#: How a per-worker figure combines into a fleet one when there are no fleet rows.
_FLEET_AGG = {
    "mb_s": "sum", "rows_s": "sum", "ack_p50": "max", "ack_p99": "max",
    "visible_p50": "max", "visible_p99": "max", "behind_p99": "max", "behind_max": "max",
    "resends": "sum", "retries": "sum", "errors": "sum",
}  # fmt: skip
#: (concept, label) of the per-worker table's figures.
WORKER_FIGURES = (
    ("mb_s", "MB/s"), ("rows_s", "rows/s"), ("ack_p50", "ack p50 ms"), ("ack_p99", "ack p99 ms"),
    ("cpu_mcores", "CPU mcores"), ("rss", "RSS MiB"), ("unacked", "unacked rows"),
    ("in_flight", "in flight bytes"), ("resends", "resends"), ("retries", "SDK retries"),
    ("errors", "errors"),
)  # fmt: skip
#: (concept, column of the totals query) summed over the run.
TOTALS = (
    ("rows", "ROWS"), ("bytes", "BYTES"), ("resends", "RESENDS"), ("retries", "SDK_RETRIES"),
    ("errors", "ERRORS"),
)  # fmt: skip
REQUIRED = ("run", "worker", "end")
#: The per-worker table's column of rows unacknowledged when the worker ended.
UNACKED_AT_END = "unacked rows at end"


@dataclass(frozen=True)
class MetricsColumns:
    """Which figures the metrics table holds, and under what column name."""

    names: dict[str, str]

    @classmethod
    def resolve(cls, columns: Iterable[str]) -> MetricsColumns:
        have = {c.upper() for c in columns}
        found = {}
        for concept, candidates in CONCEPTS.items():
            for c in candidates:
                if c in have:
                    found[concept] = c
                    break
        return cls(found)

    def missing_required(self) -> list[str]:
        return [CONCEPTS[c][0] for c in REQUIRED if c not in self.names]

    def has(self, concept: str) -> bool:
        return concept in self.names

    def col(self, concept: str) -> str:
        return self.names[concept]

    def flag(self, concept: str) -> str:
        """``coalesce(<boolean column>, FALSE)``, or FALSE when the table has none."""
        return f"coalesce({self.names[concept]}, FALSE)" if concept in self.names else "FALSE"

    def error_expr(self, d: Dialect) -> str:
        if self.has("error"):
            return f"CAST({self.col('error')} AS VARCHAR)"
        if self.has("raw"):
            return d.json_text(self.col("raw"), "error")
        return "CAST(NULL AS VARCHAR)"


def _run(run_id: str) -> str:
    return f"RUN_ID = {sql_string(run_id)}"


def runs(d: Dialect, limit: int = 50) -> str:
    return (
        f"SELECT RUN_ID, max(WINDOW_END) AS LAST_WINDOW, count(*) AS METRIC_ROWS FROM {TABLE} "
        f"GROUP BY RUN_ID ORDER BY LAST_WINDOW DESC LIMIT {int(limit)}"
    )


def window_seconds(d: Dialect, run_id: str, m: MetricsColumns) -> str:
    """The workers' typical window length (s), to bucket their windows into fleet ones."""
    if not m.has("start"):
        return "SELECT CAST(NULL AS DOUBLE) AS WINDOW_S"
    return (
        f"SELECT avg({d.diff_ms(m.col('start'), m.col('end'))}) / 1000.0 AS WINDOW_S "
        f"FROM {TABLE} WHERE {_run(run_id)} AND NOT {m.flag('is_summary')} "
        f"AND NOT {m.flag('is_fleet')}"
    )


def fleet_series(
    d: Dialect, run_id: str, m: MetricsColumns, bucket_s: int, *, fleet_rows: bool = True
) -> str:
    """One row per window of the whole fleet: ``T`` and one column per figure present.

    From the monitor's fleet rows (``fleet_rows`` and the table has ``IS_FLEET``), else
    the workers' windows summed (rates, counts) or maxed (latencies: the worst worker)
    per ``bucket_s`` bucket.
    """
    series = [(c, label) for c, label in SERIES if m.has(c)]
    base = f"FROM {TABLE} WHERE {_run(run_id)} AND NOT {m.flag('is_summary')}"
    if fleet_rows and m.has("is_fleet"):
        listed = ", ".join(f'{m.col(c)} AS "{label}"' for c, label in series)
        return (
            f"SELECT {m.col('end')} AS T{', ' + listed if listed else ''} {base} "
            f"AND {m.flag('is_fleet')} ORDER BY T"
        )
    t = d.bucket(m.col("end"), bucket_s)
    cols = [f'count(DISTINCT {m.col("worker")}) AS "workers reporting"']
    for c, label in series:
        if c != "workers":
            cols.append(f'{_FLEET_AGG[c]}({m.col(c)}) AS "{label}"')
    return (
        f"SELECT {t} AS T, {', '.join(cols)} {base} AND NOT {m.flag('is_fleet')} "
        f"GROUP BY {t} ORDER BY T"
    )


def workers(d: Dialect, run_id: str, m: MetricsColumns, stale_s: float) -> str:
    """One row per worker: its latest window's figures and its state, slowest first.

    State: the state the monitor wrote on the worker's summary row, else on its latest
    row, if it is final (``done``/``failed``: its summary came; ``running`` says nothing
    about a worker that was killed, so the windows decide then); else from a summary row
    (``failed`` when it carries an error, else ``done``) if the table has them; else
    from the windows: a worker whose last window ended ``stale_s`` before the fleet's
    last one stopped early (``failed`` if that window counted errors, else
    ``missing``); once the fleet's last window is ``stale_s`` old the run is over
    (``done``); otherwise ``running``.
    """
    w, end = m.col("worker"), m.col("end")
    figures = [(c, label) for c, label in WORKER_FIGURES if m.has(c)]
    # the summary row's state first: it ends where the last window does (a tie for max_by)
    state = f"CAST({m.col('state')} AS VARCHAR)" if m.has("state") else "NULL"
    own_state = (
        f"lower(coalesce(max(CASE WHEN {m.flag('is_summary')} THEN {state} END), "
        f"max_by({state}, {m.col('end')})))"
    )
    windows = f"FROM {TABLE} WHERE {_run(run_id)} AND NOT {m.flag('is_fleet')}"
    latest_cols = ", ".join(f'L.{m.col(c)} AS "{label}"' for c, label in figures)
    errors = f"coalesce(L.{m.col('errors')}, 0) > 0" if m.has("errors") else "FALSE"
    stale = d.minus_seconds("H.LAST_END", int(stale_s))
    over = f"H.LAST_END < {d.minus_seconds(d.now(), int(stale_s))}"
    return (
        f"WITH LATEST AS (SELECT * {windows} AND NOT {m.flag('is_summary')} "
        f"QUALIFY row_number() OVER (PARTITION BY {w} ORDER BY {end} DESC) = 1), "
        f"ENDS AS (SELECT {w} AS WID, {own_state} AS OWN_STATE, "
        f"max(CASE WHEN {m.flag('is_summary')} THEN 1 ELSE 0 END) AS DONE, "
        f"max(CASE WHEN {m.flag('is_summary')} THEN {m.error_expr(d)} END) AS ERROR, "
        f"max(CASE WHEN {m.flag('is_summary')} THEN {unacked_at_end(d, m)} END) "
        f'AS "{UNACKED_AT_END}" {windows} GROUP BY {w}), '
        f"HORIZON AS (SELECT max({end}) AS LAST_END {windows}) "
        "SELECT E.WID AS WORKER_ID, "
        "CASE WHEN E.OWN_STATE IN ('done', 'failed', 'missing') THEN E.OWN_STATE "
        "WHEN E.ERROR IS NOT NULL THEN 'failed' WHEN E.DONE = 1 THEN 'done' "
        f"WHEN L.{end} IS NULL OR L.{end} < {stale} THEN "
        f"CASE WHEN {errors} THEN 'failed' ELSE 'missing' END "
        f"WHEN {over} THEN 'done' ELSE 'running' END AS STATE"
        f'{", " + latest_cols if latest_cols else ""}, E."{UNACKED_AT_END}", '
        f"E.DONE = 1 AS HAS_SUMMARY, L.{end} AS LAST_WINDOW_END, E.ERROR "
        f"FROM ENDS E LEFT JOIN LATEST L ON L.{w} = E.WID CROSS JOIN HORIZON H "
        + ('ORDER BY "MB/s" ASC NULLS FIRST, WORKER_ID' if m.has("mb_s") else "ORDER BY WORKER_ID")
    )


def unacked_at_end(d: Dialect, m: MetricsColumns) -> str:
    """Rows a worker never saw acknowledged, from its summary line (``unacked_rows``,
    kept in RAW): the windows carry in-flight bytes, not rows."""
    if m.has("raw"):
        return f"CAST({d.json_text(m.col('raw'), 'unacked_rows')} AS BIGINT)"
    return "CAST(NULL AS BIGINT)"


def target_bps(d: Dialect, run_id: str, m: MetricsColumns) -> str:
    """The per-worker target (bytes/s) if the workers' lines carry it (``target_bps``)."""
    if m.has("target_bps"):
        expr = f"max({m.col('target_bps')})"
    elif m.has("raw"):
        expr = f"max(CAST({d.json_text(m.col('raw'), 'target_bps')} AS DOUBLE))"
    else:
        expr = "CAST(NULL AS DOUBLE)"
    where = f"{_run(run_id)} AND NOT {m.flag('is_fleet')}"
    return f"SELECT {expr} AS TARGET_BPS FROM {TABLE} WHERE {where}"


def totals(d: Dialect, run_id: str, m: MetricsColumns) -> str:
    """The run's totals: per worker its summary row when it wrote one, else the sum of
    its windows; ``FROM_SUMMARIES`` is true once every worker has a summary."""
    summed = [(c, label) for c, label in TOTALS if m.has(c)]
    summary = m.flag("is_summary")
    per = [f"max(CASE WHEN {summary} THEN 1 ELSE 0 END) AS HAS_SUMMARY"]
    for c, label in summed:
        per.append(f"sum(CASE WHEN {summary} THEN {m.col(c)} END) AS S_{label}")
        per.append(f"sum(CASE WHEN NOT {summary} THEN {m.col(c)} END) AS W_{label}")
    if m.has("start"):
        per.append(f"min({m.col('start')}) AS FIRST_WINDOW")
    per.append(f"max({m.col('end')}) AS LAST_WINDOW")
    out = ["count(*) AS WORKERS", "min(HAS_SUMMARY) = 1 AS FROM_SUMMARIES"]
    for _, label in summed:
        out.append(f"sum(CASE WHEN HAS_SUMMARY = 1 THEN S_{label} ELSE W_{label} END) AS {label}")
    if m.has("start"):
        out.append("min(FIRST_WINDOW) AS FIRST_WINDOW")
    out.append("max(LAST_WINDOW) AS LAST_WINDOW")
    return (
        f"WITH PER AS (SELECT {', '.join(per)} FROM {TABLE} WHERE {_run(run_id)} "
        f"AND NOT {m.flag('is_fleet')} GROUP BY {m.col('worker')}) "
        f"SELECT {', '.join(out)} FROM PER"
    )


def landed_count(run_id: str, sales_table: str) -> str:
    """Rows of the run in the landing table (cheap: no row is compared with another)."""
    return f"SELECT count(*) AS LANDED FROM {sales_table} WHERE {_run(run_id)}"


def landed(run_id: str, sales_table: str) -> str:
    """Rows of the run in the landing table, and how many are duplicates (a distinct
    count of the run's TXIDs: it holds every one of them at once)."""
    return (
        "SELECT count(*) AS LANDED, count(*) - count(DISTINCT TXID) AS DUPLICATES, "
        f"count(DISTINCT TXID) AS DISTINCT_TXIDS FROM {sales_table} WHERE {_run(run_id)}"
    )
