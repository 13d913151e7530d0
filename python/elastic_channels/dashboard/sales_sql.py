"""The "Resort sales" queries: every figure aggregated by SQL on the target.

Two aggregates cover every figure but the latest sales: :func:`runs_aggregate` (per
run: sales, revenue, first and last sale, last commit) and :data:`SALES_MIX` (sales
and revenue per resort, category, customer type and payment method: a few thousand
rows; every breakdown the page draws is a sum of them, see ``sales_figures``). Both are
sums, minimums and maximums, so while a run goes on they are kept and each refresh
reads only the rows committed since the last one (``running_aggregate``). The latest
sales and their ingest-to-visible delay read only the rows committed in the last
:data:`RECENT_WINDOW_S` seconds. ``run_id=None`` means every run in the table.

Each query is a :class:`~.statement.Statement`: the run id and times are bound.
"""

from __future__ import annotations

import pandas as pd

from ..model import TABLE_NAME
from .aggregate import Aggregate
from .dialect import Dialect
from .statement import Binder, Statement

__all__ = [
    "LATEST_SALES_LIMIT",
    "RECENT_WINDOW_S",
    "SALES_MIX",
    "all_runs",
    "latest_sales",
    "recent_delay",
    "runs",
    "runs_aggregate",
    "runs_list",
    "sales_mix",
]

TABLE = TABLE_NAME
LATEST_SALES_LIMIT = 50
#: Ingest-to-visible and the latest sales: the rows committed this long before the
#: latest commit.
RECENT_WINDOW_S = 10
RUNS_LIMIT = 50
_RUN_TIMES = ("FIRST_SALE", "LAST_SALE", "LAST_COMMIT")


def where_run(b: Binder, run_id: str | None) -> str:
    return "TRUE" if run_id is None else f"RUN_ID = {b(run_id)}"


def runs_aggregate(d: Dialect) -> Aggregate:
    """Per run: ``SALES``, ``REVENUE``, ``FIRST_SALE``, ``LAST_SALE``, ``LAST_COMMIT``."""
    measures = (
        ("SALES", "count", "*"), ("REVENUE", "sum", "AMOUNT"),
        ("FIRST_SALE", "min", "SALE_TIME"), ("LAST_SALE", "max", "SALE_TIME"),
        ("LAST_COMMIT", "max", d.commit_time),
    )  # fmt: skip
    return Aggregate(f"runs_{d.name}", TABLE, ("RUN_ID",), measures, _RUN_TIMES)


#: Per resort, category, customer type and payment method: ``SALES``, ``REVENUE``.
SALES_MIX = Aggregate(
    "sales_mix",
    TABLE,
    ("RESORT", "CATEGORY", "CUSTOMER_TYPE", "PAYMENT_METHOD"),
    (("SALES", "count", "*"), ("REVENUE", "sum", "AMOUNT")),
)


def runs(d: Dialect) -> Statement:
    """The runs in the table and their headline figures, in one full read."""
    return runs_aggregate(d).statement(d, None, None, None)


def sales_mix(d: Dialect, run_id: str | None) -> Statement:
    """:data:`SALES_MIX` of one run (every run's with None), in one full read."""
    return SALES_MIX.statement(d, run_id, None, None)


def runs_list(per_run: pd.DataFrame) -> pd.DataFrame:
    """The runs of :func:`runs_aggregate`, latest sale first (at most ``RUNS_LIMIT``)."""
    if per_run.empty:
        return per_run
    out = per_run.copy()
    for c in _RUN_TIMES:
        out[c] = pd.to_datetime(out[c], utc=True)
    out = out.sort_values(["LAST_SALE", "RUN_ID"], ascending=[False, True], ignore_index=True)
    return out.head(RUNS_LIMIT)


def all_runs(per_run: pd.DataFrame) -> pd.Series:
    """The headline figures of every run together."""
    return pd.Series({
        "SALES": int(per_run["SALES"].sum()), "REVENUE": float(per_run["REVENUE"].sum()),
        "FIRST_SALE": per_run["FIRST_SALE"].min(), "LAST_SALE": per_run["LAST_SALE"].max(),
        "LAST_COMMIT": per_run["LAST_COMMIT"].max(),
    })  # fmt: skip


def _recent(d: Dialect, b: Binder, run_id: str | None, last_commit_iso: str) -> str:
    run = where_run(b, run_id)  # bound first: it comes first in the text
    since = d.minus_seconds(d.timestamp(b, last_commit_iso), RECENT_WINDOW_S)
    return f"{run} AND {d.commit_time} >= {since}"


def latest_sales(
    d: Dialect, run_id: str | None, last_commit_iso: str, limit: int = LATEST_SALES_LIMIT
) -> Statement:
    """The most recently visible sales, with their ingest-to-visible delay, among the
    rows committed in the :data:`RECENT_WINDOW_S` seconds before ``last_commit_iso``."""
    b = Binder()
    recent = _recent(d, b, run_id, last_commit_iso)
    sql = (
        "SELECT SALE_TIME, RESORT, CATEGORY, ITEM, QUANTITY, AMOUNT, CUSTOMER_TYPE, "
        f"PAYMENT_METHOD, {d.diff_ms('SALE_TIME', d.commit_time)} AS DELAY_MS, TXID, "
        f"{d.commit_time} AS COMMIT_TIME FROM {TABLE} WHERE {recent} "
        f"ORDER BY {d.commit_time} DESC, TXID LIMIT {int(limit)}"
    )
    return Statement(sql, b.params)


def recent_delay(d: Dialect, run_id: str | None, last_commit_iso: str) -> Statement:
    """Ingest-to-visible p50/p99 (ms) of the rows committed in the :data:`RECENT_WINDOW_S`
    seconds before ``last_commit_iso`` (the latest commit, from :func:`runs`: a constant
    lets the target skip the older rows by their commit-time statistics)."""
    b = Binder()
    delay = d.diff_ms("SALE_TIME", d.commit_time)
    recent = _recent(d, b, run_id, last_commit_iso)
    sql = (
        f"SELECT count(*) AS SALES, {d.approx_quantile(delay, 0.5)} AS DELAY_P50_MS, "
        f"{d.approx_quantile(delay, 0.99)} AS DELAY_P99_MS, max({delay}) AS DELAY_MAX_MS "
        f"FROM {TABLE} WHERE {recent}"
    )
    return Statement(sql, b.params)
