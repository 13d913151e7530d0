"""Two pods that claim one worker id: both are kept (rows keyed by worker id and pod
name, the fleet row adds both up), and the clash is counted, logged and reported."""

from __future__ import annotations

import itertools
import json
import logging
import random

import pytest
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


# --- one stream (a file, stdin): no pod names from the source ------------------------


def stamped(seed: int, host: str, monkeypatch, start: float = EPOCH0 + 0.5) -> FakeWorker:
    """A worker whose lines carry ``host`` (the worker reads it from POD_NAME, as a
    Kubernetes Job sets it)."""
    monkeypatch.setenv("POD_NAME", host)
    rng = random.Random(seed)
    w = FakeWorker(RUN, 0, start, 5.0)
    while w.now < start + 12:
        w.step(0.25, rng)
    w.finish()
    return w


def one_stream(*lines: dict) -> list[str]:
    """The workers' lines interleaved on one text stream, as ``kubectl logs`` prints."""
    return [json.dumps(x) for group in itertools.zip_longest(*lines) for x in group if x]


def test_the_worker_stamps_its_host_on_every_line(monkeypatch) -> None:
    w = stamped(1, "pod-x", monkeypatch)
    assert {x["host"] for x in w.lines} == {"pod-x"}
    assert w.summary()["host"] == "pod-x"
    monkeypatch.delenv("POD_NAME")
    monkeypatch.setenv("HOSTNAME", "host-y")
    assert FakeWorker(RUN, 0, EPOCH0, 5.0).summary()["host"] == "host-y"


def test_two_workers_with_one_worker_id_on_one_stream_are_both_kept_and_reported(
    monkeypatch, caplog
) -> None:
    """Lines from a file or stdin carry no pod from the source: the host each worker
    stamps keeps them apart, as pod names do on ``--k8s``."""
    a, b = stamped(1, "pod-a", monkeypatch), stamped(2, "pod-b", monkeypatch)
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for text in one_stream(a.lines, b.lines):
            assert monitor.feed(text)
        monitor.feed(json.dumps(a.summary()))
        monitor.feed(json.dumps(b.summary()))
        monitor.flush(final=True)
    fleet = fleet_windows(sink, RUN)
    assert [f["window_start"] for f in fleet] == [x["window_start"] for x in a.lines]
    for f, xa, xb in zip(fleet, a.lines, b.lines, strict=True):
        assert f["workers"] == 2
        assert f["rows"] == xa["rows"] + xb["rows"]
    # Each has rows of its own: the first host's key as a lone worker's always did (no
    # pod name), the second's are named after it.
    held = sink.read_rows(RUN, fleet=False)
    assert sorted(
        (r["RAW"]["host"], r["POD_NAME"] or "", r["WINDOW_START"].timestamp()) for r in held
    ) == sorted(
        [("pod-a", "", x["window_start"]) for x in a.lines]
        + [("pod-b", "pod-b", x["window_start"]) for x in b.lines]
    )
    summaries = sink.read_rows(RUN, summary=True)
    assert sorted((r["RAW"]["host"], r["POD_NAME"], r["ROWS_ACKED"]) for r in summaries) == [
        ("pod-a", None, a.summary()["rows_acked"]),
        ("pod-b", "pod-b", b.summary()["rows_acked"]),
    ]
    assert monitor.book.finished()
    assert monitor.tally.clashes == {0: {"pod-a", "pod-b"}}
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("worker 0" in m and "pod-a" in m and "pod-b" in m for m in logged) == 1
    assert "worker 0 is claimed by 2 pods (pod-a, pod-b)" in "\n".join(monitor.tally.report())

    again = Monitor(RUN, sink, grace_s=0.0, visible=False)  # a restarted monitor
    again.resume()
    assert again.tally.clashes == {0: {"pod-a", "pod-b"}}
    for text in one_stream(b.lines, a.lines):  # pod-b first this time: keyed as before
        again.feed(text)
    assert again.tick(now=EPOCH0 + 1000) == 0
    assert all(f["workers"] == 2 for f in fleet_windows(sink, RUN))


def _unstamped(lines: list[dict]) -> list[dict]:
    return [{k: v for k, v in x.items() if k != "host"} for x in lines]


def test_two_unstamped_workers_with_one_worker_id_on_one_stream_are_reported(
    monkeypatch, caplog, capsys
) -> None:
    """Lines without a host (an older worker): nothing tells the two workers apart, but
    two different lines of one window at once are a clash, counted and reported by
    worker id, never a silent overwrite."""
    a, b = stamped(1, "pod-a", monkeypatch), stamped(2, "pod-b", monkeypatch)
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for _ in range(2):  # the stream read again counts nothing twice
            for text in one_stream(_unstamped(a.lines), _unstamped(b.lines)):
                assert monitor.feed(text)
        monitor.flush(final=True)
    n = len(a.lines)
    assert monitor.tally.doubled == {0: n}
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("worker 0" in m and "two different lines" in m for m in logged)
    assert len(logged) <= 5  # the first few, then counted
    report = "\n".join(monitor.tally.report())
    assert f"worker 0 sent two different lines for {n} window(s)" in report

    from elastic_channels.monitor.cli import _finish

    assert _finish(monitor) == 0  # the monitor's exit summary says it too
    assert f"worker 0 sent two different lines for {n} window(s)" in capsys.readouterr().err


@pytest.mark.parametrize("stamp", [True, False], ids=["host", "no-host"])
def test_a_restarted_worker_is_no_clash(monkeypatch, caplog, stamp: bool) -> None:
    """One worker (same host, same id) stops and starts again: its later lines, the
    window it restarted in too (one line before, one after: they do not overlap), are
    the same reporter's, not a clash; an older worker's lines (no host) alike."""
    a = stamped(1, "pod-a", monkeypatch)
    b = stamped(2, "pod-a", monkeypatch, start=a.lines[-1]["end"] + 0.5)
    assert a.lines[-1]["window_start"] == b.lines[0]["window_start"]
    lines = a.lines + b.lines if stamp else _unstamped(a.lines + b.lines)
    summary = b.summary() if stamp else _unstamped([b.summary()])[0]
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    with caplog.at_level(logging.WARNING, logger="elastic_channels.monitor"):
        for x in lines + lines:  # a stream read again too
            monitor.feed(json.dumps(x))
        monitor.feed(json.dumps(summary))
        monitor.flush(final=True)
    assert monitor.tally.clashes == {}
    assert monitor.tally.doubled == {}
    assert monitor.tally.report() == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert all(f["workers"] == 1 for f in fleet_windows(sink, RUN))


def test_a_multi_channel_summary_keys_as_its_windows(monkeypatch) -> None:
    """A worker of several channels merges its windows without a host (older lines
    alike), while its summary has one: the summary goes with the worker's windows."""
    a = stamped(1, "pod-a", monkeypatch)
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False)
    for x in _unstamped(a.lines):
        monitor.feed(json.dumps(x))
    monitor.feed(json.dumps(a.summary()))
    monitor.flush(final=True)
    assert monitor.book.finished()
    assert monitor.tally.clashes == {}
    summaries = sink.read_rows(RUN, summary=True)
    assert [(r["POD_NAME"], r["WINDOW_END"].timestamp()) for r in summaries] == [
        (None, a.lines[-1]["end"])
    ]
    again = Monitor(RUN, sink, grace_s=0.0, visible=False)
    again.resume()
    assert again.tally.clashes == {}
    assert again.book.finished()
