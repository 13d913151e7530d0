"""One start for the pods of a fleet, however long each took to be scheduled and start.

As k6-operator starts its runners paused and a starter releases them all: each worker
opens its channel, says it is ready (a file its pod's readiness probe looks for), then
waits for the run's start to be written into a ConfigMap (``--start-configmap
NAMESPACE/NAME``, key ``start_at``: epoch seconds). ``deploy/run_job.sh`` writes it once
every pod of the Job is ready, a few seconds ahead and on a window boundary, so the
fleet's first window counts every pod. The worker watches that one ConfigMap (one watch
a pod, one event when it is written: no polling of the API server by a thousand pods).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "BarrierError", "fleet_start", "parse_configmap_ref", "read_start_at", "signal_ready",
    "wait_start",
]  # fmt: skip

log = logging.getLogger("elastic_channels.worker")
KEY = "start_at"
#: A watch is renewed this often (the server ends it by then anyway).
WATCH_SECONDS = 30


class BarrierError(ValueError):
    """The start ConfigMap cannot be named, read or holds no usable start."""


def parse_configmap_ref(ref: str) -> tuple[str, str]:
    """``NAMESPACE/NAME`` (or ``NAME``: the pod's own namespace) as a pair."""
    namespace, _, name = ref.rpartition("/")
    if not name or "/" in namespace:
        raise BarrierError(f"--start-configmap must be NAMESPACE/NAME or NAME, got {ref!r}")
    if not namespace:
        own = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
        namespace = own.read_text().strip() if own.is_file() else "default"
    return namespace, name


def read_start_at(data: dict[str, str] | None) -> float | None:
    """The start a ConfigMap's data holds (None: not written yet); BarrierError for a
    value that is not epoch seconds."""
    raw = (data or {}).get(KEY)
    if raw is None or raw == "":
        return None
    try:
        start = float(raw)
    except ValueError:
        raise BarrierError(f"start ConfigMap: {KEY} {raw!r} is not a number") from None
    if not math.isfinite(start) or start <= 0:
        raise BarrierError(f"start ConfigMap: {KEY} {raw!r} is not seconds since the epoch")
    return start


def signal_ready(path: Path | None) -> None:
    """Say the channel is open: the pod's readiness probe tests for this file."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{time.time():.3f}\n")


def wait_start(
    api: Any, namespace: str, name: str, stopping: Callable[[], bool], timeout_s: float
) -> float | None:
    """The run's start once it is written into the ConfigMap (``api``: a CoreV1Api);
    None if ``stopping()`` turned true first. BarrierError after ``timeout_s`` without
    a start, or for a ConfigMap that cannot be read."""
    from kubernetes import watch
    from kubernetes.client.exceptions import ApiException

    deadline = time.monotonic() + timeout_s
    last = said = ""
    while not stopping():
        left = deadline - time.monotonic()
        if left <= 0:
            raise BarrierError(f"no start in ConfigMap {namespace}/{name} after {timeout_s:.0f} s")
        try:
            current = api.read_namespaced_config_map(name, namespace)
            start = read_start_at(current.data)
            if start is not None:
                return start
            w = watch.Watch()
            for event in w.stream(
                api.list_namespaced_config_map, namespace,
                field_selector=f"metadata.name={name}",
                resource_version=current.metadata.resource_version,
                timeout_seconds=int(min(WATCH_SECONDS, max(left, 1))),
            ):  # fmt: skip
                start = read_start_at(event["object"].data)
                if start is not None or stopping():
                    w.stop()
                    return start
        except ApiException as e:
            if e.status in (401, 403, 404):
                raise BarrierError(f"start ConfigMap {namespace}/{name}: HTTP {e.status} "
                                   f"{e.reason}") from None  # fmt: skip
            last = f"HTTP {e.status} {e.reason}"
        except Exception as e:  # the API server unreachable, TLS refused: tried again
            last = f"{type(e).__name__}: {e}"
        if last != said:
            log.warning("start ConfigMap %s/%s: %s; trying again", namespace, name, last)
            said = last
        if deadline - time.monotonic() <= 1:
            raise BarrierError(f"start ConfigMap {namespace}/{name}: {last}")
        time.sleep(1.0)
    return None


def fleet_start(cfg: Any, stopping: Callable[[], bool]) -> float | None:
    """Say this worker is ready, then wait for the fleet's start in its ConfigMap
    (``cfg.start_configmap``, within ``cfg.start_timeout_s``); None when stopping."""
    from ..monitor.k8s import load_core_api

    namespace, name = parse_configmap_ref(str(cfg.start_configmap))
    signal_ready(Path(cfg.ready_file) if cfg.ready_file else None)
    try:
        api = load_core_api()
    except Exception as e:  # no in-cluster config and no kubeconfig
        raise BarrierError(
            f"--start-configmap {namespace}/{name}: no Kubernetes API: {e}"
        ) from None
    log.info("ready; waiting for the fleet's start in ConfigMap %s/%s", namespace, name)
    return wait_start(api, namespace, name, stopping, cfg.start_timeout_s)
