"""The Run page's per-worker queries over the metrics table: each worker's run totals,
rate and state (:func:`workers`), and the fleet's totals (:func:`totals`).

A worker's rate is the run's, defined once (as ``measures.run_throughput`` defines it
for ``run``'s reports): the bytes (rows) acknowledged over its sending window, from its
first append to the end of sending (its summary's ``send_start``/``send_end`` once it
finished; while it runs, its first window's ``start`` to its latest window's end). The
fleet's is every worker's acknowledged bytes over the span from the first worker's
first append to the last one's end of sending. Never a window's rate: a run's first and
last windows are partial. ``metrics_sql`` re-exports both.
"""

from __future__ import annotations

from ..model import METRICS_TABLE_NAME
from .dialect import Dialect
from .metrics_columns import (
    LAST_WINDOW_FIGURES,
    RUN_COUNTS,
    TOTALS,
    UNACKED_AT_END,
    MetricsColumns,
)
from .statement import Binder, Statement

__all__ = ["totals", "unacked_at_end", "workers"]

TABLE = METRICS_TABLE_NAME


def _run(b: Binder, run_id: str) -> str:
    return f"RUN_ID = {b(run_id)}"


def _first(*exprs: str | None) -> str:
    """``coalesce`` of the expressions given (None: not in this table)."""
    present = [e for e in exprs if e]
    return present[0] if len(present) == 1 else f"coalesce({', '.join(present)})"


def _when(cond: str, expr: str) -> str:
    return f"CASE WHEN {cond} THEN {expr} END"


