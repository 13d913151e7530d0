"""A fake Kubernetes API server on 127.0.0.1 for the monitor's Kubernetes source with the
real ``kubernetes`` client (tests/monitor/test_k8s_api.py): the pods of one namespace,
watched by label as the API server streams events, their ``worker`` logs streamed as the
kubelet does, and every request the client made; and a kubeconfig naming it."""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from kubernetes import client
from kubernetes.config import kube_config

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


@contextlib.contextmanager
def running_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCluster]:
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
