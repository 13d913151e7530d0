"""The "Run" queries over the monitor's metrics table (one row per worker per window,
one per fleet window, one summary row per worker that finished).

Each function returns a :class:`~.statement.Statement` (the run id bound, never written
into the text). When the monitor writes fleet-wide rows (``IS_FLEET``, with percentiles
from merged histograms) the page charts those; otherwise it aggregates the workers'
windows per time bucket on the target. The per-worker figures, rates and states and the
run's totals are ``worker_sql``'s (re-exported here); the landed rows are counted in the
workload's landing table (:func:`landed_count`, :func:`landed`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import METRICS_TABLE_NAME, TXID_SEPARATOR
from .dialect import Dialect
from .metrics_columns import (
    CONCEPTS,
    FLEET_AGG,
    SERIES,
    TARGET_LABEL,
    WARMUP_LABEL,
    MetricsColumns,
)
from .statement import Binder, Statement
from .worker_sql import totals, unacked_at_end, workers

__all__ = [
    "CONCEPTS",
    "LandedPart",
    "MetricsColumns",
    "WorkerFilter",
    "fleet_series",
    "landed",
    "landed_count",
    "landed_parts",
    "run_span",
    "runs",
    "target_bps",
    "totals",
    "unacked_at_end",
    "window_seconds",
    "workers",
]

TABLE = METRICS_TABLE_NAME


def _run(b: Binder, run_id: str) -> str:
    return f"RUN_ID = {b(run_id)}"


def runs(d: Dialect, limit: int = 50) -> Statement:
    return Statement(
        f"SELECT RUN_ID, max(WINDOW_END) AS LAST_WINDOW, count(*) AS METRIC_ROWS FROM {TABLE} "
        f"GROUP BY RUN_ID ORDER BY LAST_WINDOW DESC LIMIT {int(limit)}"
    )


def window_seconds(d: Dialect, run_id: str, m: MetricsColumns) -> Statement:
    """The workers' typical window length (s), to bucket their windows into fleet ones."""
    if not m.has("start"):
        return Statement("SELECT CAST(NULL AS DOUBLE) AS WINDOW_S")
    b = Binder()
    sql = (
        f"SELECT avg({d.diff_ms(m.col('start'), m.col('end'))}) / 1000.0 AS WINDOW_S "
        f"FROM {TABLE} WHERE {_run(b, run_id)} AND NOT {m.flag('is_summary')} "
        f"AND NOT {m.flag('is_fleet')}"
    )
    return Statement(sql, b.params)


def fleet_series(
    d: Dialect, run_id: str, m: MetricsColumns, bucket_s: int, *, fleet_rows: bool = True
) -> Statement:
    """One row per window of the whole fleet: ``T`` and one column per figure present.

    From the monitor's fleet rows (``fleet_rows`` and the table has ``IS_FLEET``; a
    window no worker reported in is left out, and so is a partial window that covers
    less than half its length: the sliver after the end of sending, whose rate reads 0
    and whose few acks are no percentile), else the workers' windows summed (rates,
    counts) or maxed (latencies: the worst worker) per ``bucket_s`` bucket.
    """
    b = Binder()
    series = [(c, label) for c, label in SERIES if m.has(c)]
    base = f"FROM {TABLE} WHERE {_run(b, run_id)} AND NOT {m.flag('is_summary')}"
    if fleet_rows and m.has("is_fleet"):
        listed = ", ".join(
            [f'{m.col(c)} AS "{label}"' for c, label in series] + _shape(m, per_row=True)
        )
        kept = f" AND coalesce({m.col('workers')}, 1) > 0" if m.has("workers") else ""
        if all(m.has(c) for c in ("partial", "start", "window_seconds")):
            covered = d.diff_ms(m.col("start"), m.col("end"))
            sliver = f"{covered} < 500 * {m.col('window_seconds')}"
            kept += f" AND NOT ({m.flag('partial')} AND coalesce({sliver}, FALSE))"
        sql = (
            f"SELECT {m.col('end')} AS T{', ' + listed if listed else ''} {base} "
            f"AND {m.flag('is_fleet')}{kept} ORDER BY T"
        )
        return Statement(sql, b.params)
    t = d.bucket(m.col("end"), bucket_s)
    cols = [f'count(DISTINCT {m.col("worker")}) AS "workers reporting"']
    for c, label in series:
        if c != "workers":
            cols.append(f'{FLEET_AGG[c]}({m.col(c)}) AS "{label}"')
    cols += _shape(m, per_row=False)
    sql = (
        f"SELECT {t} AS T, {', '.join(cols)} {base} AND NOT {m.flag('is_fleet')} "
        f"GROUP BY {t} ORDER BY T"
    )
    return Statement(sql, b.params)


def _shape(m: MetricsColumns, *, per_row: bool) -> list[str]:
    """The load shape's columns of the fleet series, those the table has: the window's
    target MB/s, 1 for a warmup window (else 0), and its start ``T0``; of a fleet row
    (``per_row``), else of a bucket of the workers' windows (their targets added up,
    warmup if any of them is)."""
    out = []
    if m.has("target_bps"):
        target = m.col("target_bps")
        out.append(f'{target if per_row else f"sum({target})"} / 1e6 AS "{TARGET_LABEL}"')
    if m.has("warmup"):
        warm = f"CASE WHEN {m.flag('warmup')} THEN 1 ELSE 0 END"
        out.append(f'{warm if per_row else f"max({warm})"} AS "{WARMUP_LABEL}"')
    if m.has("start"):
        start = m.col("start")
        out.append(f"{start if per_row else f'min({start})'} AS T0")
    return out


