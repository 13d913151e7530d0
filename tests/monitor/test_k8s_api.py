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
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import duckdb
import pytest
from kubernetes import client
from kubernetes.config import kube_config
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

RUN = "api-run"
NS = "elastic"
TOKEN = "token-of-the-monitor"
IMAGE = "elastic-native:test"
STARTED = "2026-01-01T00:00:00Z"
TERMINAL = ("Succeeded", "Failed")
WAIT_S = 10.0  # every wait on the source, the server or a thread is bounded by this


def worker_labels(run_id: str = RUN) -> dict[str, str]:
    """As deploy/templates/job.yaml labels a worker pod (and the Job adds its own)."""
    return {
        "app.kubernetes.io/name": "elastic-worker",
        "elastic-channels/run-id": run_id,
        "batch.kubernetes.io/job-name": f"elastic-{run_id}",
    }


#: deploy/monitor/deployment.yaml: the monitor's own pod carries the run id too.
MONITOR_LABELS = {"app.kubernetes.io/name": "elastic-monitor", "elastic-channels/run-id": RUN}


# --- the fake API server -----------------------------------------------------------------


@dataclass
class Pod:
    name: str
    labels: dict[str, str]
    phase: str = "Pending"
    node: str | None = None
    log: bytearray = field(default_factory=bytearray)
    rv: int = 0
    deleted: bool = False

    def manifest(self) -> dict[str, Any]:
        status: dict[str, Any] = {"phase": self.phase}
        if self.phase != "Pending":
            if self.phase == "Running":
                state: dict[str, Any] = {"running": {"startedAt": STARTED}}
            else:
                code = 0 if self.phase == "Succeeded" else 1
                reason = "Completed" if code == 0 else "Error"
                state = {"terminated": {"exitCode": code, "reason": reason,
                                        "startedAt": STARTED, "finishedAt": STARTED}}  # fmt: skip
            status["containerStatuses"] = [{
                "name": "worker", "image": IMAGE, "imageID": f"docker.io/{IMAGE}",
                "ready": self.phase == "Running", "restartCount": 0, "state": state,
            }]  # fmt: skip
        spec: dict[str, Any] = {
            "containers": [{"name": "worker", "image": IMAGE}], "restartPolicy": "Never",
        }  # fmt: skip
        if self.node is not None:
            spec["nodeName"] = self.node
        return {
            "kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": self.name, "namespace": NS, "uid": f"uid-{self.name}",
                         "resourceVersion": str(self.rv), "labels": dict(self.labels),
                         "creationTimestamp": STARTED},
            "spec": spec, "status": status,
        }  # fmt: skip


def matches(selector: str, labels: dict[str, str]) -> bool:
    """An equality-based label selector (``k=v,k2==v2,k3!=v3``), as the API server reads it."""
    for term in filter(None, selector.split(",")):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
            continue
        k, v = term.replace("==", "=").split("=", 1)
        if labels.get(k) != v:
            return False
    return True


@dataclass
class LogDrop:
    """The next log stream of a pod dies at byte ``at`` (mid-line, inside a chunk),
    with ``after_end``: only once the pod has ended (what was written past ``at`` is
    held until then)."""

    at: int
    after_end: bool = False


@dataclass
class Request:
    path: str
    query: dict[str, str]
    status: int = 0


