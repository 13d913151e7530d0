"""The Kubernetes source with the real ``kubernetes`` client, against a fake API server
on 127.0.0.1 that answers the requests it makes: the kubeconfig read by
``load_core_api`` (a token user), the run's pods watched by label (events streamed in
chunks that cut them anywhere; one watch ended by a 410 Gone event, one closed, each
watched again), each running pod's ``worker`` log followed as the kubelet streams it
(chunks that cut lines anywhere; streams dropped mid-line, once while the pod runs and
once as it ends), pods going Pending -> Running -> Succeeded/Failed, and a pod deleted
while no watch is open. The monitor counts every window once, names pod and node on
the rows, and sees the end when every pod is done; so does the monitor command, run
with KUBECONFIG naming the fake server."""

from __future__ import annotations

import json
import queue
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from fake_kube_api import (
    MONITOR_LABELS,
    NS,
    RUN,
    WAIT_S,
    FakeCluster,
    LogDrop,
    running_cluster,
    worker_labels,
)
from monitor_support import (
    EPOCH0,
    FakeWorker,
    duckdb_with_landing_table,
    make_sink,
    sql_api_server,
)
from test_cli import REPO, write_profile

from elastic_channels.monitor import k8s
from elastic_channels.monitor.k8s import (
    ENDED_POD_READS,
    PodLogSource,
    feed_until_done,
    load_core_api,
    run_selector,
)
from elastic_channels.monitor.monitor import Monitor
from elastic_channels.monitor.sink import SqlMetricsSink
from elastic_channels.monitor.sources import pump
from elastic_channels.monitor.target import profile_sink


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCluster]:
    """The fake API server on an ephemeral port, and a kubeconfig (a token user) for it
    in KUBECONFIG; no in-cluster config, no proxy."""
    with running_cluster(tmp_path, monkeypatch) as fake:
        yield fake


# --- the workers -------------------------------------------------------------------------


def worker_log(wid: int, seconds: float, *, crash: bool = False) -> tuple[bytes, FakeWorker]:
    """A worker's container log: the SDK's first line, its window lines, and its summary
    (a crashed worker: a traceback instead)."""
    rng = random.Random(100 + wid)
    w = FakeWorker(RUN, wid, EPOCH0 + 0.1 * wid, 5.0)
    while w.now < w.start + seconds:
        w.step(0.3, rng)
    text = "INFO sdk: opening client\n"
    if crash:
        text += "".join(json.dumps(x) + "\n" for x in w.lines)
        text += "Traceback (most recent call last):\n  ...\nRuntimeError: channel invalidated\n"
        return text.encode(), w
    w.finish()
    text += "".join(json.dumps(x) + "\n" for x in w.lines)
    return (text + json.dumps(w.summary()) + "\n").encode(), w


def mid_line(log: bytes, n: int) -> int:
    """An offset in the middle of the ``n``-th line (0-based; negative from the end)."""
    ends = [i for i, b in enumerate(log) if b == ord("\n")]
    starts = [0, *[i + 1 for i in ends[:-1]]]
    return (starts[n] + ends[n]) // 2


def pieces(log: bytes, n: int, seed: int) -> list[bytes]:
    """``log`` as the container writes it: ``n`` pieces that cut lines anywhere."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(log)), n - 1))
    return [log[a:b] for a, b in zip([0, *cuts], [*cuts, len(log)], strict=True)]


@dataclass
class Following:
    source: PodLogSource
    monitor: Monitor
    sink: SqlMetricsSink
    done: threading.Event


def follow_run(expected_workers: int, clock: Callable[[], float] = time.time) -> Following:
    """The product's path: ``load_core_api`` (the kubeconfig), a ``PodLogSource`` on the
    run's selector, ``feed_until_done``, and a monitor pumped from the queue."""
    lines: queue.Queue = queue.Queue()
    source = PodLogSource(load_core_api(), NS, run_selector(RUN), lines, retry_s=0.05)
    sink = make_sink(duckdb_with_landing_table())
    # Nothing lands in this test: no ingest-to-visible to wait for.
    monitor = Monitor(RUN, sink, grace_s=0.0, expected_workers=expected_workers,
                      visible=False, clock=clock)  # fmt: skip
    done = threading.Event()

    def run() -> None:
        pump(monitor, lines, 1, tick_s=0.05)
        done.set()

    source.start()
    threading.Thread(target=feed_until_done, args=(source, lines, 0.05), daemon=True).start()
    threading.Thread(target=run, daemon=True, name="pump").start()
    return Following(source, monitor, sink, done)


