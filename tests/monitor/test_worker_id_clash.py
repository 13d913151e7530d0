"""Two pods that claim one worker id: both are kept (rows keyed by worker id and pod
name, the fleet row adds both up), and the clash is counted, logged and reported."""

from __future__ import annotations

import logging
import random

from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.monitor.monitor import Monitor, fleet_windows

RUN = "clash"


def worker(seed: int) -> FakeWorker:
    rng = random.Random(seed)
    w = FakeWorker(RUN, 0, EPOCH0 + 0.5, 5.0)
    while w.now < w.start + 12:
        w.step(0.25, rng)
    w.finish()
    return w


def test_two_pods_with_one_worker_id_are_both_kept_and_reported(caplog) -> None:
    a, b = worker(1), worker(2)
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for x in a.lines:
            monitor.feed(x, pod_name="pod-a", node_name="node-1")
        for x in b.lines:
            monitor.feed(x, pod_name="pod-b", node_name="node-2")
        monitor.feed(a.summary(), pod_name="pod-a", node_name="node-1")
        monitor.feed(b.summary(), pod_name="pod-b", node_name="node-2")
        monitor.flush(final=True)
    fleet = fleet_windows(sink, RUN)
    assert [f["window_start"] for f in fleet] == [x["window_start"] for x in a.lines]
    for f, xa, xb in zip(fleet, a.lines, b.lines, strict=True):
        assert f["workers"] == 2
        assert f["rows"] == xa["rows"] + xb["rows"]
    held = sink.read_rows(RUN, fleet=False)
    assert sorted((r["POD_NAME"], r["WINDOW_START"].timestamp()) for r in held) == sorted(
        [("pod-a", x["window_start"]) for x in a.lines]
        + [("pod-b", x["window_start"]) for x in b.lines]
    )
    summaries = sink.read_rows(RUN, summary=True)
    assert sorted((r["POD_NAME"], r["ROWS_ACKED"]) for r in summaries) == sorted(
        [("pod-a", a.summary()["rows_acked"]), ("pod-b", b.summary()["rows_acked"])]
    )
    assert monitor.tally.clashes == {0: {"pod-a", "pod-b"}}
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("worker 0" in m and "pod-a" in m and "pod-b" in m for m in logged) == 1
    assert "worker 0 is claimed by 2 pods (pod-a, pod-b)" in "\n".join(monitor.tally.report())


def test_a_restarted_monitor_keeps_both_pods_apart() -> None:
    """A monitor reading the same logs again finds both pods' rows in the table: it
    writes nothing again and the fleet rows still add both up."""
    a, b = worker(1), worker(2)
    sink = make_sink(duckdb_with_landing_table())
    first = Monitor(RUN, sink, grace_s=0.0, visible=False)
    for x in a.lines:
        first.feed(x, pod_name="pod-a")
    for x in b.lines:
        first.feed(x, pod_name="pod-b")
    first.flush(final=True)
    second = Monitor(RUN, sink, grace_s=0.0, visible=False)
    second.resume()
    assert second.tally.clashes == {0: {"pod-a", "pod-b"}}
    for x in a.lines:
        second.feed(x, pod_name="pod-a")
    for x in b.lines:
        second.feed(x, pod_name="pod-b")
    assert second.tick(now=EPOCH0 + 1000) == 0
    assert len(sink.read_rows(RUN, fleet=False)) == len(a.lines) + len(b.lines)
    assert all(f["workers"] == 2 for f in fleet_windows(sink, RUN))


def test_a_replacement_pod_does_not_hold_windows_back() -> None:
    """Pod A of worker 0 dies without a summary and pod B takes over the worker id: the
    windows after A's last are complete with B's line, not held for the grace period."""
    rng = random.Random(4)
    w = FakeWorker(RUN, 0, EPOCH0 + 0.5, 5.0)
    while w.now < w.start + 22:
        w.step(0.25, rng)
    w.finish()
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=1000.0, expected_workers=1, visible=False)
    for x in w.lines[:2]:
        monitor.feed(x, pod_name="pod-a")
    for x in w.lines[2:]:
        monitor.feed(x, pod_name="pod-b")
    monitor.tick(now=w.lines[-1]["end"] + 1.0)  # long before the grace period ends
    assert len(fleet_windows(sink, RUN)) == len(w.lines)
