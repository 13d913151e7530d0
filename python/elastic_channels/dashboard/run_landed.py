"""The Run page's landed rows: how many of the run's rows are in the workload's table,
and once the run is over how many landed twice and how many never landed (by the
workload's run-id and unique-id columns; unknown, and said, without them)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..workload.types import VARCHAR
from . import metrics_sql as m
from .common import load, workload
from .landing import LandingView, ident
from .source import DataSource

__all__ = ["DISTINCT_AUTO_ROWS", "METRIC_COLUMNS", "show_landed"]

#: Up to this many landed rows, duplicates and lost are counted once the run is over:
#: that needs a distinct count of the run's unique ids (resort sales' TXIDs), ~0.4 s for
#: 2M rows on 2 cores and ~3 s for 20M (benches/bench_dashboard.py); above it, a toggle
#: asks for it.
DISTINCT_AUTO_ROWS = 2_000_000
#: Metrics per row of the page (4: "8,209,768" fits at 1400 px, not at 6).
METRIC_COLUMNS = 4


def _lost_unknown(cols: m.MetricsColumns, workers: pd.DataFrame) -> str:
    """Why lost cannot be known yet: which workers sent no summary (their whole-run
    generated-row count), or that the table has no summary rows at all."""
    if not cols.has("is_summary"):
        return "the workers' summaries are not in the metrics table"
    pending = workers[~workers["HAS_SUMMARY"].fillna(False).astype(bool)]
    ids = ", ".join(str(int(i)) for i in pending["WORKER_ID"])
    return f"no summary yet from worker(s) {ids} (still running, or ended without one)"


def _reporting(v: LandingView, workers: pd.DataFrame) -> m.WorkerFilter | None:
    """The rows of the workers the metrics table knows (a worker that started late may
    have rows landed before its first window is reported), by the workload's worker-id
    column, else its unique id's prefix; None when the rows do not say whose they are."""
    ids = tuple(int(i) for i in workers["WORKER_ID"])
    if v.worker_id is not None:
        text = v.type_of(v.worker_id).kind == VARCHAR
        return m.WorkerFilter(ids, column=ident(v.worker_id), text=text)
    if v.unique_id is not None:
        return m.WorkerFilter(ids, unique_id=ident(v.unique_id))
    return None


def show_landed(
    src: DataSource,
    run_id: str,
    cols: m.MetricsColumns,
    totals: pd.Series,
    workers: pd.DataFrame,
    over: bool,
) -> None:
    """Landed (a count) in the workload's table, and duplicates and lost (a distinct
    count of its unique ids) once the run is over, when it is small enough to count
    them unasked or when asked.

    While workers are sending, landed counts the rows committed by the time up to which
    every one of them has reported its windows (``HORIZON``), of the workers the
    metrics table knows (by the workload's worker-id column, when it has one): rows that
    landed by then were appended in windows the totals hold, so Landed never exceeds
    Rows appended, even while a worker that started late has not reported yet."""
    shown = st.columns(METRIC_COLUMNS)
    try:
        v = workload()
    except ValueError as e:  # its file changed since the dashboard started
        shown[0].metric("Landed", "unknown")
        st.caption(f"Landed is unknown: the workload cannot be read: {e}")
        return
    if v.run_id is None:
        shown[0].metric("Landed", "unknown")
        st.caption(
            f"Landed, duplicates and lost are unknown: {v.table} (workload {v.workload}) has "
            "no run-id column, so its rows cannot be told apart by run."
        )
        return
    table, run_col = v.table_sql(src.dialect), ident(v.run_id)
    horizon = totals.get("HORIZON")
    # Totals read before the last summary came, and states after it, see a run that is
    # over with totals that are not yet its own: count up to their horizon then too, or
    # Landed would count rows the totals do not hold (the page reads again at once).
    early = not totals.get("FROM_SUMMARIES") and bool(workers["HAS_SUMMARY"].fillna(False).all())
    live = not over or early
    upto = horizon.isoformat() if isinstance(horizon, pd.Timestamp) and live else None
    mine = _reporting(v, workers) if upto is not None else None
    stmt = m.landed_count(src.dialect, run_id, table, upto, run_column=run_col, workers=mine)
    count = int(load(src, stmt)["LANDED"].iloc[0])
    help_landed = f"the run's rows in {v.table}"
    if upto is not None:
        help_landed += f", committed by {horizon:%H:%M:%S} UTC"
        st.caption(
            f"Landed: the rows committed by {horizon:%H:%M:%S} UTC, up to where every "
            "sending worker has reported; duplicates and lost are counted once the run "
            "is over."
        )
    if v.unique_id is None:
        shown[0].metric("Landed", f"{count:,}", help=help_landed)
        if upto is None:
            st.caption(
                f"Duplicates and lost are unknown: {v.table} (workload {v.workload}) has no "
                "unique-id column, so its rows cannot be told apart."
            )
        return
    if upto is not None or (
        count > DISTINCT_AUTO_ROWS
        and not st.toggle(
            f"Count duplicates and lost (compares the run's {count:,} {v.unique_id} values: "
            "seconds on tens of millions of rows)",
            key="count_landed",
        )
    ):
        shown[0].metric("Landed", f"{count:,}", help=help_landed)
        if upto is None:
            st.caption(
                f"Duplicates and lost are counted on request above {DISTINCT_AUTO_ROWS:,} rows."
            )
        return
    got = load(src, m.landed(run_id, table, ident(v.unique_id), run_col)).iloc[0]
    shown[0].metric("Landed", f"{int(got['LANDED']):,}", help=help_landed)
    shown[1].metric("Duplicates", f"{int(got['DUPLICATES']):,}", help="rows landed twice")
    if totals.get("FROM_SUMMARIES") and "ROWS" in totals:
        lost = max(0, int(totals["ROWS"] or 0) - int(got["DISTINCT_TXIDS"]))
        shown[2].metric(
            "Lost", f"{lost:,}", help="rows the workers generated (their summaries) that "
            "did not land"
        )  # fmt: skip
    else:
        shown[2].metric("Lost", "unknown")
        st.caption(f"Lost is unknown: {_lost_unknown(cols, workers)}.")