def assert_rows(sink: SqlMetricsSink, workers: dict[str, tuple[FakeWorker, str]]) -> None:
    """The table holds each worker line once, with its pod and node, and fleet windows
    that add up every worker's line of the window exactly once."""
    rows = sink.read_rows(RUN, fleet=False)
    expected = {
        (w.worker_id, x["window_start"]): (x["rows"], x["bytes"], pod, node)
        for pod, (w, node) in workers.items() for x in w.lines
    }  # fmt: skip
    got = {
        (r["WORKER_ID"], r["WINDOW_START"].timestamp()):
            (r["ROWS_APPENDED"], r["BYTES_APPENDED"], r["POD_NAME"], r["NODE_NAME"])
        for r in rows
    }  # fmt: skip
    assert len(rows) == len(expected)
    assert got == expected
    fleet = sink.read_rows(RUN, fleet=True)
    starts = sorted({x["window_start"] for w, _ in workers.values() for x in w.lines})
    assert [r["WINDOW_START"].timestamp() for r in fleet] == starts
    for r in fleet:
        ws = r["WINDOW_START"].timestamp()
        lines = [x for w, _ in workers.values() for x in w.lines if x["window_start"] == ws]
        assert (r["ROWS_APPENDED"], r["BYTES_APPENDED"], r["WORKERS_REPORTING"]) == (
            sum(x["rows"] for x in lines), sum(x["bytes"] for x in lines), len(lines),
        ), ws  # fmt: skip


