"""The Run page's "Where the ack time goes" chart: per fleet window, the SDK's mean
buffer, upload and registration/API times and the rest of the mean ack latency, stacked
(see :mod:`.ack_time`), the SDK's own processing mean as a line beside them, and the
windows the SDK throttled in marked. A table without SDK figures (older runs, workers run
with ``--no-sdk-metrics``) gets a one-line note."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from . import ack_time as a
from . import charts
from .common import load
from .metrics_columns import MetricsColumns
from .source import DataSource

__all__ = ["NO_SDK", "NO_SDK_WINDOWS", "TITLE", "chart", "show_ack_time"]

TITLE = "Where the ack time goes"
NO_SDK = (
    "No SDK figures: the metrics table has no SDK column (a table from before the "
    "monitor wrote it)."
)
NO_SDK_WINDOWS = (
    "No SDK figures in this run's fleet windows (workers run with --no-sdk-metrics, or "
    "from before they read the SDK's metrics)."
)
THROTTLED_SAID = "the SDK throttled"
_COLORS = alt.Scale(domain=list(a.PARTS), range=["#4c78a8", "#72b7b2", "#f58518", "#bab0ac"])


def chart(parts: pd.DataFrame) -> alt.LayerChart:
    """The stack (one bar per window, ``T0`` to ``T``), the processing means (a rule
    across each window), and red over the throttled windows, from
    :func:`.ack_time.decompose`'s frame."""
    x = alt.X(
        "T0:T",
        title="window (UTC)",
        scale=alt.Scale(type="utc"),
        axis=alt.Axis(format=charts.TIME_FORMAT, labelAngle=0),
    )
    when = [alt.Tooltip("from (UTC)", type="nominal"), alt.Tooltip("to (UTC)", type="nominal")]
    spans = parts.assign(**{"from (UTC)": charts.utc_text(parts["T0"]),
                            "to (UTC)": charts.utc_text(parts["T"])})  # fmt: skip
    stack = []
    bottom = pd.Series(0.0, index=parts.index)
    for part in a.PARTS:
        value = parts[part]
        stack.append(spans.assign(part=part, y0=bottom, y1=bottom + value, ms=value))
        bottom = bottom + value.fillna(0.0)
    cols = ["T0", "T", "from (UTC)", "to (UTC)", "part", "y0", "y1", "ms"]
    bars = pd.concat([p[cols] for p in stack], ignore_index=True).dropna(subset=["y1"])
    layers: list[alt.Chart] = [
        alt.Chart(bars)
        .mark_bar(opacity=0.8)
        .encode(
            x=x,
            x2="T:T",
            y=alt.Y("y0", type="quantitative", title="mean ms"),
            y2="y1",
            color=alt.Color(
                "part",
                type="nominal",
                title=None,
                scale=_COLORS,
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=[
                *when,
                alt.Tooltip("part", type="nominal"),
                alt.Tooltip("ms", type="quantitative", format=",.1f", title="mean ms"),
            ],
        )
    ]
    lines = [c for c in a.PROCESSING.values() if parts[c].notna().any()]
    if lines:
        long = spans[["T0", "T", "from (UTC)", "to (UTC)", *lines]].melt(
            ["T0", "T", "from (UTC)", "to (UTC)"], var_name="series", value_name="ms"
        )
        layers.append(
            alt.Chart(long.dropna(subset=["ms"]))
            .mark_rule(strokeWidth=2)
            .encode(
                x=x,
                x2="T:T",
                y=alt.Y("ms", type="quantitative"),
                color=alt.Color(
                    "series",
                    type="nominal",
                    title=None,
                    scale=alt.Scale(domain=list(a.PROCESSING.values()), range=["black", "purple"]),
                    legend=alt.Legend(orient="bottom"),
                ),
                tooltip=[
                    *when,
                    alt.Tooltip("series", type="nominal"),
                    alt.Tooltip("ms", type="quantitative", format=",.1f", title="mean ms"),
                ],
            )
        )
    throttled = spans[parts["throttled"]]
    if not throttled.empty:  # behind the see-through bars: the window shows red
        marked = throttled[["T0", "T", "from (UTC)", "to (UTC)", "throttle"]]
        layers.insert(
            0,
            alt.Chart(marked.assign(what=THROTTLED_SAID))
            .mark_rect(opacity=0.25, color="red")
            .encode(
                x=x,
                x2="T:T",
                tooltip=[
                    alt.Tooltip("what", type="nominal", title=None),
                    *when,
                    alt.Tooltip("throttle", type="nominal", title="limit hit"),
                ],
            ),
        )
    return alt.LayerChart(layer=layers).resolve_scale(color="independent")


def show_ack_time(src: DataSource, run_id: str, cols: MetricsColumns) -> None:
    """The chart under its heading, or the note that says why there is none."""
    st.subheader(TITLE)
    stmt = a.query(src.dialect, run_id, cols)
    if stmt is None:
        st.caption(NO_SDK)
        return
    df = load(src, stmt, times=("T0", "T"))
    if df.empty:
        st.caption(NO_SDK_WINDOWS)
        return
    parts = a.decompose(df)
    st.caption(
        "Per fleet window, the SDK's mean times, stacked: buffer (input + output buffer), "
        "upload (a file's to the stage), registration/API (insert_files, or insert_rows "
        "for inline sends), and the rest of the mean ack latency (floored at 0). Means "
        "add up, quantiles do not. The black (purple: inline) rules across a window: the "
        "SDK's own processing mean (buffer to registered), for comparison, not stacked."
    )
    st.altair_chart(chart(parts), width="stretch")
    throttled = parts[parts["throttled"]]
    if not throttled.empty:
        total: dict[str, float] = {}
        for c, (_, key) in a.THROTTLE.items():
            total[key] = float(pd.to_numeric(df[c], errors="coerce").fillna(0).sum())
        st.caption(
            f"Shaded red: the {len(throttled)} window(s) the SDK throttled in "
            f"({a.throttled_text(total) or 'SDK_THROTTLED above 0'})."
        )
    with st.expander("table"):
        shown = parts.drop(columns=["T0", "throttled"]).assign(T=charts.utc_text(parts["T"]))
        st.dataframe(
            shown.rename(columns={"T": "window end (UTC)", "throttle": "SDK throttled"}),
            hide_index=True,
            key="ack_time",
        )