def _per_worker(d: Dialect, b: Binder, run_id: str, m: MetricsColumns) -> str:
    """Two CTEs, ``PER0`` and ``PER``: one row per worker (``WID``) with its run totals
    (``S_<total>`` from its summary row, ``W_<total>`` summed over its windows), its
    acknowledged bytes and rows and sending window (``ACKED_BYTES``, ``ACKED_ROWS``,
    ``SEND_START`` in epoch seconds, ``SEND_SECONDS``; warmup left out: the summary
    line's figures, or the windows after warmup), its last window's end
    (``LAST_END``), its state as the monitor wrote it (``OWN_STATE``), and from its
    summary row its error and unacknowledged rows."""
    s = m.flag("is_summary")
    w = f"NOT {s}"
    null = "CAST(NULL AS DOUBLE)"
    # acknowledged bytes and rows; what was sent where a line does not say (older lines)
    sent_bytes = f"CAST({m.col('bytes')} AS DOUBLE)" if m.has("bytes") else null
    acked_w = _first(m.raw_number(d, "acked_bytes"), sent_bytes)
    acked_s = _first(m.raw_number(d, "bytes_acked"), sent_bytes)
    acked_rows = _first(
        *(f"CAST({m.col(c)} AS DOUBLE)" for c in ("acked_rows", "rows") if m.has(c)), null
    )
    # a summary row's ROWS_ACKED is the whole run's; its line's rows_acked leaves warmup
    # out, as its bytes_acked and sending window do
    acked_rows_s = _first(m.raw_number(d, "rows_acked"), acked_rows)
    # the windows that count towards a rate: not warmup's (outside the run's figures)
    run_w = f"{w} AND NOT {m.flag('warmup')}"
    start = _first(
        m.raw_number(d, "start"),
        d.epoch_s(m.col("start")) if m.has("start") else None,
        d.epoch_s(m.col("end")),
    )
    summary_s = _first(
        m.raw_number(d, "seconds"),
        f"CAST({m.col('window_seconds')} AS DOUBLE)" if m.has("window_seconds") else None,
        null,
    )
    send_start, send_end = m.raw_number(d, "send_start"), m.raw_number(d, "send_end")
    state = f"CAST({m.col('state')} AS VARCHAR)" if m.has("state") else "NULL"
    cols = [
        f"{m.col('worker')} AS WID",
        f"max(CASE WHEN {s} THEN 1 ELSE 0 END) AS HAS_SUMMARY",
        # the summary row's state first: it ends where the last window does (a tie)
        f"lower(coalesce(max({_when(s, state)}), max_by({state}, {m.col('end')}))) AS OWN_STATE",
        f"max({_when(s, m.error_expr(d))}) AS ERROR",
        f'max({_when(s, unacked_at_end(d, m))}) AS "{UNACKED_AT_END}"',
    ]
    for c, label in TOTALS:
        if m.has(c):
            cols.append(f"sum({_when(s, m.col(c))}) AS S_{label}")
            cols.append(f"sum({_when(w, m.col(c))}) AS W_{label}")
    cols += [
        f"sum({_when(run_w, acked_w)}) AS W_ACKED_BYTES",
        f"max({_when(s, acked_s)}) AS S_ACKED_BYTES",
        f"sum({_when(run_w, acked_rows)}) AS W_ACKED_ROWS",
        f"max({_when(s, acked_rows_s)}) AS S_ACKED_ROWS",
        f"max({_when(s, summary_s)}) AS S_SECONDS",
        f"max({_when(s, send_start or null)}) AS S_SEND_START",
        f"max({_when(s, send_end or null)}) AS S_SEND_END",
        f"min({_when(run_w, start)}) AS W_SEND_START",
        f"max({_when(w, m.col('end'))}) AS LAST_END",
    ]
    if m.has("start"):
        cols.append(f"min({_when(w, m.col('start'))}) AS FIRST_WINDOW")
    per0 = (
        f"SELECT {', '.join(cols)} FROM {TABLE} WHERE {_run(b, run_id)} "
        f"AND NOT {m.flag('is_fleet')} GROUP BY {m.col('worker')}"
    )
    done = "HAS_SUMMARY = 1"
    per = (
        "SELECT *, "
        f"CASE WHEN {done} THEN coalesce(S_ACKED_BYTES, W_ACKED_BYTES) "
        "ELSE W_ACKED_BYTES END AS ACKED_BYTES, "
        f"CASE WHEN {done} THEN coalesce(S_ACKED_ROWS, W_ACKED_ROWS) "
        "ELSE W_ACKED_ROWS END AS ACKED_ROWS, "
        f"CASE WHEN {done} THEN coalesce(S_SEND_START, W_SEND_START) "
        "ELSE W_SEND_START END AS SEND_START, "
        f"CASE WHEN {done} AND S_SEND_END > S_SEND_START THEN S_SEND_END - S_SEND_START "
        f"WHEN {done} AND S_SECONDS > 0 THEN S_SECONDS "
        f"ELSE {d.epoch_s('LAST_END')} - W_SEND_START END AS SEND_SECONDS FROM PER0"
    )
    return f"PER0 AS ({per0}), PER AS ({per})"


def _rate(amount: str, seconds: str, scale: float = 1.0) -> str:
    return f"{amount} / nullif({seconds}, 0) / {scale!r}"


