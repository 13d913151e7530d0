"""The "Resort sales" queries: every figure aggregated by SQL on the target.

Each function returns one SQL string for a :class:`~.dialect.Dialect`; only what is
drawn comes back (a few dozen rows at most), so the pages stay fast on tens of
millions of rows. ``run_id=None`` means every run in the table.

A resort's region (state or province) is not a column of the table: it comes from the
model (``model.RESORTS``) as a ``(VALUES ...)`` list joined on the target, after the
rows are aggregated per resort.
"""

from __future__ import annotations

from ..model import RESORTS, TABLE_NAME
from .dialect import Dialect, sql_string

__all__ = [
    "BUCKETS_S",
    "LATEST_SALES_LIMIT",
    "RECENT_WINDOW_S",
    "bucket_seconds",
    "category_mix",
    "customer_payment_mix",
    "latest_sales",
    "passholder_share",
    "recent_delay",
    "revenue_by_region",
    "revenue_by_resort",
    "runs",
    "totals",
]

TABLE = TABLE_NAME
LATEST_SALES_LIMIT = 50
#: Ingest-to-visible is summarised over rows committed this long before the latest commit.
RECENT_WINDOW_S = 60
#: Bucket widths for the mix over time: the smallest giving at most ``MAX_BUCKETS``.
BUCKETS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400)
MAX_BUCKETS = 60

_REGIONS = ", ".join(f"({sql_string(r.name)}, {sql_string(r.region)})" for r in RESORTS)
REGIONS_SQL = f"(VALUES {_REGIONS}) AS R(RESORT_NAME, REGION)"


def where_run(run_id: str | None) -> str:
    return "TRUE" if run_id is None else f"RUN_ID = {sql_string(run_id)}"


def bucket_seconds(span_s: float) -> int:
    """The bucket width that draws ``span_s`` seconds in at most ``MAX_BUCKETS`` buckets."""
    for b in BUCKETS_S:
        if span_s / b <= MAX_BUCKETS:
            return b
    return BUCKETS_S[-1]


def runs(d: Dialect, limit: int = 50) -> str:
    """The runs in the table, latest first (by their last sale)."""
    return (
        f"SELECT RUN_ID, count(*) AS SALES, max(SALE_TIME) AS LAST_SALE FROM {TABLE} "
        f"GROUP BY RUN_ID ORDER BY LAST_SALE DESC LIMIT {int(limit)}"
    )


def totals(d: Dialect, run_id: str | None) -> str:
    return (
        "SELECT count(*) AS SALES, sum(AMOUNT) AS REVENUE, count(DISTINCT RESORT) AS RESORTS, "
        f"min(SALE_TIME) AS FIRST_SALE, max(SALE_TIME) AS LAST_SALE, "
        f"max({d.commit_time}) AS LAST_COMMIT, "
        f"{d.diff_ms('min(SALE_TIME)', 'max(SALE_TIME)')} AS SPAN_MS "
        f"FROM {TABLE} WHERE {where_run(run_id)}"
    )


def _by_resort(run_id: str | None) -> str:
    return (
        "SELECT RESORT, sum(AMOUNT) AS REVENUE, count(*) AS SALES "
        f"FROM {TABLE} WHERE {where_run(run_id)} GROUP BY RESORT"
    )


def revenue_by_resort(d: Dialect, run_id: str | None, top_n: int) -> str:
    """The top ``top_n`` resorts by revenue, with their region and share of revenue."""
    return (
        f"WITH BY_RESORT AS ({_by_resort(run_id)}) "
        "SELECT B.RESORT, coalesce(R.REGION, 'unknown') AS REGION, B.REVENUE, B.SALES, "
        "100.0 * B.REVENUE / sum(B.REVENUE) OVER () AS REVENUE_PCT "
        f"FROM BY_RESORT B LEFT JOIN {REGIONS_SQL} ON R.RESORT_NAME = B.RESORT "
        f"ORDER BY B.REVENUE DESC, B.RESORT LIMIT {int(top_n)}"
    )


def revenue_by_region(d: Dialect, run_id: str | None) -> str:
    return (
        f"WITH BY_RESORT AS ({_by_resort(run_id)}) "
        "SELECT coalesce(R.REGION, 'unknown') AS REGION, sum(B.REVENUE) AS REVENUE, "
        "sum(B.SALES) AS SALES, count(*) AS RESORTS "
        f"FROM BY_RESORT B LEFT JOIN {REGIONS_SQL} ON R.RESORT_NAME = B.RESORT "
        "GROUP BY coalesce(R.REGION, 'unknown') ORDER BY REVENUE DESC, REGION"
    )


