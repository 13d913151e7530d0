"""A run id never leaves its value: every query the pages send binds it, on both
targets. ``a\\' OR 1=1 --`` is the red team's id: Snowflake reads ``\\'`` inside a
literal as a quote, so quoting by doubling ``'`` alone let it out (through the
emulator's Snowflake-dialect SQL API it returned 300 rows instead of 200)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest
from dashboard_support import LandedRun, sql

from elastic_channels.dashboard import metrics_sql as m
from elastic_channels.dashboard import run_progress
from elastic_channels.dashboard import sales_sql as q
from elastic_channels.dashboard.dialect import DUCKDB, SNOWFLAKE, Dialect
from elastic_channels.dashboard.source import EmulatorSource
from elastic_channels.dashboard.statement import Statement
from elastic_channels.snowflake.ddl import METRICS_COLUMNS

EVIL = "a\\' OR 1=1 --"
LAST = "2099-01-01T00:00:00+00:00"
METRICS = m.MetricsColumns.resolve(n for n, _ in METRICS_COLUMNS)


def _sales_queries(d: Dialect, run_id: str, last: str = LAST) -> dict[str, Statement]:
    """Every sales-table query; ``last``: the latest commit (an ISO time)."""
    return {
        "runs of the run": q.runs_aggregate(d).statement(d, run_id, None, None),
        "sales mix": q.sales_mix(d, run_id),
        "since": q.SALES_MIX.statement(d, run_id, "1970-01-01T00:00:00+00:00", last),
        "recent delay": q.recent_delay(d, run_id, last),
        "latest sales": q.latest_sales(d, run_id, last),
        "landed count": m.landed_count(d, run_id, q.TABLE, last),
        "landed": m.landed(run_id, q.TABLE),
    }


def _metrics_queries(d: Dialect, run_id: str) -> dict[str, Statement]:
    return {
        "totals": m.totals(d, run_id, METRICS),
        "workers": m.workers(d, run_id, METRICS, 10),
        "fleet": m.fleet_series(d, run_id, METRICS, 1),
        "windows": m.fleet_series(d, run_id, METRICS, 1, fleet_rows=False),
        "window seconds": m.window_seconds(d, run_id, METRICS),
        "target": m.target_bps(d, run_id, METRICS),
        "progress": run_progress.progress(run_id),
    }


def _selected(rows: list[dict[str, Any]]) -> int:
    """How many of the table's rows a result reflects: a count it gives, else 0 for one
    row of nothing (an aggregate of no rows), else the rows returned."""
    if len(rows) == 1:
        row = rows[0]
        for key in ("SALES", "LANDED", "WORKERS"):
            if key in row:
                return int(row[key] or 0)
        if all(v in (None, 0) for v in row.values()):
            return 0
    return len(rows)


@pytest.mark.parametrize("dialect", [DUCKDB, SNOWFLAKE], ids=lambda d: d.name)
def test_no_value_is_written_into_the_sql(dialect: Dialect) -> None:
    marker = "run-7f3e'x"
    queries = {**_sales_queries(dialect, marker), **_metrics_queries(dialect, marker)}
    for name, stmt in queries.items():
        assert marker not in stmt.sql, name
        assert marker in stmt.params, name
        assert "2099" not in stmt.sql, name  # times are bound too


@pytest.mark.parametrize("live", [False, True], ids=["files", "control API"])
def test_the_emulator_selects_nothing_for_the_evil_id(with_metrics: LandedRun, live: bool) -> None:
    """On the emulator's data dir, bound (its files) or written in by DuckDB's complete
    rules (its control query API, which takes no parameters)."""
    from elastic_channels.emulator import Emulator, EmulatorConfig

    run = with_metrics
    ((rows, last),) = sql(run.data_dir, "SELECT count(*), max(_COMMIT_TIME) FROM RESORT_SALES")
    assert rows == run.rows_landed > 0
    src = EmulatorSource(run.data_dir)
    emu = Emulator(EmulatorConfig(data_dir=run.data_dir)).start() if live else None
    try:
        assert src.is_live() == live
        iso = last.isoformat()
        real = {
            **_sales_queries(DUCKDB, run.run_id, iso), **_metrics_queries(DUCKDB, run.run_id)
        }  # fmt: skip
        evil = {**_sales_queries(DUCKDB, EVIL, iso), **_metrics_queries(DUCKDB, EVIL)}
        for name, stmt in evil.items():
            got = src.rows(stmt)
            assert _selected(got) == 0, (name, got[:3])
            assert _selected(src.rows(real[name])) > 0, name  # the real run's rows are there
    finally:
        if emu is not None:
            emu.stop()


@pytest.fixture
def snowflake_api() -> Iterator[Any]:
    """The emulator's SQL API (Snowflake's dialect, read by sqlglot: ``\\'`` is a quote
    inside a literal) over a table of 200 rows of run ``r1`` and 100 of ``r2``."""
    from elastic_channels.emulator.storage.schema import create_table_sql
    from elastic_channels.model import COLUMNS
    from elastic_channels.monitor.sql_client import SqlApiClient, local_transport

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(create_table_sql(q.TABLE, COLUMNS))
    t0 = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.timezone.utc)
    names = [n for n, _ in COLUMNS]
    for run_id, n in (("r1", 200), ("r2", 100)):
        for i in range(n):
            row = {
                "RUN_ID": run_id, "TXID": f"{run_id}-{i}", "RESORT": "Vail",
                "CATEGORY": "MERCH", "ITEM": "Beanie", "CUSTOMER_TYPE": "STAFF",
                "PAYMENT_METHOD": "CASH", "QUANTITY": 1, "AMOUNT": 34,
                "SALE_TIME": t0 + dt.timedelta(seconds=i / 100),
            }  # fmt: skip
            values = [row.get(c, 0) for c in names]
            marks = ", ".join("?" for _ in [*names, 0])
            con.execute(f"INSERT INTO {q.TABLE} VALUES ({marks})", [*values, row["SALE_TIME"]])
    yield SqlApiClient(local_transport(con))
    con.close()


def _count(client: Any, stmt: Statement) -> int:
    return _selected(client.execute(stmt.sql, stmt.params).dicts())


def test_snowflakes_reading_selects_nothing_for_the_evil_id(snowflake_api: Any) -> None:
    """The Snowflake-dialect queries, values sent as the SQL API's ``bindings``."""
    for name, stmt in _sales_queries(SNOWFLAKE, EVIL).items():
        assert _count(snowflake_api, stmt) == 0, name
    assert _count(snowflake_api, m.landed("r1", q.TABLE)) == 200
    assert _count(snowflake_api, q.sales_mix(SNOWFLAKE, "r1")) == 200  # one group
    # What binding replaced: '' doubled and no more. Snowflake's reading lets the id out.
    doubled = "'" + EVIL.replace("'", "''") + "'"
    leaked = snowflake_api.execute(f"SELECT count(*) AS N FROM {q.TABLE} WHERE RUN_ID = {doubled}")
    assert leaked.rows == [(300,)]