class FakeCluster:
    """The pods of a namespace, their logs, the events a watch streams, and every
    request the client made. Changes go through the methods below (one lock)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.pods: dict[str, Pod] = {}
        self.events: list[tuple[str, dict[str, Any]]] = []  # resourceVersion i+1 at i
        self.requests: list[Request] = []
        self.log_drops: dict[str, LogDrop] = {}
        self.unreachable: set[str] = set()  # pods whose node the API server cannot reach
        self.open_watches = 0
        self.watch_end: tuple[str, Callable[[], None] | None] | None = None
        self.gone_before = 0  # a watch from an older resourceVersion: 410 Gone
        self.silent_watches = 0  # the next N watches send their list, then nothing ever
        self.stopping = False
        self.threads: list[threading.Thread] = []
        self.kubeconfig = Path()  # the fixture writes it

    # changes (the kubelet, the scheduler, the Job controller)

    def _changed(self, pod: Pod, kind: str) -> None:
        pod.rv = len(self.events) + 1
        self.events.append((kind, pod.manifest()))
        self.cond.notify_all()

    def add(self, name: str, labels: dict[str, str], phase: str = "Pending",
            node: str | None = None, log: bytes = b"") -> None:  # fmt: skip
        with self.cond:
            pod = self.pods[name] = Pod(name, labels, phase, node, bytearray(log))
            self._changed(pod, "ADDED")

    def update(self, name: str, *, phase: str | None = None, node: str | None = None) -> None:
        with self.cond:
            pod = self.pods[name]
            pod.phase, pod.node = phase or pod.phase, node or pod.node
            self._changed(pod, "MODIFIED")

    def write_log(self, name: str, data: bytes) -> None:
        with self.cond:
            self.pods[name].log += data
            self.cond.notify_all()

    def delete(self, name: str) -> None:
        """Under the lock (callers hold it or call it through ``end_watch``)."""
        pod = self.pods.pop(name)
        pod.deleted = True
        self._changed(pod, "DELETED")

    def end_watch(self, how: str, then: Callable[[], None] | None = None) -> None:
        """End the open watch: ``gone`` (a 410 ERROR event, as when the watch cache has
        moved past it) or ``close`` (the server ends it); ``then`` runs as it ends,
        before the client can watch again. Returns once the watch has ended."""
        with self.cond:
            assert self.cond.wait_for(lambda: self.open_watches > 0, WAIT_S), "no watch open"
            self.watch_end = (how, then)
            self.cond.notify_all()
            assert self.cond.wait_for(lambda: self.watch_end is None, WAIT_S)

    def wait_for(self, predicate: Callable[[], bool], what: str) -> None:
        with self.cond:
            assert self.cond.wait_for(predicate, WAIT_S), f"timed out waiting for {what}"

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()

    # what the client asked

    def watches(self) -> list[Request]:
        return [r for r in self.requests if r.path == f"/api/v1/namespaces/{NS}/pods"]

    def log_reads(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.requests:
            if r.path.endswith("/log"):
                name = r.path.split("/")[-2]
                counts[name] = counts.get(name, 0) + 1
        return counts


def handler_for(cluster: FakeCluster) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # chunked streams, as the API server sends them
        timeout = WAIT_S  # a socket that neither reads nor writes ends its thread

        def handle(self) -> None:
            with cluster.cond:
                cluster.threads.append(threading.current_thread())
            super().handle()

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            request = Request(url.path, query)
            with cluster.cond:
                cluster.requests.append(request)
            try:
                self._route(request)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                self.close_connection = True  # the client went away

        def _route(self, request: Request) -> None:
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._status(request, 401, "Unauthorized", "no or wrong token")
            parts = request.path.strip("/").split("/")
            if parts[:3] != ["api", "v1", "namespaces"] or len(parts) < 5 or parts[4] != "pods":
                return self._status(request, 404, "NotFound", f"no route {request.path}")
            if parts[3] != NS:
                return self._status(request, 403, "Forbidden", f"namespace {parts[3]}")
            if len(parts) == 5:
                if request.query.get("watch", "").lower() == "true":
                    return self._watch(request)
                return self._list(request)
            with cluster.cond:
                pod = cluster.pods.get(parts[5])
            if pod is None:
                return self._status(request, 404, "NotFound", f'pods "{parts[5]}" not found')
            if len(parts) == 6:
                with cluster.cond:
                    manifest = pod.manifest()
                return self._json(request, 200, manifest)
            if len(parts) == 7 and parts[6] == "log":
                return self._log(request, pod)
            return self._status(request, 404, "NotFound", f"no route {request.path}")

        # plain replies

        def _json(self, request: Request, code: int, body: Any) -> None:
            request.status = code
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")  # no idle connection left behind
            self.end_headers()
            self.close_connection = True
            self.wfile.write(data)

        def _status(self, request: Request, code: int, reason: str, message: str) -> None:
            self._json(request, code, {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": reason, "code": code,
            })  # fmt: skip

        def _list(self, request: Request) -> None:
            selector = request.query.get("labelSelector", "")
            with cluster.cond:
                items = [p.manifest() for p in cluster.pods.values() if matches(selector, p.labels)]
                rv = str(len(cluster.events))
            self._json(request, 200, {
                "kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": rv},
                "items": items,
            })  # fmt: skip

        # streams

        def _start_stream(self, request: Request, content_type: str) -> None:
            request.status = 200
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")  # one stream per connection
            self.end_headers()
            self.close_connection = True

        def _chunks(self, data: bytes, rng: random.Random) -> None:
            """``data`` in chunks of random sizes, cutting lines anywhere."""
            i = 0
            while i < len(data):
                n = rng.randint(1, 120)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data[i : i + n]), data[i : i + n]))
                i += n

        def _end_stream(self) -> None:
            self.wfile.write(b"0\r\n\r\n")

        def _die(self, rest: bytes) -> None:
            """A chunk that promises more than comes, then the connection is gone."""
            self.wfile.write(b"%x\r\n%s" % (len(rest) + 64, rest))
            self.connection.shutdown(socket.SHUT_RDWR)

        def _watch(self, request: Request) -> None:
            """Events of the selected pods: without a resourceVersion, every pod now as
            ADDED first, as the API server does; each event line in two chunks."""
            selector = request.query.get("labelSelector", "")
            deadline = time.monotonic() + float(request.query.get("timeoutSeconds", 1800))
            rng = random.Random(len(cluster.requests))
            since = request.query.get("resourceVersion", "")
            with cluster.cond:
                if since not in ("", "0"):
                    cursor, first = int(since), []
                    if cursor < cluster.gone_before:
                        first = [("ERROR", gone(cursor, cluster.gone_before))]
                else:
                    cursor = len(cluster.events)
                    first = [("ADDED", p.manifest()) for p in cluster.pods.values()]
                cluster.open_watches += 1
                silent = cluster.silent_watches > 0
                cluster.silent_watches -= silent
                cluster.cond.notify_all()
            self._start_stream(request, "application/json")
            try:
                self._events(first, selector, rng)
                if first and first[0][0] == "ERROR":
                    return self._end_stream()
                if silent:  # a half-open connection: no event, no end, until stopped
                    with cluster.cond:
                        cluster.cond.wait_for(lambda: cluster.stopping, WAIT_S)
                    return None
                while True:
                    with cluster.cond:
                        cluster.cond.wait_for(
                            lambda seen=cursor: len(cluster.events) > seen
                            or cluster.watch_end is not None or cluster.stopping,
                            min(1.0, max(0.0, deadline - time.monotonic())),
                        )  # fmt: skip
                        new, cursor = cluster.events[cursor:], len(cluster.events)
                        end, cluster.watch_end = cluster.watch_end, None
                        if end is not None and end[0] == "gone":
                            cluster.gone_before = cursor + 1
                        if end is not None and end[1] is not None:
                            end[1]()  # before anyone can watch again
                        stop = cluster.stopping or time.monotonic() >= deadline
                        cluster.cond.notify_all()
                    self._events(new, selector, rng)
                    if end is not None and end[0] == "gone":
                        self._events([("ERROR", gone(cursor - 1, cursor))], selector, rng)
                    if end is not None or stop:
                        return self._end_stream()
            finally:
                with cluster.cond:
                    cluster.open_watches -= 1
                    cluster.cond.notify_all()

        def _events(self, events: list[tuple[str, dict[str, Any]]], selector: str,
                    rng: random.Random) -> None:  # fmt: skip
            for kind, obj in events:
                if kind != "ERROR" and not matches(selector, obj["metadata"]["labels"]):
                    continue
                line = json.dumps({"type": kind, "object": obj}).encode() + b"\n"
                cut = rng.randint(1, len(line) - 1)
                self.wfile.write(b"%x\r\n%s\r\n" % (cut, line[:cut]))
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line) - cut, line[cut:]))

        def _log(self, request: Request, pod: Pod) -> None:
            """The container's log from its start; with follow, what it writes next until
            it ends (or the pod is deleted), as the kubelet streams it."""
            container = request.query.get("container", "worker")
            if container != "worker":
                message = f"container {container} is not valid for pod {pod.name}"
                return self._status(request, 400, "BadRequest", message)
            if pod.phase == "Pending":
                message = f'container "worker" in pod "{pod.name}" is waiting to start'
                return self._status(request, 400, "BadRequest", message)
            if pod.name in cluster.unreachable:
                message = f'Get "https://{pod.node}:10250/containerLogs/{NS}/{pod.name}/worker"'
                return self._status(request, 500, "InternalError", message + ": EOF")
            follow = request.query.get("follow", "").lower() == "true"
            with cluster.cond:
                drop = cluster.log_drops.pop(pod.name, None)
            rng = random.Random(f"{pod.name} {len(cluster.requests)}")
            self._start_stream(request, "text/plain")
            pos = 0

            def ready() -> bool:
                return len(pod.log) > pos or ended()

            def ended() -> bool:
                return not follow or pod.deleted or pod.phase in TERMINAL or cluster.stopping

            while True:
                with cluster.cond:
                    cluster.cond.wait_for(ready, 1.0)
                    data, over = bytes(pod.log[pos:]), ended()
                if drop is not None and pos + len(data) > drop.at:
                    head, rest = data[: drop.at - pos], data[drop.at - pos :]
                    self._chunks(head, rng)
                    pos = drop.at
                    if not drop.after_end or over:
                        return self._die(rest[:40])
                    with cluster.cond:  # hold the rest until the pod has ended
                        cluster.cond.wait_for(ended, WAIT_S)
                    continue
                self._chunks(data, rng)
                pos += len(data)
                if over:
                    return self._end_stream()

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def gone(since: int, now: int) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"too old resource version: {since} ({now})", "reason": "Expired",
            "code": 410}  # fmt: skip


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCluster]:
    """The fake API server on an ephemeral port, and a kubeconfig (a token user) for it
    in KUBECONFIG; no in-cluster config, no proxy."""
    fake = FakeCluster()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(fake))
    serving = threading.Thread(target=httpd.serve_forever, daemon=True, name="fake apiserver")
    serving.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({  # JSON is YAML
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake",
                      "cluster": {"server": f"http://127.0.0.1:{httpd.server_address[1]}"}}],
        "users": [{"name": "monitor", "user": {"token": TOKEN}}],
        "contexts": [{"name": "fake",
                      "context": {"cluster": "fake", "user": "monitor", "namespace": NS}}],
    }))  # fmt: skip
    fake.kubeconfig = kubeconfig
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    # The client reads KUBECONFIG once, when imported (a process started with it set,
    # as the monitor is, has it there): this process imported it before the test.
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(kubeconfig))
    for var in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "HTTP_PROXY",
                "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
    # load_kube_config sets the client's default configuration: not for later tests.
    monkeypatch.setattr(client.Configuration, "_default", None)
    try:
        yield fake
    finally:
        fake.stop()
        httpd.shutdown()
        httpd.server_close()
        serving.join(WAIT_S)
        for t in [serving, *fake.threads]:
            t.join(WAIT_S)
        assert not [t.name for t in [serving, *fake.threads] if t.is_alive()]


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
