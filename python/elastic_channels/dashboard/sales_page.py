"""The "Resort sales" page (leadership): revenue, mix and the latest sales of a run."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from . import sales_sql as q
from .common import auto_refresh, load, pick, show_query_error, source
from .source import DataSource, NoData, QueryError

__all__ = ["main"]

ALL_RUNS = "(all runs)"
TITLE = "Resort sales"


def _money(v: float) -> str:
    return f"${v:,.2f}"


def _ms(v: object) -> str:
    return "-" if v is None or pd.isna(v) else f"{float(v):,.0f} ms"


def _headline(src: DataSource, run_id: str | None) -> pd.Series | None:
    d = src.dialect
    t = load(src, q.totals(d, run_id), times=("FIRST_SALE", "LAST_SALE", "LAST_COMMIT")).iloc[0]
    if not t["SALES"]:
        st.info("No sales landed yet for this run: they show here seconds after they commit.")
        return None
    delay = load(src, q.recent_delay(d, run_id)).iloc[0]
    cols = st.columns(5)
    cols[0].metric("Revenue", _money(float(t["REVENUE"])))
    cols[1].metric("Sales", f"{int(t['SALES']):,}")
    cols[2].metric("Resorts selling", f"{int(t['RESORTS'])}")
    cols[3].metric("Ingest-to-visible p50", _ms(delay["DELAY_P50_MS"]))
    cols[4].metric("Ingest-to-visible p99", _ms(delay["DELAY_P99_MS"]))
    st.caption(
        f"Sales from {t['FIRST_SALE']:%Y-%m-%d %H:%M:%S} to {t['LAST_SALE']:%H:%M:%S} UTC; "
        f"last commit {t['LAST_COMMIT']:%H:%M:%S} UTC. Delays: rows committed in the "
        f"{q.RECENT_WINDOW_S} s before the last commit (SALE_TIME to commit time)."
    )
    return t


def _resorts(src: DataSource, run_id: str | None, top_n: int) -> None:
    d = src.dialect
    left, right = st.columns(2)
    with left:
        st.subheader(f"Revenue by resort (top {top_n})")
        top = load(src, q.revenue_by_resort(d, run_id, top_n))
        chart = (
            alt.Chart(top)
            .mark_bar()
            .encode(
                x=alt.X("REVENUE:Q", title="revenue ($)"),
                y=alt.Y("RESORT:N", sort="-x", title=None),
                color=alt.Color("REGION:N", title="region"),
                tooltip=["RESORT", "REGION", alt.Tooltip("REVENUE:Q", format="$,.2f"), "SALES"],
            )
        )
        st.altair_chart(chart, width="stretch")
        with st.expander("table"):
            st.dataframe(top, hide_index=True, key="top_resorts")
    with right:
        st.subheader("Revenue by state / province")
        regions = load(src, q.revenue_by_region(d, run_id))
        chart = (
            alt.Chart(regions)
            .mark_bar()
            .encode(
                x=alt.X("REGION:N", sort="-y", title=None),
                y=alt.Y("REVENUE:Q", title="revenue ($)"),
                tooltip=["REGION", alt.Tooltip("REVENUE:Q", format="$,.2f"), "SALES", "RESORTS"],
            )
        )
        st.altair_chart(chart, width="stretch")
        with st.expander("table"):
            st.dataframe(regions, hide_index=True, key="regions")


def _mix(src: DataSource, run_id: str | None, span_ms: float) -> None:
    d = src.dialect
    bucket_s = q.bucket_seconds(span_ms / 1000.0)
    st.subheader(f"Category mix over time (revenue per {bucket_s} s)")
    mix = load(src, q.category_mix(d, run_id, bucket_s), times=("BUCKET",))
    chart = (
        alt.Chart(mix)
        .mark_area()
        .encode(
            x=alt.X("BUCKET:T", title="sale time (UTC)"),
            y=alt.Y("REVENUE:Q", stack="normalize", title="share of revenue"),
            color=alt.Color("CATEGORY:N", title="category"),
            tooltip=["BUCKET:T", "CATEGORY", alt.Tooltip("REVENUE:Q", format="$,.2f"), "SALES"],
        )
    )
    st.altair_chart(chart, width="stretch")
    left, right = st.columns(2)
    with left:
        st.subheader("Passholder share per resort")
        ph = load(src, q.passholder_share(d, run_id))
        chart = (
            alt.Chart(ph)
            .mark_bar()
            .encode(
                x=alt.X("PASSHOLDER_PCT:Q", title="% of sales by passholders"),
                y=alt.Y("RESORT:N", sort="-x", title=None),
                tooltip=["RESORT", alt.Tooltip("PASSHOLDER_PCT:Q", format=".1f"), "SALES"],
            )
        )
        st.altair_chart(chart, width="stretch")
        with st.expander("table"):
            st.dataframe(ph, hide_index=True, key="passholders")
    with right:
        st.subheader("Customers and payment")
        cp = load(src, q.customer_payment_mix(d, run_id))
        chart = (
            alt.Chart(cp)
            .mark_bar()
            .encode(
                x=alt.X("SALES_PCT:Q", title="% of sales"),
                y=alt.Y("NAME:N", sort="-x", title=None),
                row=alt.Row("KIND:N", title=None),
                tooltip=["KIND", "NAME", "SALES", alt.Tooltip("SALES_PCT:Q", format=".1f")],
            )
            .resolve_scale(y="independent")
        )
        st.altair_chart(chart)
        with st.expander("table"):
            st.dataframe(cp, hide_index=True, key="customer_payment")


def _latest(src: DataSource, run_id: str | None) -> None:
    st.subheader("Latest sales")
    latest = load(src, q.latest_sales(src.dialect, run_id), times=("SALE_TIME", "COMMIT_TIME"))
    st.dataframe(latest, hide_index=True, key="latest_sales")


def _body(src: DataSource) -> None:
    try:
        runs = load(src, q.runs(src.dialect))
    except NoData as e:
        st.info(f"No sales table yet ({e}). Start a run: elastic-channels run")
        return
    if runs.empty:
        st.info("No sales landed yet: the table is empty. Start a run: elastic-channels run")
        return
    top = st.columns([3, 1])
    with top[0]:
        choice = pick("Run", [*runs["RUN_ID"], ALL_RUNS], key="sales_run")
    with top[1]:
        top_n = st.number_input("Top N resorts", 1, 100, 10, key="top_n")
    run_id = None if choice == ALL_RUNS else choice
    totals = _headline(src, run_id)
    if totals is None:
        return
    _resorts(src, run_id, int(top_n))
    _mix(src, run_id, float(totals["SPAN_MS"] or 0))
    _latest(src, run_id)


def main() -> None:
    st.title(TITLE)
    try:
        settings, src = source()
    except (QueryError, ValueError) as e:
        st.error(f"Cannot open the target: {e}")
        return
    every = auto_refresh(settings, src)

    @st.fragment(run_every=every)
    def body() -> None:
        try:
            _body(src)
        except QueryError as e:
            show_query_error(e, "the sales")

    body()
