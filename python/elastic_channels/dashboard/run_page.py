"""The "Run" page (the engineer): fleet throughput, latency and health from the metrics
table, per-worker state, and the run's totals."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..results.price import CREDITS_PER_GB, CREDITS_SOURCE
from . import charts
from . import metrics_sql as m
from .ack_time_view import show_ack_time
from .common import load, pick_run, show_page
from .refresh import RunState
from .run_landed import METRIC_COLUMNS, show_landed
from .run_outcome import show_outcome
from .run_progress import from_workers, stale_after
from .source import DataSource, NoData
from .stages_view import show_stages

__all__ = ["NO_METRICS", "main"]

TITLE = "Run"
NO_METRICS = "No metrics yet for this run"
TARGET = m.TARGET_LABEL
WARMUP = m.WARMUP_LABEL
WARMUP_SAID = "warmup (outside the run's figures)"
_COUNTS = (("RESENDS", "Resends"), ("SDK_RETRIES", "SDK retries"), ("ERRORS", "Errors"))
#: Charts: (title, y axis, series labels as written by metrics_sql.SERIES)
CHARTS = (
    ("Throughput (MB/s)", "MB/s", ("MB/s", TARGET)),
    ("Rows/s", "rows/s", ("rows/s",)),
    ("Workers reporting", "workers", ("workers reporting",)),
    ("Batch ack latency (ms)", "ms", ("ack p50 ms", "ack p99 ms")),
    ("Ingest-to-visible (ms)", "ms", ("ingest-to-visible p50 ms", "ingest-to-visible p99 ms")),
    ("Behind schedule (ms)", "ms", ("behind schedule p99 ms", "behind schedule max ms")),
    ("Resends, SDK retries, errors", "count", ("resends", "SDK retries", "errors")),
)
RATE_HELP = (
    "bytes acknowledged over the sending window: from the first send to the end of "
    "sending (while the run goes on, to the latest window)"
)


def _columns(src: DataSource) -> m.MetricsColumns | None:
    cols = load(src, src.dialect.table_columns(m.TABLE))
    if cols.empty:
        st.info(
            f"{NO_METRICS}: the table {m.TABLE} does not exist yet. The monitor writes it "
            "(one row per worker per window) while a run goes on."
        )
        return None
    resolved = m.MetricsColumns.resolve(cols["COLUMN_NAME"])
    missing = resolved.missing_required()
    if missing:
        st.warning(f"{m.TABLE} lacks the columns {', '.join(missing)}: nothing to draw.")
        return None
    return resolved


def _totals(src: DataSource, run_id: str, cols: m.MetricsColumns) -> pd.Series:
    times = ("FIRST_WINDOW", "LAST_WINDOW")
    t = load(src, m.totals(src.dialect, run_id, cols), times=times).iloc[0]
    shown = st.columns(METRIC_COLUMNS)  # 4 a row: "8,209,768" fits at 1400 px, not at 6
    shown[0].metric("Workers", f"{int(t['WORKERS'])}")
    if "ROWS" in t:
        shown[1].metric("Rows appended", f"{int(t['ROWS'] or 0):,}")
    if "BYTES" in t:
        shown[2].metric("GB appended", f"{(t['BYTES'] or 0) / 1e9:,.3f}")
    if pd.notna(t.get("MB_PER_S")):
        shown[3].metric(
            "MB/s", f"{float(t['MB_PER_S']):,.1f}", help=f"The run's rate: {RATE_HELP}."
        )
    if pd.notna(t.get("BILLABLE")):  # what Snowflake bills: the values' bytes
        gb = float(t["BILLABLE"]) / 1e9
        shown = st.columns(METRIC_COLUMNS)
        shown[0].metric(
            "GB of values (billed)", f"{gb:,.3f}",
            help="Snowflake bills the bytes of the values, not the JSON keys "
            f"(docs/RESULTS.md): at {CREDITS_PER_GB} credits per GB ({CREDITS_SOURCE}).",
        )  # fmt: skip
        shown[1].metric("Ingest credits", f"{gb * CREDITS_PER_GB:,.6g}")
    counts = [(k, label) for k, label in _COUNTS if k in t]
    for col, (key, label) in zip(st.columns(METRIC_COLUMNS), counts, strict=False):
        col.metric(label, f"{int(t[key] or 0):,}")
    if t["FROM_SUMMARIES"]:
        st.caption("Totals from the workers' summaries.")
    else:
        st.caption("Totals: sums of the workers' windows so far.")
    return t


def _add_target(src: DataSource, run_id: str, cols: m.MetricsColumns, df: pd.DataFrame) -> None:
    """The target line: the schedule's per window when the rows carry it (the fleet's:
    its workers' added up), else a per-worker target times the workers reporting."""
    if TARGET in df.columns and pd.to_numeric(df[TARGET], errors="coerce").notna().any():
        st.caption(
            "Target: the load shape's, per window, for every worker the run started (a "
            "worker that died makes the fleet fall short of it)."
            + (" Shaded: warmup windows, outside the run's figures." if _warm(df).any() else "")
        )
        return
    if TARGET in df.columns:  # a column of nulls: the rows do not carry it
        del df[TARGET]
    target = _target(src, run_id, cols)
    if target > 0 and "workers reporting" in df.columns:
        df[TARGET] = target * df["workers reporting"]


