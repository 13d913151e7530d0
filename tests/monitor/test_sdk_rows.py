"""The SDK's figures in ELASTIC_K8S_METRICS (issue #32): worker, fleet and summary rows
get SDK (the ``sdk`` object, VARIANT) and SDK_THROTTLED; a table made before them gets
the columns and keeps its rows."""

from __future__ import annotations

import json
import random

from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.monitor.monitor import Monitor
from elastic_channels.monitor.rows import from_row, worker_row
from elastic_channels.monitor.sql_client import SqlApiClient, local_transport
from elastic_channels.snowflake.ddl import METRICS_COLUMNS

RUN = "sdk-rows"


def sdk(durable: int, memory: int, mean: float, p99: float) -> dict:
    return {
        "files": {"durable": durable, "transient": 0},
        "throttle": {"memory_limit": memory, "input_buffer_full": 0},
        "ms": {"file_upload": {"n": 2, "mean": mean, "p50": mean, "p99": p99, "max": p99}},
    }


def fleet_with_sdk(seconds: float = 6.0) -> list[FakeWorker]:
    rng = random.Random(32)
    workers = [FakeWorker(RUN, wid, EPOCH0 + 0.2, 1.0) for wid in range(2)]
    for w in workers:
        while w.now < w.start + seconds:
            w.step(0.25, rng)
        w.finish()
        for i, line in enumerate(w.lines):  # worker 1 is throttled in its third window
            line["sdk"] = sdk(1 + w.worker_id, 2 if (w.worker_id, i) == (1, 2) else 0,
                              10.0 * (1 + w.worker_id), 50.0 * (1 + w.worker_id))  # fmt: skip
    return workers


def feed_all(monitor: Monitor, workers: list[FakeWorker]) -> None:
    for w in workers:
        for line in w.lines:
            monitor.feed(line)
    monitor.tick(now=EPOCH0 + 100)


def rows_of(con, fleet: bool) -> list[dict]:
    cur = con.execute(
        "SELECT * FROM ELASTIC_K8S_METRICS WHERE IS_FLEET = ? AND NOT coalesce(IS_SUMMARY, "
        "FALSE) ORDER BY WORKER_ID, WINDOW_START",
        [fleet],
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def test_worker_and_fleet_rows_carry_the_sdk_figures():
    con = duckdb_with_landing_table()
    monitor = Monitor(RUN, make_sink(con), grace_s=0.0)
    workers = fleet_with_sdk()
    feed_all(monitor, workers)
    worker_rows = rows_of(con, fleet=False)
    assert len(worker_rows) == sum(len(w.lines) for w in workers)
    for r in worker_rows:
        back = from_row(r)["sdk"]
        assert back["files"]["durable"] == 1 + r["WORKER_ID"]
        assert r["SDK_THROTTLED"] == back["throttle"]["memory_limit"]
    fleet = rows_of(con, fleet=True)
    both = [from_row(r) for r in fleet if r["WORKERS_REPORTING"] == 2]
    assert both, "no fleet window had both workers"
    for f in both:
        assert f["sdk"]["files"]["durable"] == 3  # 1 + 2: counts summed
        ms = f["sdk"]["ms"]["file_upload"]
        assert ms["n"] == 4 and ms["mean"] == 15.0 and ms["p99"] == 100.0  # weighted; largest
    assert sum(int(r["SDK_THROTTLED"] or 0) for r in fleet) == 2


def test_a_line_without_sdk_figures_leaves_the_columns_null():
    (w,) = fleet_with_sdk()[:1]
    line = dict(w.lines[0])
    del line["sdk"]
    row = worker_row(line)
    assert row["SDK"] is None and row["SDK_THROTTLED"] is None
    assert "sdk" not in from_row(row)
    with_sdk = worker_row(w.lines[0])
    assert json.loads(with_sdk["SDK"]) == w.lines[0]["sdk"]


def test_a_table_made_before_the_sdk_columns_gets_them_and_keeps_its_rows():
    con = duckdb_with_landing_table()
    old = ", ".join(f'"{n}" {t}' for n, t in METRICS_COLUMNS if not n.startswith("SDK"))
    SqlApiClient(local_transport(con)).execute(f"CREATE TABLE ELASTIC_K8S_METRICS ({old})")
    workers = fleet_with_sdk()
    line = workers[0].lines[0]
    con.execute(  # a row an older monitor wrote
        "INSERT INTO ELASTIC_K8S_METRICS (RUN_ID, WORKER_ID, IS_FLEET, IS_SUMMARY, "
        "WINDOW_START, ROWS_APPENDED) VALUES (?, 0, FALSE, FALSE, to_timestamp(?), ?)",
        [RUN, line["window_start"], line["rows"]],
    )
    monitor = Monitor(RUN, make_sink(con), grace_s=0.0)  # ensure_table adds SDK, SDK_THROTTLED
    feed_all(monitor, workers)
    rows = rows_of(con, fleet=False)
    assert len(rows) == sum(len(w.lines) for w in workers)  # the old row updated, not doubled
    assert all(from_row(r)["sdk"]["files"]["durable"] >= 1 for r in rows)
