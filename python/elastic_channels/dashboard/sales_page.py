"""The "Resort sales" page (leadership): revenue, mix and the latest sales of a run."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from . import sales_sql as q
from .common import load, load_many, pick_run, show_page
from .source import DataSource, NoData

__all__ = ["ALL_RUNS", "main", "money"]

ALL_RUNS = "(all runs)"
TITLE = "Resort sales"
_TIMES = ("FIRST_SALE", "LAST_SALE", "LAST_COMMIT")


def _ms(v: Any) -> str:
    return "-" if v is None or pd.isna(v) else f"{float(v):,.0f} ms"


def money(dollars: float) -> str:
    """Revenue short enough for a metric: ``$12.35 M``, ``$1.74 B``."""
    if abs(dollars) >= 1e9:
        return f"${dollars / 1e9:,.2f} B"
    return f"${dollars / 1e6:,.2f} M"


def _bars(df: pd.DataFrame, x: str, y: str, x_title: str, **enc: object) -> alt.Chart:
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(x=alt.X(f"{x}:Q", title=x_title), y=alt.Y(f"{y}:N", sort="-x", title=None), **enc)
    )


def _headline(t: pd.Series, resorts: int, delay: pd.Series) -> None:
    cols = st.columns(5)
    revenue = float(t["REVENUE"])
    cols[0].metric("Revenue", money(revenue), help=f"exactly ${revenue:,.2f}")
    cols[1].metric("Sales", f"{int(t['SALES']):,}")
    cols[2].metric("Resorts selling", str(resorts))
    cols[3].metric("Ingest-to-visible p50", _ms(delay["DELAY_P50_MS"]))
    cols[4].metric("Ingest-to-visible p99", _ms(delay["DELAY_P99_MS"]))
    st.caption(
        f"Sales from {t['FIRST_SALE']:%Y-%m-%d %H:%M:%S} to {t['LAST_SALE']:%H:%M:%S} UTC; "
        f"last commit {t['LAST_COMMIT']:%H:%M:%S} UTC. Delays: SALE_TIME to commit time of "
        f"the rows committed in the {q.RECENT_WINDOW_S} s before the last commit."
    )


def _resorts(per: pd.DataFrame, top_n: int) -> pd.DataFrame:
    resorts = per[per["KIND"] == "RESORT"].drop(columns=["KIND"])
    regions = per[per["KIND"] == "REGION"].drop(columns=["KIND", "REGION"])
    top = resorts.head(top_n)
    left, right = st.columns(2)
    with left:
        st.subheader(f"Revenue by resort (top {top_n})")
        tip = ["NAME", "REGION", alt.Tooltip("REVENUE:Q", format="$,.2f"), "SALES"]
        chart = _bars(top, "REVENUE", "NAME", "revenue ($)", color="REGION:N", tooltip=tip)
        st.altair_chart(chart, width="stretch")
        with st.expander("table"):
            st.dataframe(top, hide_index=True, key="top_resorts")
    with right:
        st.subheader("Revenue by state / province")
        tip = ["NAME", alt.Tooltip("REVENUE:Q", format="$,.2f"), "SALES", "RESORTS"]
        st.altair_chart(_bars(regions, "REVENUE", "NAME", "revenue ($)", tooltip=tip))
        with st.expander("table"):
            st.dataframe(regions, hide_index=True, key="regions")
    return resorts


def _mix(mix: pd.DataFrame, bucket_s: int, resorts: pd.DataFrame, cp: pd.DataFrame) -> None:
    st.subheader(f"Category mix over time (share of revenue per {bucket_s} s)")
    chart = (
        alt.Chart(mix)
        .mark_area()
        .encode(
            x=alt.X("BUCKET:T", title="sale time (UTC)", axis=alt.Axis(format="%H:%M:%S")),
            y=alt.Y("REVENUE:Q", stack="normalize", title="share of revenue"),
            color=alt.Color("CATEGORY:N", title="category"),
            tooltip=["BUCKET:T", "CATEGORY", alt.Tooltip("REVENUE:Q", format="$,.2f"), "SALES"],
        )
    )
    st.altair_chart(chart, width="stretch")
    left, right = st.columns(2)
    with left:
        st.subheader("Passholder share per resort")
        ph = resorts.sort_values(["PASSHOLDER_PCT", "NAME"], ascending=[False, True])
        ph = ph[["NAME", "REGION", "SALES", "PASSHOLDER_PCT", "PASSHOLDER_REVENUE_PCT"]]
        tip = ["NAME", alt.Tooltip("PASSHOLDER_PCT:Q", format=".1f"), "SALES"]
        st.altair_chart(
            _bars(ph, "PASSHOLDER_PCT", "NAME", "% of sales by passholders", tooltip=tip)
        )
        with st.expander("table"):
            st.dataframe(ph, hide_index=True, key="passholders")
    with right:
        st.subheader("Customers and payment")
        for kind, title in (("CUSTOMER_TYPE", "customer type"), ("PAYMENT_METHOD", "payment")):
            part = cp[cp["KIND"] == kind]
            tip = ["NAME", "SALES", alt.Tooltip("SALES_PCT:Q", format=".1f")]
            st.altair_chart(_bars(part, "SALES_PCT", "NAME", f"% of sales, {title}", tooltip=tip))
        with st.expander("table"):
            st.dataframe(cp, hide_index=True, key="customer_payment")


def _body(src: DataSource, top_n_default: int = 10) -> None:
    d = src.dialect
    try:
        runs = load(src, q.runs(d), times=_TIMES)
    except NoData as e:
        st.info(f"No sales table yet ({e}). Start a run: elastic-channels run")
        return
    if runs.empty:
        st.info("No sales landed yet: the table is empty. Start a run: elastic-channels run")
        return
    top = st.columns([3, 1])
    with top[0]:
        choice = pick_run(list(runs["RUN_ID"]), key="sales_run", extra=[ALL_RUNS])
    with top[1]:
        top_n = int(st.number_input("Top N resorts", 1, 100, top_n_default, key="top_n"))
    if choice == ALL_RUNS:
        scope, t = None, load(src, q.totals(d, None), times=_TIMES).iloc[0]
    else:
        t = runs[runs["RUN_ID"] == choice].iloc[0]
        # The table holds only this run: the same rows without a filter on RUN_ID (one
        # column less to scan). Rows of a run started since the list was read would count
        # in this refresh only: the next one lists that run and filters again.
        scope = None if len(runs) == 1 else choice
    bucket_s = q.bucket_seconds(float(t["SPAN_MS"] or 0) / 1000.0)
    got = load_many(
        src,
        {
            "delay": (q.recent_delay(d, scope, t["LAST_COMMIT"].isoformat()), ()),
            "resorts": (q.resorts(d, scope), ()),
            "mix": (q.category_mix(d, scope, bucket_s), ("BUCKET",)),
            "cp": (q.customer_payment_mix(d, scope), ()),
            "latest": (q.latest_sales(d, scope), ("SALE_TIME", "COMMIT_TIME")),
        },
    )
    per = got["resorts"]
    _headline(t, int((per["KIND"] == "RESORT").sum()), got["delay"].iloc[0])
    resorts = _resorts(per, top_n)
    _mix(got["mix"], bucket_s, resorts, got["cp"])
    st.subheader("Latest sales")
    st.dataframe(got["latest"], hide_index=True, key="latest_sales")


def main() -> None:
    show_page(TITLE, "the sales", _body)