def _warm(df: pd.DataFrame) -> pd.Series:
    """Which windows are warmup (False where the table does not say)."""
    if WARMUP not in df.columns:
        return pd.Series(False, index=df.index)
    return pd.to_numeric(df[WARMUP], errors="coerce").fillna(0) > 0


def _target(src: DataSource, run_id: str, cols: m.MetricsColumns) -> float:
    """Per-worker target MB/s: from the workers' lines when they carry it, else typed."""
    known = load(src, m.target_bps(src.dialect, run_id, cols))["TARGET_BPS"].iloc[0]
    default = float(known) / 1e6 if pd.notna(known) else 0.0
    return float(
        st.number_input(
            "Target MB/s per worker (0: none)",
            min_value=0.0,
            value=default,
            key=f"target_{run_id}",
            help="Drawn as target x workers reporting. Taken from the workers' lines "
            "when they carry target_bps.",
        )
    )


def _series(src: DataSource, run_id: str, cols: m.MetricsColumns, window: float | None) -> None:
    d = src.dialect
    df = pd.DataFrame()
    if cols.has("is_fleet"):
        df = load(src, m.fleet_series(d, run_id, cols, 1), times=("T",))
        how = "the monitor's fleet rows (percentiles from merged histograms)"
    if df.empty:
        bucket_s = max(1, round(window)) if window else 1
        df = load(src, m.fleet_series(d, run_id, cols, bucket_s, fleet_rows=False), times=("T",))
        how = f"the workers' windows per {bucket_s} s (rates summed, latencies: worst worker)"
    if df.empty:
        st.info(f"{NO_METRICS}: no windows yet.")
        return
    st.caption(f"Per window, from {how}. Times in UTC.")
    _add_target(src, run_id, cols, df)
    warm = df[_warm(df)] if "T0" in df.columns else df.iloc[0:0]
    grid = st.columns(2)
    drawn = 0
    for title, y_title, labels in CHARTS:
        present = [c for c in labels if c in df.columns]
        if not present:
            continue
        with grid[drawn % 2]:
            st.subheader(title)
            # a window without a figure (no ingest-to-visible read, say) is a gap, not 0
            values = df[present].apply(pd.to_numeric, errors="coerce")
            if values.isna().all().all():
                st.caption(f"No figure in any window ({', '.join(present)}).")
            elif (values.fillna(0) == 0).all().all():  # a flat line at 0 reads worse
                st.caption(f"0 in every window ({', '.join(present)}).")
            else:
                plot = df[["T"]].assign(**{c: values[c] for c in present})
                chart = charts.lines(plot, present, "window end (UTC)", y_title)
                drawing = charts.shaded(chart, warm, WARMUP_SAID) if not warm.empty else chart
                st.altair_chart(drawing, width="stretch")
        drawn += 1
    with st.expander("table"):
        shown = df.drop(columns=["T0"], errors="ignore").assign(T=charts.utc_text(df["T"]))
        shown = shown.rename(columns={"T": "window end (UTC)"})
        st.dataframe(shown, hide_index=True, key="fleet_series")


