"""The Run page's landed rows: how many of the run's rows are in the workload's table
(never more than Rows appended: see :func:`bounded_parts`), and once the run is over
how many landed twice and how many never landed (by the workload's run-id and unique-id
columns; unknown, and said, without them)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..workload.types import VARCHAR
from . import metrics_sql as m
from .common import load, workload
from .landing import LandingView, ident
from .source import DataSource

__all__ = ["DISTINCT_AUTO_ROWS", "METRIC_COLUMNS", "bounded_parts", "show_landed"]

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


def _filter(v: LandingView, ids: list[int]) -> m.WorkerFilter | None:
    """The rows of the workers ``ids``, by the workload's worker-id column, else its
    unique id's prefix; None when the rows do not say whose they are."""
    if v.worker_id is not None:
        text = v.type_of(v.worker_id).kind == VARCHAR
        return m.WorkerFilter(tuple(ids), column=ident(v.worker_id), text=text)
    if v.unique_id is not None:
        return m.WorkerFilter(tuple(ids), unique_id=ident(v.unique_id))
    return None


def _ids(df: pd.DataFrame) -> list[int]:
    return [int(i) for i in df["WORKER_ID"]]


def _iso(t: pd.Timestamp) -> str:
    return pd.Timestamp(t).isoformat()


def bounded_parts(
    v: LandingView, workers: pd.DataFrame, stale_s: float
) -> tuple[list[m.LandedPart], str]:
    """The landed rows that Rows appended holds, while some worker has no summary
    (``workers``: read before the totals, so they hold at least what it says), and how
    the page says it: every row of a worker whose summary is in (they count no more than
    it generated), and a worker's without one committed by its last window's end (rows
    that landed by then were appended in windows the totals sum). The workers still
    sending share the earliest of their ends (one term, however many they are); one
    that stopped ``stale_s`` before the others keeps its own. When the rows do not say
    whose they are, every row committed by the earliest end of a worker without one."""
    has = workers["HAS_SUMMARY"].fillna(False).astype(bool)
    pending = workers[~has & workers["LAST_WINDOW_END"].notna()]
    if pending.empty:
        pending = workers[workers["LAST_WINDOW_END"].notna()]
    ends = pending["LAST_WINDOW_END"]
    if ends.empty:
        return [], "none yet: no worker has reported a window"
    fleet_end = ends.max()
    first = ends.min()
    if _filter(v, [0]) is None:
        said = (
            f"the rows committed by {first:%H:%M:%S} UTC, the earliest last window of a "
            "worker without a summary"
        )
        return [m.LandedPart(None, _iso(first))], said
    parts = [m.LandedPart(_filter(v, _ids(workers[has])))] if has.any() else []
    current = pending[ends >= fleet_end - pd.Timedelta(seconds=stale_s)]
    horizon = current["LAST_WINDOW_END"].min()
    parts.append(m.LandedPart(_filter(v, _ids(current)), _iso(horizon)))
    said = (
        f"the rows committed by {horizon:%H:%M:%S} UTC of the workers still sending, up to "
        "where every one of them has reported"
    )
    stopped = pending.drop(current.index)
    for _, w in stopped.iterrows():
        parts.append(m.LandedPart(_filter(v, [int(w["WORKER_ID"])]), _iso(w["LAST_WINDOW_END"])))
    if not stopped.empty:
        said += f"; of worker(s) {', '.join(map(str, _ids(stopped)))}, up to its last window"
    if has.any():
        said += "; every row of the workers whose summary is in"
    return parts, said


def show_landed(
    src: DataSource,
    run_id: str,
    cols: m.MetricsColumns,
    totals: pd.Series,
    workers: pd.DataFrame,
    stale_s: float,
    over: bool,
) -> None:
    """Landed (a count) in the workload's table, and duplicates and lost (a distinct
    count of its unique ids) once the run is over, when it is small enough to count
    them unasked or when asked.

    Landed never exceeds Rows appended: until every worker's summary is in, it counts
    only the rows the totals hold (:func:`bounded_parts`), over or not: a worker killed
    before its summary had rows land that no window of its reported."""
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
    complete = bool(totals.get("FROM_SUMMARIES")) and bool(
        workers["HAS_SUMMARY"].fillna(False).astype(bool).all()
    )
    help_landed = f"the run's rows in {v.table}"
    if complete:
        stmt = m.landed_count(src.dialect, run_id, table, run_column=run_col)
    else:
        parts, said = bounded_parts(v, workers, stale_s)
        stmt = m.landed_parts(src.dialect, run_id, table, parts, run_column=run_col)
        help_landed += f": {said}"
        st.caption(
            f"Landed: {said}, so that it never counts a row Rows appended does not; "
            "lost is counted once every worker's summary is in."
        )
    count = int(load(src, stmt)["LANDED"].iloc[0])
    bounded = not complete
    if v.unique_id is None:
        shown[0].metric("Landed", f"{count:,}", help=help_landed)
        if over:
            st.caption(
                f"Duplicates and lost are unknown: {v.table} (workload {v.workload}) has no "
                "unique-id column, so its rows cannot be told apart."
            )
        return
    if not over or (
        count > DISTINCT_AUTO_ROWS
        and not st.toggle(
            f"Count duplicates and lost (compares the run's {count:,} {v.unique_id} values: "
            "seconds on tens of millions of rows)",
            key="count_landed",
        )
    ):
        shown[0].metric("Landed", f"{count:,}", help=help_landed)
        if over:
            st.caption(
                f"Duplicates and lost are counted on request above {DISTINCT_AUTO_ROWS:,} rows."
            )
        return
    got = load(src, m.landed(run_id, table, ident(v.unique_id), run_col)).iloc[0]
    landed = count if bounded else int(got["LANDED"])
    shown[0].metric("Landed", f"{landed:,}", help=help_landed)
    shown[1].metric("Duplicates", f"{int(got['DUPLICATES']):,}", help="rows landed twice")
    if complete and "ROWS" in totals:
        lost = max(0, int(totals["ROWS"] or 0) - int(got["DISTINCT_TXIDS"]))
        shown[2].metric(
            "Lost", f"{lost:,}", help="rows the workers generated (their summaries) that "
            "did not land"
        )  # fmt: skip
    else:
        shown[2].metric("Lost", "unknown")
        st.caption(f"Lost is unknown: {_lost_unknown(cols, workers)}.")
