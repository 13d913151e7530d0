"""The worker pods of a Kubernetes run: found by label, their logs followed.

A watch on the run's pods (``elastic-channels/run-id=<run>``) starts one follower per
pod as it starts running; a follower streams the pod's ``worker`` container log and
puts each line on the monitor's queue with the pod's and node's names. When a stream
ends while the pod still runs (an API server restart, a timeout), or breaks before
its end even if the pod has ended, the follower reconnects and reads the log again
from its start: the monitor keeps one line per worker and window, so lines read twice
change nothing. A watch that ends is started again (listing the pods anew); a pod
found gone (404) has ended, whether or not a watch saw it deleted. A log's lines are
split under a length cap at a cost linear in its bytes (:mod:`.line_splitter`): a line
without a newline, however long, is cut and counted (``cut_lines``). Uses the maintained
``kubernetes`` client (in the cluster, its service account; elsewhere, the kubeconfig).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from .line_splitter import LineSplitter
from .sources import END

__all__ = ["PodLogSource", "load_core_api", "run_selector"]

log = logging.getLogger("elastic_channels.monitor")
TERMINAL = ("Succeeded", "Failed")
#: A log stream silent this long is taken as dead and reconnected (a worker prints a
#: line every window, seconds apart).
READ_TIMEOUT_S = 120
#: The server ends a pod watch after this long; the client watches again.
WATCH_SECONDS = 300
#: A watch silent this long past WATCH_SECONDS is taken as dead (a half-open connection
#: would otherwise hang it, and no pod started after it would be followed).
WATCH_READ_TIMEOUT_S = WATCH_SECONDS + 30.0
#: Reads of an ended pod's log that may break before it is given up (its node gone,
#: say), so that the run still ends.
ENDED_POD_READS = 5


def run_selector(run_id: str) -> str:
    """The label selector of a run's worker pods (see deploy/templates/job.yaml)."""
    return f"app.kubernetes.io/name=elastic-worker,elastic-channels/run-id={run_id}"


def load_core_api() -> Any:
    """A CoreV1Api: in-cluster config in a pod, else the local kubeconfig."""
    from kubernetes import client, config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    # One streaming connection per pod followed (455 and more), beside the watch.
    cfg = client.Configuration.get_default_copy()
    cfg.connection_pool_maxsize = 2048
    return client.CoreV1Api(client.ApiClient(cfg))


class PodLogSource:
    def __init__(
        self,
        core: Any,
        namespace: str,
        selector: str,
        lines: queue.Queue,
        *,
        container: str = "worker",
        watch_factory: Any = None,
        retry_s: float = 2.0,
    ) -> None:
        self.core = core
        self.namespace = namespace
        self.selector = selector
        self.lines = lines
        self.container = container
        self.retry_s = retry_s
        self._watch_factory = watch_factory
        self._lock = threading.Lock()
        self._followers: dict[str, threading.Thread] = {}
        self._phase: dict[str, str] = {}
        self._stopping = threading.Event()
        self.reconnects = 0
        #: Log lines cut at the length cap (each handed on as a bad line).
        self.cut_lines = 0

    # --- pods -----------------------------------------------------------------------------

    def start(self) -> None:
        threading.Thread(target=self._watch_loop, daemon=True, name="watch pods").start()

    def stop(self) -> None:
        self._stopping.set()

    def _watch(self) -> Any:
        if self._watch_factory is not None:
            return self._watch_factory()
        from kubernetes import watch

        return watch.Watch()

    def _watch_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                stream = self._watch().stream(
                    self.core.list_namespaced_pod,
                    self.namespace,
                    label_selector=self.selector,
                    timeout_seconds=WATCH_SECONDS,
                    _request_timeout=(10, WATCH_READ_TIMEOUT_S),
                )
                for event in stream:
                    self._on_pod(event.get("object"), event.get("type"))
                    if self._stopping.is_set():
                        return
            except Exception as e:  # the API server went away: watch again
                log.warning("watching pods (%s) failed, retrying: %s", self.selector, e)
            self._stopping.wait(self.retry_s)

    def _on_pod(self, pod: Any, event: str | None = None) -> None:
        if pod is None or pod.metadata is None or pod.status is None:
            return
        name, phase = pod.metadata.name, pod.status.phase or "Pending"
        if event == "DELETED" and phase not in TERMINAL:
            phase = "Failed"  # gone: there is nothing more to read
        with self._lock:
            self._phase[name] = phase
            if phase == "Pending" or name in self._followers:
                return
            node = getattr(pod.spec, "node_name", None)
            t = threading.Thread(
                target=self._follow, args=(name, node), daemon=True, name=f"logs {name}"
            )
            self._followers[name] = t
        t.start()

    def done(self) -> bool:
        """Every pod seen has ended and its log was read to the end."""
        with self._lock:
            return bool(self._phase) and all(
                p in TERMINAL and name in self._followers and not self._followers[name].is_alive()
                for name, p in self._phase.items()
            )

    # --- logs -----------------------------------------------------------------------------

    def _follow(self, pod: str, node: str | None) -> None:
        ended_reads = 0
        while not self._stopping.is_set():
            whole = False  # the server ended the stream, rather than it broke
            try:
                for line in self._stream_lines(pod):
                    self.lines.put((line, pod, node))
                whole = True
            except Exception as e:
                log.warning("log stream of %s broke: %s", pod, e)
            phase = self._current_phase(pod)
            if phase is None:
                return  # the pod is gone: nothing more to read
            if phase in TERMINAL:
                ended_reads += 1
                if whole:
                    return  # read to the end
                if ended_reads >= ENDED_POD_READS:
                    log.warning("giving up on the log of %s: it broke %d times after the "
                                "pod ended", pod, ended_reads)  # fmt: skip
                    return
            self.reconnects += 1
            self._stopping.wait(self.retry_s)

    def _stream_lines(self, pod: str) -> Any:
        resp = self.core.read_namespaced_pod_log(
            pod, self.namespace, container=self.container, follow=True,
            _preload_content=False, _request_timeout=(10, READ_TIMEOUT_S),
        )  # fmt: skip
        lines = LineSplitter()
        try:
            for chunk in resp.stream(64 * 1024) if hasattr(resp, "stream") else [resp]:
                yield from lines.feed(chunk if isinstance(chunk, bytes) else str(chunk).encode())
        finally:
            if hasattr(resp, "release_conn"):
                resp.release_conn()
            with self._lock:
                self.cut_lines += lines.cut_lines
        # A last line without its newline: the monitor checks it like any other.
        yield from lines.end()

    def _current_phase(self, pod: str) -> str | None:
        try:
            p = self.core.read_namespaced_pod(pod, self.namespace)
        except Exception as e:
            if getattr(e, "status", None) == 404:  # deleted, maybe while no watch was open
                with self._lock:
                    self._phase[pod] = "Failed"  # gone: there is nothing more to read
                return None
            log.warning("reading pod %s failed: %s", pod, e)
            return self._phase.get(pod)
        phase = p.status.phase if p.status is not None else None
        with self._lock:
            self._phase[pod] = phase or "Pending"
        return phase


def feed_until_done(source: PodLogSource, lines: queue.Queue, poll_s: float = 1.0) -> None:
    """Put END on the queue once every pod of the run has ended and been read."""
    while not source.done():
        time.sleep(poll_s)
    lines.put(END)