def target_bps(d: Dialect, run_id: str, m: MetricsColumns) -> Statement:
    """The per-worker target (bytes/s) if the workers' lines carry it (``target_bps``)."""
    if m.has("target_bps"):
        expr = f"max({m.col('target_bps')})"
    elif m.has("raw"):
        expr = f"max(CAST({d.json_text(m.col('raw'), 'target_bps')} AS DOUBLE))"
    else:
        expr = "CAST(NULL AS DOUBLE)"
    b = Binder()
    where = f"{_run(b, run_id)} AND NOT {m.flag('is_fleet')}"
    return Statement(f"SELECT {expr} AS TARGET_BPS FROM {TABLE} WHERE {where}", b.params)


def landed_count(
    d: Dialect,
    run_id: str,
    table: str,
    horizon_iso: str | None = None,
    run_column: str = "RUN_ID",
    workers: WorkerFilter | None = None,
) -> Statement:
    """Rows of the run in the landing table ``table`` (SQL, quoted as needed; its run
    id in ``run_column``, SQL too): cheap, no row is compared with another; with
    ``horizon_iso``, those committed by then; with ``workers``, those of its workers."""
    b = Binder()
    where = f"{run_column} = {b(run_id)}"
    if horizon_iso is not None:
        where += f" AND {d.commit_time} <= {d.timestamp(b, horizon_iso)}"
    if workers is not None and workers.ids:
        where += f" AND {workers.where(b, run_id)}"
    return Statement(f"SELECT count(*) AS LANDED FROM {table} WHERE {where}", b.params)


@dataclass(frozen=True)
class LandedPart:
    """Some of a run's landed rows: those of ``workers`` (None: of any worker) committed
    by ``upto_iso`` (None: whenever)."""

    workers: WorkerFilter | None = None
    upto_iso: str | None = None


def landed_parts(
    d: Dialect,
    run_id: str,
    table: str,
    parts: list[LandedPart],
    run_column: str = "RUN_ID",
) -> Statement:
    """Rows of the run in the landing table ``table`` that are in any of ``parts`` (each
    row counted once; no part: none)."""
    b = Binder()
    where = f"{run_column} = {b(run_id)}"
    terms = []
    for p in parts:
        conds = []
        if p.workers is not None:
            conds.append(p.workers.where(b, run_id) if p.workers.ids else "FALSE")
        if p.upto_iso is not None:
            conds.append(f"{d.commit_time} <= {d.timestamp(b, p.upto_iso)}")
        terms.append(f"({' AND '.join(conds) or 'TRUE'})")
    where += f" AND ({' OR '.join(terms) or 'FALSE'})"
    return Statement(f"SELECT count(*) AS LANDED FROM {table} WHERE {where}", b.params)


@dataclass(frozen=True)
class WorkerFilter:
    """Rows of some workers: by a worker-id column (``column``, SQL; ``text``: it is a
    VARCHAR), else by the unique id's ``<run_id>-<worker_id>-`` prefix (``unique_id``)."""

    ids: tuple[int, ...]
    column: str | None = None
    text: bool = False
    unique_id: str | None = None

    def where(self, b: Binder, run_id: str) -> str:
        if self.column is not None:
            values = [str(i) if self.text else int(i) for i in self.ids]
            return f"{self.column} IN ({', '.join(b(v) for v in values)})"
        if self.unique_id is None:
            raise ValueError("a worker filter needs a worker-id or a unique-id column")
        prefixes = [f"{run_id}{TXID_SEPARATOR}{int(i)}{TXID_SEPARATOR}" for i in self.ids]
        col = self.unique_id
        return "(" + " OR ".join(f"left({col}, {len(p)}) = {b(p)}" for p in prefixes) + ")"


def landed(
    run_id: str, table: str, unique_id: str = "TXID", run_column: str = "RUN_ID"
) -> Statement:
    """Rows of the run in the landing table, and how many are duplicates (a distinct
    count of the run's unique ids, ``unique_id`` (SQL): it holds every one at once)."""
    b = Binder()
    sql = (
        f"SELECT count(*) AS LANDED, count(*) - count(DISTINCT {unique_id}) AS DUPLICATES, "
        f"count(DISTINCT {unique_id}) AS DISTINCT_TXIDS FROM {table} "
        f"WHERE {run_column} = {b(run_id)}"
    )
    return Statement(sql, b.params)


def run_span(d: Dialect, run_id: str, m: MetricsColumns) -> Statement:
    """When the run's windows began and ended (``FIRST_WINDOW``, ``LAST_WINDOW``): the
    span its rows were sent in, for a landing table that does not say whose row it is."""
    b = Binder()
    first = m.col("start") if m.has("start") else m.col("end")
    sql = (
        f"SELECT min({first}) AS FIRST_WINDOW, max({m.col('end')}) AS LAST_WINDOW "
        f"FROM {TABLE} WHERE {_run(b, run_id)}"
    )
    return Statement(sql, b.params)
