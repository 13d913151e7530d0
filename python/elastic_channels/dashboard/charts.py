"""The pages' charts (Altair, drawn by Vega-Lite in the browser), with the two rules
both pages keep: times are UTC on a 24-hour clock whatever the browser's time zone
(a ``utc`` time scale, ``%H:%M:%S`` labels), and money reads as money ($870M, not
870000000).

Vega-Lite formats a time in the browser's zone unless its scale is ``utc``; a tooltip
has no scale, so the times it shows are formatted here (:func:`utc_text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

__all__ = [
    "MONEY_LABEL",
    "TIME_FORMAT",
    "bars",
    "lines",
    "money_axis",
    "shaded",
    "share_bars",
    "time_axis",
    "utc_text",
]

#: Axis labels in money, as the metrics write it ($950K, $870M, $1.2B): d3's SI format
#: with K for its k and B for its G (giga).
MONEY_LABEL = "replace(replace(format(datum.value, '$.3~s'), 'k', 'K'), 'G', 'B')"
TIME_FORMAT = "%H:%M:%S"


def money_axis(title: str | None) -> alt.Axis:
    return alt.Axis(title=title, labelExpr=MONEY_LABEL)


def time_axis(title: str) -> alt.X:
    """An x encoding of the column ``T`` on a UTC time scale, 24-hour labels."""
    return alt.X(
        "T:T",
        title=title,
        scale=alt.Scale(type="utc"),
        axis=alt.Axis(format=TIME_FORMAT, labelAngle=0),
    )


def utc_text(times: pd.Series, fmt: str = "%H:%M:%S") -> pd.Series:
    """Timestamps as UTC text on a 24-hour clock (``-`` for a missing one)."""
    t = pd.to_datetime(times, utc=True)
    return t.dt.strftime(fmt).fillna("-")


def bars(
    df: pd.DataFrame,
    x: str,
    y: str,
    x_title: str,
    *,
    money: bool = False,
    percent: bool = False,
    tooltip: Sequence[Any] = (),
    color: Any = alt.Undefined,
) -> alt.Chart:
    """Horizontal bars of ``x`` (a number) per ``y`` (a name), largest first."""
    axis = money_axis(x_title) if money else alt.Axis(title=x_title)
    scale = alt.Scale(domain=[0, 100]) if percent else alt.Undefined
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X(x, type="quantitative", axis=axis, scale=scale),
            y=alt.Y(y, type="nominal", sort="-x", title=None, axis=alt.Axis(labelLimit=220)),
            color=color,
            tooltip=list(tooltip),
        )
    )


def share_bars(
    df: pd.DataFrame, y: str, part: str, value: str, order: Sequence[str], title: str
) -> alt.Chart:
    """100% stacked bars: per ``y`` (in ``order``), each ``part``'s share of ``value``."""
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X(
                value,
                type="quantitative",
                stack="normalize",
                axis=alt.Axis(title=title, format="%"),
            ),
            y=alt.Y(y, type="nominal", sort=list(order), title=None, axis=alt.Axis(labelLimit=220)),
            color=alt.Color(part, type="nominal", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=[
                alt.Tooltip(y, type="nominal"),
                alt.Tooltip(part, type="nominal"),
                alt.Tooltip(value, type="quantitative", format="$,.0f"),
                alt.Tooltip("SHARE_PCT", type="quantitative", format=".1f", title="% of revenue"),
            ],
        )
    )


def lines(df: pd.DataFrame, series: Sequence[str], x_title: str, y_title: str) -> alt.Chart:
    """One line per column of ``series`` over the column ``T`` (UTC); a missing value
    (None/NaN: a window without that figure) breaks its line, never reads as 0."""
    long = df[["T", *series]].melt("T", var_name="series", value_name="value")
    long["time (UTC)"] = utc_text(long["T"])
    return (
        alt.Chart(long)
        .mark_line(point=len(df) < 3, invalid="break-paths-show-domains")
        .encode(
            x=time_axis(x_title),
            y=alt.Y("value", type="quantitative", title=y_title),
            color=alt.Color(
                "series", type="nominal", title=None, legend=alt.Legend(orient="bottom")
            ),
            tooltip=[
                alt.Tooltip("time (UTC)", type="nominal"),
                alt.Tooltip("series", type="nominal"),
                alt.Tooltip("value", type="quantitative", format=",.1f"),
            ],
        )
    )


def shaded(chart: alt.Chart, spans: pd.DataFrame, label: str) -> alt.LayerChart:
    """``chart`` over shaded stretches of time: the rows of ``spans`` from ``T0`` to
    ``T`` (UTC), each said by ``label`` in its tooltip (warmup windows, say)."""
    spans = spans[["T0", "T"]].assign(
        what=label, start=utc_text(spans["T0"]), end=utc_text(spans["T"])
    )
    rect = (
        alt.Chart(spans)
        .mark_rect(opacity=0.15, color="orange")
        .encode(
            x=alt.X("T0:T", scale=alt.Scale(type="utc")),
            x2="T:T",
            tooltip=[
                alt.Tooltip("what", type="nominal", title=None),
                alt.Tooltip("start", type="nominal", title="from (UTC)"),
                alt.Tooltip("end", type="nominal", title="to (UTC)"),
            ],
        )
    )
    return alt.LayerChart(layer=[rect, chart])
