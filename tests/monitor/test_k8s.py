"""The Kubernetes source against a stub API: pods found by the run's label as they
start, logs followed, a broken stream reconnected and read again without counting
anything twice, pod and node names on the rows, the end seen when every pod is done."""

from __future__ import annotations

import json
import queue
import random
import threading
from types import SimpleNamespace

from monitor_support import EPOCH0, FakeWorker, duckdb_with_landing_table, make_sink

from elastic_channels.monitor.k8s import PodLogSource, feed_until_done, run_selector
from elastic_channels.monitor.monitor import Monitor
from elastic_channels.monitor.sources import pump

RUN = "k8s-run"


def pod(name: str, phase: str, node: str = "node-a") -> SimpleNamespace:
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name),
        status=SimpleNamespace(phase=phase),
        spec=SimpleNamespace(node_name=node),
    )


class LogStream:
    def __init__(self, data: bytes, chunk: int = 97) -> None:
        self.data, self.chunk, self.released = data, chunk, False

    def stream(self, _n: int):
        for i in range(0, len(self.data), self.chunk):  # chunks cut lines anywhere
            yield self.data[i : i + self.chunk]

    def release_conn(self) -> None:
        self.released = True


class StubCore:
    """Two worker pods. pod-0's first log stream breaks halfway while it still runs;
    pod-1 starts Pending, then runs. Both end Succeeded."""

    def __init__(self, logs: dict[str, bytes]) -> None:
        self.logs = logs
        self.log_calls: dict[str, int] = {}
        self.phase = {"pod-0": "Running", "pod-1": "Pending"}
        self.lock = threading.Lock()

    def list_namespaced_pod(self, *_a, **_k):  # only handed to the watch
        raise AssertionError("the stub watch does not call it")

    def read_namespaced_pod_log(self, name, namespace, *, container, follow, **options):
        assert (namespace, container, follow) == ("ns", "worker", True)
        assert options["_preload_content"] is False and options["_request_timeout"][1] > 0
        with self.lock:
            n = self.log_calls[name] = self.log_calls.get(name, 0) + 1
            data = self.logs[name]
            if name == "pod-0" and n == 1:
                return LogStream(data[: len(data) // 2])  # the stream breaks here
            self.phase[name] = "Succeeded"  # this stream reads to the pod's end
            return LogStream(data)

    def read_namespaced_pod(self, name, namespace):
        with self.lock:
            return pod(name, self.phase[name])


class StubWatch:
    def __init__(self, core: StubCore, seen: list) -> None:
        self.core, self.seen = core, seen

    def stream(self, func, namespace, *, label_selector, timeout_seconds, _request_timeout):
        """Each (re)started watch lists the pods as they are now; the first one also
        sees pod-1 go from Pending to Running."""
        self.seen.append((func, namespace, label_selector))
        with self.core.lock:
            phases = dict(self.core.phase)
        yield {"type": "ADDED", "object": pod("pod-0", phases["pod-0"], "node-a")}
        yield {"type": "ADDED", "object": pod("pod-1", phases["pod-1"], "node-b")}
        if phases["pod-1"] == "Pending":
            with self.core.lock:
                self.core.phase["pod-1"] = "Running"
            yield {"type": "MODIFIED", "object": pod("pod-1", "Running", "node-b")}


def worker_log(wid: int) -> tuple[bytes, FakeWorker]:
    rng = random.Random(wid)
    w = FakeWorker(RUN, wid, EPOCH0 + 0.2, 5.0)
    while w.now < w.start + 12:
        w.step(0.3, rng)
    w.finish()
    text = "INFO sdk: opening client\n" + "".join(json.dumps(x) + "\n" for x in w.lines)
    return (text + json.dumps(w.summary()) + "\n").encode(), w


def test_pods_are_followed_reconnected_and_counted_once():
    (log0, w0), (log1, w1) = worker_log(0), worker_log(1)
    core = StubCore({"pod-0": log0, "pod-1": log1})
    seen: list = []
    lines: queue.Queue = queue.Queue()
    source = PodLogSource(
        core, "ns", run_selector(RUN), lines,
        watch_factory=lambda: StubWatch(core, seen), retry_s=0.05,
    )  # fmt: skip
    sink = make_sink(duckdb_with_landing_table())
    # Nothing lands in this test: no ingest-to-visible to wait for.
    monitor = Monitor(RUN, sink, grace_s=0.0, expected_workers=2, visible=False)
    source.start()
    threading.Thread(target=feed_until_done, args=(source, lines, 0.05), daemon=True).start()
    done = threading.Event()

    def run() -> None:
        pump(monitor, lines, 1, tick_s=0.1)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(30), "the source never saw the end of the run"
    source.stop()

    assert seen[0][1:] == ("ns", "app.kubernetes.io/name=elastic-worker,"
                                 "elastic-channels/run-id=k8s-run")  # fmt: skip
    assert seen[0][0] == core.list_namespaced_pod
    assert core.log_calls == {"pod-0": 2, "pod-1": 1}
    assert source.reconnects == 1
    rows = sink.read_rows(RUN, fleet=False)
    expected = {(w.worker_id, x["window_start"]) for w in (w0, w1) for x in w.lines}
    assert len(rows) == len(expected)
    assert {(r["WORKER_ID"], r["WINDOW_START"].timestamp()) for r in rows} == expected
    assert {(r["WORKER_ID"], r["POD_NAME"], r["NODE_NAME"]) for r in rows} == {
        (0, "pod-0", "node-a"), (1, "pod-1", "node-b"),
    }  # fmt: skip
    fleet = sink.read_rows(RUN, fleet=True)
    assert [r["WORKERS_REPORTING"] for r in fleet] == [2] * len(fleet)
    assert monitor.garbage_lines >= 2  # the SDK's lines, and the cut-off one
