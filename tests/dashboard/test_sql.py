"""The SQL the pages send: the Snowflake spellings, DuckDB's epoch arithmetic, the
metrics columns found under the names the monitor gives them."""

from __future__ import annotations

import pytest

from elastic_channels.dashboard import metrics_sql as m
from elastic_channels.dashboard import sales_sql as q
from elastic_channels.dashboard.dialect import DUCKDB, SNOWFLAKE
from elastic_channels.snowflake.ddl import METRICS_COLUMNS


def test_snowflake_spellings() -> None:
    sql, params = q.latest_sales(SNOWFLAKE, "r", "2026-12-01T10:00:00+00:00")
    assert "METADATA$ROW_LAST_COMMIT_TIME" in sql and " _COMMIT_TIME" not in sql
    assert "TIMESTAMPDIFF(MILLISECOND, SALE_TIME, METADATA$ROW_LAST_COMMIT_TIME)" in sql
    assert params == ("r", "2026-12-01T10:00:00+00:00")
    delay, _ = q.recent_delay(SNOWFLAKE, "r", "2026-12-01T10:00:00+00:00")
    assert (
        "APPROX_PERCENTILE(" in delay and "DATEADD(SECOND, -10, CAST(? AS TIMESTAMP_TZ))" in delay
    )
    assert "TIME_SLICE(WINDOW_END, 30, 'SECOND')" in m.fleet_series(
        SNOWFLAKE, "r", m.MetricsColumns.resolve(n for n, _ in METRICS_COLUMNS), 30,
        fleet_rows=False,
    ).sql  # fmt: skip


# Instants around millisecond, second and bucket edges, before and after the epoch.
_INSTANTS = [
    "1969-12-31 23:59:59.999999+00", "1970-01-01 00:00:00+00", "1970-01-01 00:00:00.000999+00",
    "1970-01-01 00:00:00.001+00", "2026-12-02 06:13:29.999999+00", "2026-12-02 06:13:30+00",
    "2026-12-02 06:13:30.0005+00", "2026-12-02 06:13:44.999+00", "2026-12-02 06:13:45.0001+00",
    "2000-01-03 00:00:00+00", "2000-01-02 23:59:59.9995+00", "2262-04-11 23:47:16.854775+00",
]  # fmt: skip


def _duck(sql: str) -> list:
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    values = ", ".join(f"(TIMESTAMPTZ '{t}')" for t in _INSTANTS)
    return con.execute(f"WITH t(x) AS (VALUES {values}) {sql}").fetchall()


def test_duckdb_diff_ms_is_date_diff_in_milliseconds() -> None:
    got = _duck(
        f"SELECT a.x, b.x, {DUCKDB.diff_ms('a.x', 'b.x')}, date_diff('millisecond', a.x, b.x) "
        "FROM t a, t b WHERE a.x > TIMESTAMPTZ '1970-01-01 00:00:00+00' "
        "AND b.x > TIMESTAMPTZ '1970-01-01 00:00:00+00'"
    )
    assert len(got) == 100
    assert [r[2] for r in got] == [r[3] for r in got]


@pytest.mark.parametrize("seconds", [1, 15, 30, 60, 7, 86400])
def test_duckdb_bucket_is_aligned_on_the_epoch(seconds: int) -> None:
    got = _duck(f"SELECT x, {DUCKDB.bucket('x', seconds)}, epoch_us(x) FROM t")
    for x, bucket, us in got:
        start = us // (seconds * 10**6) * seconds * 10**6  # Python's // floors
        assert int(bucket.timestamp() * 10**6) == start, (x, bucket)
        assert bucket <= x < bucket + __import__("datetime").timedelta(seconds=seconds)


def test_metrics_columns_of_the_setup_ddl_resolve() -> None:
    cols = m.MetricsColumns.resolve(name for name, _ in METRICS_COLUMNS)
    assert cols.missing_required() == []
    for concept in ("mb_s", "ack_p99", "visible_p99", "behind_p99", "resends", "retries",
                    "errors", "workers", "is_fleet", "cpu_mcores", "rss"):  # fmt: skip
        assert cols.has(concept), concept
    assert cols.col("ack_p99") == "ACK_LATENCY_P99_MS"


def test_metrics_without_optional_columns() -> None:
    cols = m.MetricsColumns.resolve(["run_id", "WORKER_ID", "WINDOW_END", "MB_PER_SEC"])
    assert cols.missing_required() == [] and not cols.has("is_fleet")
    sql = m.fleet_series(DUCKDB, "r", cols, 5).sql
    assert 'sum(MB_PER_SEC) AS "MB/s"' in sql and "IS_FLEET" not in sql
    assert m.MetricsColumns.resolve(["RUN_ID"]).missing_required() == ["WORKER_ID", "WINDOW_END"]