# --- the tests ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "clock",
    [lambda: EPOCH0 + 30, time.time],
    # The monitor's clock just after the run: every window is held, a line read again
    # meets the line held; or months later: written windows are pruned at once, a line
    # read again meets the row written (see pruning.py).
    ids=["windows-held", "windows-pruned"],
)
def test_the_real_client_follows_the_runs_pods_and_counts_every_window_once(
    cluster: FakeCluster, clock: Callable[[], float]
) -> None:
    (log0, w0), (log1, w1) = worker_log(0, 21), worker_log(1, 21)
    log2, w2 = worker_log(2, 9, crash=True)
    other, _ = worker_log(0, 6)
    cluster.add("worker-0", worker_labels())
    cluster.add("worker-1", worker_labels())
    cluster.add("elastic-monitor-5c9d", MONITOR_LABELS, "Running", "node-c", b"monitor up\n")
    cluster.add("other-worker-0", worker_labels("other-run"), "Running", "node-c",
                other.replace(b'"run_id": "api-run"', b'"run_id": "other-run"'))  # fmt: skip
    # worker-1's first stream dies mid-line while it runs; worker-0's last one as it ends.
    cluster.log_drops["worker-1"] = LogDrop(mid_line(log1, 3))
    cluster.log_drops["worker-0"] = LogDrop(mid_line(log0, -2), after_end=True)
    following = follow_run(expected_workers=3, clock=clock)
    try:
        cluster.update("worker-0", node="node-a")  # scheduled, still Pending
        cluster.update("worker-0", phase="Running")
        cluster.update("worker-1", node="node-b")
        written = {"worker-0": pieces(log0, 6, 1), "worker-1": pieces(log1, 6, 2),
                   "worker-2": pieces(log2, 3, 3)}  # fmt: skip
        cluster.write_log("worker-0", written["worker-0"].pop(0))
        cluster.update("worker-1", phase="Running")
        cluster.add("worker-2", worker_labels())
        cluster.end_watch("gone")  # the watch cache moved on: 410, the client watches again
        cluster.update("worker-2", node="node-a", phase="Running")
        for step in range(6):
            for name, left in written.items():
                if left:
                    cluster.write_log(name, left.pop(0))
            if step == 2:
                cluster.update("worker-2", phase="Failed")  # its last piece: it crashed
            if step == 3:
                cluster.end_watch("close")  # a watch the server ends
            time.sleep(0.03)
        cluster.update("worker-0", phase="Succeeded")
        cluster.update("worker-1", phase="Succeeded")
        assert following.done.wait(WAIT_S), (
            "the source never saw the end of the run",
            cluster.requests,
        )
    finally:
        following.source.stop()

    watches = cluster.watches()
    assert len(watches) == 3  # the first, after the 410, after the close
    for w in watches:
        assert w.query["labelSelector"] == run_selector(RUN)
        assert w.query["watch"].lower() == "true" and int(w.query["timeoutSeconds"]) > 0
        assert "resourceVersion" not in w.query  # each watch lists the pods anew
    # Only the run's worker pods: not the monitor's pod, not another run's.
    assert cluster.log_reads() == {"worker-0": 2, "worker-1": 2, "worker-2": 1}
    for r in cluster.requests:
        if r.path.endswith("/log"):
            assert (r.query["container"], r.query["follow"].lower()) == ("worker", "true")
    assert all(r.status == 200 for r in cluster.requests), cluster.requests
    assert following.source.reconnects == 2
    monitor = following.monitor
    assert monitor.other_run_lines == 0
    # The SDK's first line of each read and worker-2's traceback; never a cut-off line.
    assert monitor.garbage_lines == 2 + 2 + 1 + 3
    assert monitor.pending() == 0
    workers = {"worker-0": (w0, "node-a"), "worker-1": (w1, "node-b"), "worker-2": (w2, "node-a")}
    assert_rows(following.sink, workers)
    summaries = following.sink.read_rows(RUN, fleet=False, summary=True)
    assert [(r["WORKER_ID"], r["ROWS_APPENDED"], r["BYTES_APPENDED"]) for r in summaries] == [
        (w.worker_id, w.summary()["rows_sent"], w.summary()["bytes_sent"])
        for w in (w0, w1)  # the finished ones; worker-2 crashed before its summary
    ]


def test_an_ended_pod_whose_log_cannot_be_read_is_given_up(cluster: FakeCluster) -> None:
    """A pod that failed on a node the API server no longer reaches (500 for its log):
    read a few times, then given up, so the run still ends."""
    cluster.add("worker-0", worker_labels(), "Failed", "node-lost")
    cluster.unreachable.add("worker-0")
    following = follow_run(expected_workers=1)
    try:
        assert following.done.wait(WAIT_S), (
            "an unreadable pod kept the run from ending",
            cluster.requests,
        )
    finally:
        following.source.stop()
    assert cluster.log_reads() == {"worker-0": ENDED_POD_READS}
    assert following.source.reconnects == ENDED_POD_READS - 1
    assert following.sink.read_rows(RUN, summary=None) == []