def _why(w: pd.Series) -> str:
    if isinstance(w.get("ERROR"), str) and w["ERROR"]:
        return str(w["ERROR"])
    when = w.get("LAST_WINDOW_END")
    at = f" at {when:%H:%M:%S} UTC" if isinstance(when, pd.Timestamp) else ""
    errors = w.get("LAST_WINDOW_ERRORS")
    counted = f", {int(errors)} error(s) in its last window" if pd.notna(errors) and errors else ""
    return f"it stopped reporting{at}{counted}"


#: The per-worker table's columns only the page uses.
_HIDDEN = ("LAST_WINDOW_ERRORS", "ERROR")


#: A worker's state once the run is over without its summary (see ``run_progress``).
NO_SUMMARY = "no summary"


def _workers(df: pd.DataFrame, stale_s: float, over: bool) -> None:
    st.subheader("Workers (slowest first)")
    if over:  # nothing more can come of it: not running, and not known to be done
        df = df.assign(STATE=df["STATE"].replace("running", NO_SUMMARY))
    for _, w in df[df["STATE"] == "failed"].iterrows():
        st.error(f"Worker {int(w['WORKER_ID'])} failed: {_why(w)}")
    missing = df[df["STATE"] == "missing"]
    if not missing.empty:
        ids = ", ".join(str(int(i)) for i in missing["WORKER_ID"])
        st.warning(f"No window for {stale_s:.0f} s from worker(s) {ids}.")
    ended = df[df["STATE"] == NO_SUMMARY]
    if not ended.empty:
        ids = ", ".join(str(int(i)) for i in ended["WORKER_ID"])
        st.warning(f"Worker(s) {ids} ended without a summary: how they ended is unknown.")
    shown = df.drop(columns=[c for c in _HIDDEN if c in df.columns])
    shown["LAST_WINDOW_END"] = charts.utc_text(shown["LAST_WINDOW_END"])
    st.dataframe(
        shown, hide_index=True, key="workers",
        column_config={
            "MB/s": st.column_config.NumberColumn("MB/s", format="%.2f", help=RATE_HELP),
            "rows/s": st.column_config.NumberColumn("rows/s", format="%.0f"),
            "LAST_WINDOW_END": "last window end (UTC)",
            "HAS_SUMMARY": "summary",
        },
    )  # fmt: skip
    st.caption(
        "MB/s and rows/s: the worker's whole run so far. Latency, CPU, RSS and in-flight "
        "bytes: its latest window. Resends, SDK retries and errors: its whole run."
    )


def _body(src: DataSource) -> RunState | None:
    cols = _columns(src)
    if cols is None:
        return None
    d = src.dialect
    runs = load(src, m.runs(d), times=("LAST_WINDOW",))
    if runs.empty:
        st.info(f"{NO_METRICS}: {m.TABLE} is empty.")
        return None
    run_id = pick_run(list(runs["RUN_ID"]), key="metrics_run")
    show_outcome(src, run_id)
    got = load(src, m.window_seconds(d, run_id, cols))["WINDOW_S"].iloc[0]
    window = float(got) if pd.notna(got) else None
    # three windows without a line: the worker stopped (or its lines are not getting through)
    stale_s = stale_after(window)
    # the workers before the totals: the totals then hold at least what the workers say,
    # and Landed (counted by the workers' last windows) never exceeds Rows appended
    workers = load(src, m.workers(d, run_id, cols, stale_s), times=("LAST_WINDOW_END",))
    totals = _totals(src, run_id, cols)
    landed = st.container()  # beside the totals, filled last (it scans the sales table)
    _series(src, run_id, cols, window)
    show_ack_time(src, run_id, cols)
    show_stages(src, run_id)
    state = from_workers(src, workers, window)
    _workers(workers, stale_s, state.over)
    with landed:
        show_landed(src, run_id, cols, totals, workers, stale_s, state.over)
    return state


def main() -> None:
    show_page(TITLE, "the run's metrics", _body, notice=(NoData, NO_METRICS))