def workers(d: Dialect, run_id: str, m: MetricsColumns, stale_s: float) -> Statement:
    """One row per worker: its run rates (MB/s and rows/s: acknowledged over its
    sending window), its run's counts, its latest window's other figures, its state;
    slowest first.

    State: the state the monitor wrote on the worker's summary row, else on its latest
    row, if it is final (``done``/``failed``: its summary came; ``running`` says nothing
    about a worker that was killed, so the windows decide then); else from a summary row
    (``failed`` when it carries an error, else ``done``) if the table has them; else
    from the windows: a worker whose last window ended ``stale_s`` before the fleet's
    last one stopped early (``failed`` if that window counted errors, else
    ``missing``); otherwise ``running``, however old the fleet's last window: metrics
    that are late say nothing of how a worker ended (see ``run_progress``).
    """
    b = Binder()
    wcol, end = m.col("worker"), m.col("end")
    per = _per_worker(d, b, run_id, m)
    latest = (
        f"SELECT * FROM {TABLE} WHERE {_run(b, run_id)} AND NOT {m.flag('is_fleet')} "
        f"AND NOT {m.flag('is_summary')} "
        f"QUALIFY row_number() OVER (PARTITION BY {wcol} ORDER BY {end} DESC) = 1"
    )
    last_errors = f"coalesce(L.{m.col('errors')}, 0)" if m.has("errors") else "0"
    stale = d.minus_seconds("H.FLEET_END", int(stale_s))
    figures = [f'L.{m.col(c)} AS "{label}"' for c, label in LAST_WINDOW_FIGURES if m.has(c)]
    summed = {key for concept, key in TOTALS if m.has(concept)}
    counts = [
        f'CASE WHEN P.HAS_SUMMARY = 1 THEN P.S_{k} ELSE P.W_{k} END AS "{label}"'
        for k, label in RUN_COUNTS
        if k in summed
    ]
    cols = [
        "P.WID AS WORKER_ID",
        "CASE WHEN P.OWN_STATE IN ('done', 'failed', 'missing') THEN P.OWN_STATE "
        "WHEN P.ERROR IS NOT NULL THEN 'failed' WHEN P.HAS_SUMMARY = 1 THEN 'done' "
        f"WHEN L.{end} IS NULL OR L.{end} < {stale} THEN "
        f"CASE WHEN {last_errors} > 0 THEN 'failed' ELSE 'missing' END "
        "ELSE 'running' END AS STATE",
        f'{_rate("P.ACKED_BYTES", "P.SEND_SECONDS", 1e6)} AS "MB/s"',
        f'{_rate("P.ACKED_ROWS", "P.SEND_SECONDS")} AS "rows/s"',
        *figures,
        *counts,
        f'P."{UNACKED_AT_END}"',
        "P.HAS_SUMMARY = 1 AS HAS_SUMMARY",
        f"L.{end} AS LAST_WINDOW_END",
        f"{last_errors} AS LAST_WINDOW_ERRORS",
        "P.ERROR",
    ]
    sql = (
        f"WITH {per}, LATEST AS ({latest}), H AS (SELECT max(LAST_END) AS FLEET_END FROM PER) "
        f"SELECT {', '.join(cols)} FROM PER P LEFT JOIN LATEST L ON L.{wcol} = P.WID "
        'CROSS JOIN H ORDER BY "MB/s" ASC NULLS FIRST, WORKER_ID'
    )
    return Statement(sql, b.params)


def unacked_at_end(d: Dialect, m: MetricsColumns) -> str:
    """Rows a worker never saw acknowledged, from its summary line (``unacked_rows``,
    kept in RAW): the windows carry in-flight bytes, not rows."""
    if m.has("raw"):
        return f"CAST({d.json_text(m.col('raw'), 'unacked_rows')} AS BIGINT)"
    return "CAST(NULL AS BIGINT)"


def totals(d: Dialect, run_id: str, m: MetricsColumns) -> Statement:
    """The run's totals: per worker its summary row when it wrote one, else the sum of
    its windows; ``FROM_SUMMARIES`` is true once every worker has a summary.

    ``MB_PER_S`` / ``ROWS_PER_S``: the fleet's rate (see the module's doc)."""
    b = Binder()
    per = _per_worker(d, b, run_id, m)
    out = ["count(*) AS WORKERS", "min(HAS_SUMMARY) = 1 AS FROM_SUMMARIES"]
    for c, label in TOTALS:
        if m.has(c):
            out.append(
                f"sum(CASE WHEN HAS_SUMMARY = 1 THEN S_{label} ELSE W_{label} END) AS {label}"
            )
    span = "max(SEND_START + SEND_SECONDS) - min(SEND_START)"
    out += [
        "sum(ACKED_BYTES) AS ACKED_BYTES",
        "sum(ACKED_ROWS) AS ACKED_ROWS",
        f"{span} AS SEND_SECONDS",
        f"{_rate('sum(ACKED_BYTES)', span, 1e6)} AS MB_PER_S",
        f"{_rate('sum(ACKED_ROWS)', span)} AS ROWS_PER_S",
        "max(LAST_END) AS LAST_WINDOW",
    ]
    if m.has("start"):
        out.append("min(FIRST_WINDOW) AS FIRST_WINDOW")
    sql = f"WITH {per} SELECT {', '.join(out)} FROM PER"
    return Statement(sql, b.params)