def test_a_silent_watch_is_taken_as_dead_and_watched_again(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pod watch's connection goes half-open (nothing comes, nothing ends): after
    the watch's read timeout the client watches again, and a pod started meanwhile is
    followed. Without the timeout the run's later pods would never be seen."""
    monkeypatch.setattr(k8s, "WATCH_READ_TIMEOUT_S", 0.5)
    log0, w0 = worker_log(0, 6)
    cluster.silent_watches = 1
    following = follow_run(expected_workers=1)
    try:
        cluster.wait_for(lambda: cluster.open_watches == 1, "the first watch")
        cluster.add("worker-0", worker_labels(), "Running", "node-a", log0)
        cluster.update("worker-0", phase="Succeeded")
        assert following.done.wait(WAIT_S), ("a silent watch hid the run", cluster.requests)
    finally:
        following.source.stop()
    assert len(cluster.watches()) >= 2
    assert_rows(following.sink, {"worker-0": (w0, "node-a")})


def test_a_pod_deleted_while_no_watch_is_open_has_ended(cluster: FakeCluster) -> None:
    """The Job controller deletes a running pod (its deadline passed) just as the watch
    is renewed: no DELETED event reaches the monitor, the pod is not in the new list;
    its log stream ends and the pod is gone (404). It has ended: the run is done."""
    (log0, w0), (log1, w1) = worker_log(0, 11), worker_log(1, 16)
    cut = len(b"\n".join(log1.split(b"\n")[:3])) + 1  # worker-1's first two windows
    cluster.add("worker-0", worker_labels(), "Running", "node-a")
    cluster.add("worker-1", worker_labels(), "Running", "node-b", log1[:cut])
    following = follow_run(expected_workers=2)
    try:
        cluster.write_log("worker-0", log0)
        cluster.wait_for(lambda: len(cluster.log_reads()) == 2, "both logs followed")
        cluster.end_watch("close", then=lambda: cluster.delete("worker-1"))
        cluster.update("worker-0", phase="Succeeded")
        assert following.done.wait(WAIT_S), (
            "a pod deleted unseen kept the run from ending",
            cluster.requests,
        )
    finally:
        following.source.stop()

    assert cluster.log_reads() == {"worker-0": 1, "worker-1": 1}
    written = len([x for x in log1[:cut].split(b"\n") if x.startswith(b"{")])
    w1.lines = w1.lines[:written]
    assert_rows(following.sink, {"worker-0": (w0, "node-a"), "worker-1": (w1, "node-b")})


def test_the_monitor_command_follows_the_run_by_the_kubeconfig(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    """``python -m elastic_channels.monitor --k8s --exit-when-done``, started with
    KUBECONFIG naming the fake server, as beside a cluster: the run's windows into the
    metrics table through the SQL API, and it exits once every pod has ended."""
    (log0, w0), (log1, w1) = worker_log(0, 11), worker_log(1, 11)
    half = len(log1) // 2
    cluster.add("worker-0", worker_labels(), "Succeeded", "node-a", log0)
    cluster.add("worker-1", worker_labels(), "Running", "node-b", log1[:half])
    cluster.add("elastic-monitor-5c9d", MONITOR_LABELS, "Running", "node-c", b"monitor up\n")
    with sql_api_server(duckdb.connect()) as (url, pem):
        profile = write_profile(tmp_path, url, pem)
        proc = subprocess.Popen(
            [sys.executable, "-m", "elastic_channels.monitor", "--k8s", "--run-id", RUN,
             "--namespace", NS, "--exit-when-done", "--no-visible", "--grace-seconds", "0",
             "--profile", str(profile)],
            cwd=tmp_path, stderr=subprocess.PIPE, text=True,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "python"),
                 "HOME": str(tmp_path), "KUBECONFIG": str(cluster.kubeconfig)},
        )  # fmt: skip
        try:
            cluster.wait_for(lambda: "worker-1" in cluster.log_reads(), "worker-1 followed")
            cluster.write_log("worker-1", log1[half:])
            cluster.update("worker-1", phase="Succeeded")
            _, err = proc.communicate(timeout=2 * WAIT_S)
        finally:
            proc.kill()
            proc.wait(WAIT_S)
        assert proc.returncode == 0, err
        assert f"monitor {RUN}: 0 row(s) already in" in err
        assert cluster.log_reads() == {"worker-0": 1, "worker-1": 1}
        assert_rows(profile_sink(profile), {"worker-0": (w0, "node-a"), "worker-1": (w1, "node-b")})
