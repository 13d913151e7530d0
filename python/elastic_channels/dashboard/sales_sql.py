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
    "recent_delay",
    "resorts",
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
    """The runs in the table, latest first, each with its headline figures (one scan)."""
    return (
        "SELECT RUN_ID, count(*) AS SALES, sum(AMOUNT) AS REVENUE, "
        "min(SALE_TIME) AS FIRST_SALE, max(SALE_TIME) AS LAST_SALE, "
        f"max({d.commit_time}) AS LAST_COMMIT, "
        f"{d.diff_ms('min(SALE_TIME)', 'max(SALE_TIME)')} AS SPAN_MS "
        f"FROM {TABLE} GROUP BY RUN_ID ORDER BY LAST_SALE DESC, RUN_ID LIMIT {int(limit)}"
    )


def totals(d: Dialect, run_id: str | None) -> str:
    """The headline figures of one run (or of every run), as :func:`runs` gives them."""
    return (
        "SELECT count(*) AS SALES, sum(AMOUNT) AS REVENUE, "
        "min(SALE_TIME) AS FIRST_SALE, max(SALE_TIME) AS LAST_SALE, "
        f"max({d.commit_time}) AS LAST_COMMIT, "
        f"{d.diff_ms('min(SALE_TIME)', 'max(SALE_TIME)')} AS SPAN_MS "
        f"FROM {TABLE} WHERE {where_run(run_id)}"
    )


def resorts(d: Dialect, run_id: str | None) -> str:
    """Per resort and per region (state or province), in one scan of the rows.

    ``KIND`` is ``RESORT`` or ``REGION``; ``NAME`` the resort or region; ``REVENUE``,
    ``SALES``, ``REVENUE_PCT`` (share of all revenue), ``PASSHOLDER_PCT`` (share of its
    sales made by passholders), ``PASSHOLDER_REVENUE_PCT``, ``RESORTS`` (selling, per
    region). Rows are by kind, then revenue, largest first.
    """
    ph = "CUSTOMER_TYPE = 'PASSHOLDER'"
    per_resort = (
        "SELECT RESORT, sum(AMOUNT) AS REVENUE, count(*) AS SALES, "
        f"sum(CASE WHEN {ph} THEN 1 ELSE 0 END) AS PH_SALES, "
        f"sum(CASE WHEN {ph} THEN AMOUNT ELSE 0 END) AS PH_REVENUE "
        f"FROM {TABLE} WHERE {where_run(run_id)} GROUP BY RESORT"
    )
    joined = (
        "SELECT B.*, coalesce(R.REGION, 'unknown') AS REGION, "
        "sum(B.REVENUE) OVER () AS ALL_REVENUE "
        f"FROM B LEFT JOIN {REGIONS_SQL} ON R.RESORT_NAME = B.RESORT"
    )
    return (
        f"WITH B AS ({per_resort}), J AS ({joined}), U AS ("
        "SELECT 'RESORT' AS KIND, RESORT AS NAME, REGION, REVENUE, SALES, "
        "100.0 * REVENUE / ALL_REVENUE AS REVENUE_PCT, "
        "100.0 * PH_SALES / SALES AS PASSHOLDER_PCT, "
        "100.0 * PH_REVENUE / REVENUE AS PASSHOLDER_REVENUE_PCT, 1 AS RESORTS FROM J "
        "UNION ALL "
        "SELECT 'REGION', REGION, REGION, sum(REVENUE), sum(SALES), "
        "100.0 * sum(REVENUE) / max(ALL_REVENUE), 100.0 * sum(PH_SALES) / sum(SALES), "
        "100.0 * sum(PH_REVENUE) / sum(REVENUE), count(*) FROM J GROUP BY REGION) "
        "SELECT * FROM U ORDER BY KIND DESC, REVENUE DESC, NAME"
    )


def category_mix(d: Dialect, run_id: str | None, bucket_s: int) -> str:
    """Revenue and sales per category per time bucket of SALE_TIME."""
    bucket = d.bucket("SALE_TIME", bucket_s)
    return (
        f"SELECT {bucket} AS BUCKET, CATEGORY, sum(AMOUNT) AS REVENUE, count(*) AS SALES "
        f"FROM {TABLE} WHERE {where_run(run_id)} GROUP BY {bucket}, CATEGORY "
        "ORDER BY BUCKET, CATEGORY"
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


def recent_delay(
    d: Dialect, run_id: str | None, last_commit_iso: str, window_s: int = RECENT_WINDOW_S
) -> str:
    """Ingest-to-visible p50/p99 (ms) of the rows committed in the ``window_s`` seconds
    before ``last_commit_iso`` (the latest commit, from :func:`runs`: a constant lets the
    target skip the older rows by their commit-time statistics)."""
    delay = d.diff_ms("SALE_TIME", d.commit_time)
    latest = d.timestamp(last_commit_iso)
    return (
        f"SELECT count(*) AS SALES, {d.approx_quantile(delay, 0.5)} AS DELAY_P50_MS, "
        f"{d.approx_quantile(delay, 0.99)} AS DELAY_P99_MS, max({delay}) AS DELAY_MAX_MS "
        f"FROM {TABLE} WHERE {where_run(run_id)} "
        f"AND {d.commit_time} >= {d.minus_seconds(latest, window_s)}"
    )