def category_mix(d: Dialect, run_id: str | None, bucket_s: int) -> str:
    """Revenue and sales per category per time bucket of SALE_TIME."""
    bucket = d.bucket("SALE_TIME", bucket_s)
    return (
        f"SELECT {bucket} AS BUCKET, CATEGORY, sum(AMOUNT) AS REVENUE, count(*) AS SALES "
        f"FROM {TABLE} WHERE {where_run(run_id)} GROUP BY {bucket}, CATEGORY "
        "ORDER BY BUCKET, CATEGORY"
    )


def passholder_share(d: Dialect, run_id: str | None) -> str:
    """Per resort: the share of its sales (and revenue) made by passholders, in percent."""
    ph = "CUSTOMER_TYPE = 'PASSHOLDER'"
    return (
        "SELECT RESORT, count(*) AS SALES, "
        f"sum(CASE WHEN {ph} THEN 1 ELSE 0 END) AS PASSHOLDER_SALES, "
        f"100.0 * sum(CASE WHEN {ph} THEN 1 ELSE 0 END) / count(*) AS PASSHOLDER_PCT, "
        f"100.0 * sum(CASE WHEN {ph} THEN AMOUNT ELSE 0 END) / sum(AMOUNT) "
        "AS PASSHOLDER_REVENUE_PCT "
        f"FROM {TABLE} WHERE {where_run(run_id)} GROUP BY RESORT "
        "ORDER BY PASSHOLDER_PCT DESC, RESORT"
    )


def customer_payment_mix(d: Dialect, run_id: str | None) -> str:
    """Sales and revenue per customer type and per payment method, in one scan.

    ``KIND`` says which grouping a row belongs to (``CUSTOMER_TYPE`` or
    ``PAYMENT_METHOD``), ``NAME`` its value; ``SALES_PCT`` is its share of all sales.
    """
    return (
        "SELECT CASE WHEN GROUPING(CUSTOMER_TYPE) = 0 THEN 'CUSTOMER_TYPE' "
        "ELSE 'PAYMENT_METHOD' END AS KIND, "
        "coalesce(CUSTOMER_TYPE, PAYMENT_METHOD) AS NAME, count(*) AS SALES, "
        "sum(AMOUNT) AS REVENUE, "
        "100.0 * count(*) / sum(count(*)) OVER (PARTITION BY GROUPING(CUSTOMER_TYPE)) "
        "AS SALES_PCT "
        f"FROM {TABLE} WHERE {where_run(run_id)} "
        "GROUP BY GROUPING SETS ((CUSTOMER_TYPE), (PAYMENT_METHOD)) "
        "ORDER BY KIND, SALES DESC, NAME"
    )


def latest_sales(d: Dialect, run_id: str | None, limit: int = LATEST_SALES_LIMIT) -> str:
    """The most recently visible sales, with their ingest-to-visible delay."""
    return (
        "SELECT TXID, RESORT, CATEGORY, ITEM, CUSTOMER_TYPE, PAYMENT_METHOD, QUANTITY, "
        f"AMOUNT, SALE_TIME, {d.commit_time} AS COMMIT_TIME, "
        f"{d.diff_ms('SALE_TIME', d.commit_time)} AS DELAY_MS "
        f"FROM {TABLE} WHERE {where_run(run_id)} "
        f"ORDER BY {d.commit_time} DESC, TXID LIMIT {int(limit)}"
    )


def recent_delay(d: Dialect, run_id: str | None, window_s: int = RECENT_WINDOW_S) -> str:
    """Ingest-to-visible p50/p99 (ms) of the rows committed in the last ``window_s``
    seconds before the latest commit."""
    delay = d.diff_ms("SALE_TIME", d.commit_time)
    latest = f"(SELECT max({d.commit_time}) FROM {TABLE} WHERE {where_run(run_id)})"
    return (
        f"SELECT count(*) AS SALES, {d.approx_quantile(delay, 0.5)} AS DELAY_P50_MS, "
        f"{d.approx_quantile(delay, 0.99)} AS DELAY_P99_MS, max({delay}) AS DELAY_MAX_MS "
        f"FROM {TABLE} WHERE {where_run(run_id)} "
        f"AND {d.commit_time} >= {d.minus_seconds(latest, window_s)}"
    )
