"""Ingest-to-visible fails on its own: a landing table without row timestamps (a
Snowflake-managed Iceberg table, an old native one) leaves the visible columns NULL
and never stops the worker and fleet rows; ``--no-visible`` skips the read."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import duckdb
import pytest
from monitor_support import EPOCH0, FakeWorker, make_sink, sql_api_server
from test_cli import monitor_cli, worker_logs, write_profile

from elastic_channels.monitor.monitor import Monitor, fleet_windows
from elastic_channels.monitor.sql_client import SqlError

RUN = "novis"
VISIBLE = ("visible_rows", "visible_p50_ms", "visible_p99_ms", "visible_avg_ms")


def landing_table(con: duckdb.DuckDBPyConnection, *, row_timestamps: bool) -> None:
    """RESORT_SALES with 300 rows of the run; without row timestamps it has no commit
    time column, so ``METADATA$ROW_LAST_COMMIT_TIME`` cannot be read off it."""
    con.execute("SET TimeZone = 'UTC'")
    commit = ', "_COMMIT_TIME" TIMESTAMPTZ' if row_timestamps else ""
    con.execute(
        f'CREATE TABLE RESORT_SALES ("RUN_ID" VARCHAR, "WORKER_ID" INTEGER, '
        f'"SALE_TIME" TIMESTAMPTZ{commit})'
    )
    values = [(RUN, 0, EPOCH0 + 0.01 * i, EPOCH0 + 0.01 * i + 0.5) for i in range(300)]
    if row_timestamps:
        con.executemany(
            "INSERT INTO RESORT_SALES VALUES (?, ?, to_timestamp(?), to_timestamp(?))", values
        )
    else:
        con.executemany(
            "INSERT INTO RESORT_SALES VALUES (?, ?, to_timestamp(?))", [v[:3] for v in values]
        )


class CountingSink:
    """The real sink, counting the ingest-to-visible queries; the first ``failures`` of
    them fail as a busy target would."""

    def __init__(self, sink, failures: int = 0):
        self.sink, self.failures, self.visible_calls = sink, failures, 0

    def visible_latency(self, *args, **kwargs):
        self.visible_calls += 1
        if self.failures:
            self.failures -= 1
            raise SqlError("HTTP 503: service unavailable [SELECT ...]")
        return self.sink.visible_latency(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.sink, name)


def lines() -> list[dict]:
    rng = random.Random(5)
    out = []
    for wid in range(2):
        w = FakeWorker(RUN, wid, EPOCH0 + 0.2, 5.0)
        while w.now < w.start + 12:
            w.step(0.3, rng)
        w.finish()
        out += [*w.lines, w.summary()]
    return out


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_table_without_row_timestamps_writes_every_row_with_visible_unknown(caplog):
    con = duckdb.connect()
    landing_table(con, row_timestamps=False)
    sink = CountingSink(make_sink(con))
    monitor = Monitor(RUN, sink, grace_s=0.0, settle_s=1.0)
    fed = lines()
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for line in fed[: len(fed) // 2]:
            monitor.feed(line)
        assert monitor.tick(now=EPOCH0 + 100) > 0
        for line in fed[len(fed) // 2 :]:
            monitor.feed(line)
        monitor.tick(now=EPOCH0 + 200)
        assert monitor.wait_visible(timeout_s=0.1)  # nothing to wait for: unknown
        monitor.flush(final=True)
    assert monitor.pending() == 0 and monitor.last_error is None
    windows = [x for x in fed if x["type"] == "window"]
    assert len(sink.read_rows(RUN, fleet=False)) == len(windows)
    fleet = fleet_windows(sink, RUN)
    assert {f["window_start"] for f in fleet} == {x["window_start"] for x in windows}
    assert sum(f["rows"] for f in fleet) == sum(x["rows"] for x in windows)
    assert all(f[k] is None for f in fleet for k in VISIBLE)  # unknown, not 0
    # One query found out, one warning said so and what to do; no read after it.
    assert sink.visible_calls == 1
    (warning,) = warnings_of(caplog)
    assert "METADATA$ROW_LAST_COMMIT_TIME" in warning and "elastic-channels setup" in warning
    assert "Iceberg" in warning and "--no-visible" in warning
    assert "Binder Error" in (monitor.reader.error or "")


def test_no_visible_never_reads_the_landing_table(caplog):
    con = duckdb.connect()
    landing_table(con, row_timestamps=True)
    sink = CountingSink(make_sink(con))
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for line in lines():
            monitor.feed(line)
        monitor.tick(now=EPOCH0 + 100)
        monitor.flush(final=True)
    assert sink.visible_calls == 0 and not warnings_of(caplog)
    fleet = fleet_windows(sink, RUN)
    assert fleet and all(f[k] is None for f in fleet for k in VISIBLE)


def test_a_read_that_fails_for_another_reason_is_tried_again_later(caplog):
    """A busy target: the rows go with visible unknown, the read waits ``retry_s`` and
    then fills in the figures (the table has them)."""
    con = duckdb.connect()
    landing_table(con, row_timestamps=True)
    sink = CountingSink(make_sink(con), failures=2)
    monitor = Monitor(RUN, sink, grace_s=0.0, settle_s=1.0)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for line in lines():
            monitor.feed(line)
        t = EPOCH0 + 100
        assert monitor.tick(now=t) > 0
        assert all(f["visible_rows"] is None for f in fleet_windows(sink, RUN))
        monitor.tick(now=t + 1)  # within retry_s: not read again
        assert sink.visible_calls == 1
        monitor.tick(now=t + monitor.reader.retry_s)  # fails again, quietly
        monitor.tick(now=t + 2 * monitor.reader.retry_s)
    assert sink.visible_calls == 3
    assert len(warnings_of(caplog)) == 1 and "tried again" in warnings_of(caplog)[0]
    by_start = {f["window_start"]: f["visible_rows"] for f in fleet_windows(sink, RUN)}
    assert sum(by_start.values()) == 300 and by_start[EPOCH0] == 300


def test_the_monitor_command_on_a_table_without_row_timestamps(tmp_path: Path) -> None:
    con = duckdb.connect()
    landing_table(con, row_timestamps=False)
    with sql_api_server(con) as (url, pem):
        profile = write_profile(tmp_path, url, pem)
        paths, workers = worker_logs(tmp_path)
        proc = monitor_cli(*map(str, paths), "--profile", str(profile))
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.count("refuses METADATA$ROW_LAST_COMMIT_TIME") == 1, proc.stderr
        assert "ingest-to-visible unknown (NULL)" in proc.stderr
        rows = con.execute(
            "SELECT count(*) FILTER (WHERE IS_FLEET), count(*) FILTER (WHERE NOT IS_FLEET "
            "AND NOT IS_SUMMARY), count(*) FILTER (WHERE IS_SUMMARY), "
            "count(INGEST_TO_VISIBLE_ROWS) FROM ELASTIC_K8S_METRICS WHERE RUN_ID = 'cli-run'"
        ).fetchone()
    windows = sum(len(w.lines) for w in workers)
    starts = {x["window_start"] for w in workers for x in w.lines}
    assert rows == (len(starts), windows, len(workers), 0)
