"""BILLABLE_BYTES in ELASTIC_K8S_METRICS (issue #32): a worker row holds its window's
billable bytes, a fleet row the workers' added up, a summary row the worker's run."""

from __future__ import annotations

import random

from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.monitor.monitor import Monitor

RUN = "billable-rows"


def test_worker_fleet_and_summary_rows_carry_billable_bytes() -> None:
    rng = random.Random(32)
    workers = [FakeWorker(RUN, wid, EPOCH0 + 0.2, 1.0) for wid in range(2)]
    for w in workers:
        while w.now < w.start + 4.0:
            w.step(0.25, rng)
        w.finish()
        w.lines.append(w.summary())
        for line in w.lines:  # a third of each window's bytes are values
            key = "bytes_sent" if line.get("type") == "summary" else "bytes"
            line["billable_bytes"] = int(line.get(key) or 0) // 3
    con = duckdb_with_landing_table()
    monitor = Monitor(RUN, make_sink(con), grace_s=0.0)
    for w in workers:
        for line in w.lines:
            assert monitor.feed(line)
    monitor.tick(now=EPOCH0 + 100)
    rows = con.execute(
        "SELECT IS_FLEET, coalesce(IS_SUMMARY, FALSE), WINDOW_START, WORKER_ID, BILLABLE_BYTES, "
        "BYTES_APPENDED FROM ELASTIC_K8S_METRICS WHERE RUN_ID = ?",
        [RUN],
    ).fetchall()
    workers_rows = [r for r in rows if not r[0] and not r[1]]
    assert workers_rows and all(r[4] == r[5] // 3 for r in workers_rows)
    fleet = [r for r in rows if r[0] and not r[1]]
    assert fleet
    for f in fleet:
        mine = [r[4] for r in workers_rows if r[2] == f[2]]
        assert f[4] == sum(mine)
    summaries = [r for r in rows if r[1] and not r[0]]
    assert sorted(r[3] for r in summaries) == [0, 1]
    assert all(r[4] is not None and r[4] > 0 for r in summaries)
