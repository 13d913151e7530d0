"""The fleet's start barrier, worker side: the start read off its ConfigMap, a bad value
or a refused read named, the ready file written (the real watch runs in
scripts/k8s_e2e.sh against a real API server)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("kubernetes")

from kubernetes.client.exceptions import ApiException

from elastic_channels.worker.start_barrier import (
    BarrierError,
    parse_configmap_ref,
    read_start_at,
    signal_ready,
    wait_start,
)


class Api:
    """A CoreV1Api whose ConfigMap already holds its data (or whose read fails)."""

    def __init__(self, data: dict | None = None, status: int | None = None) -> None:
        self.data, self.status, self.reads = data, status, 0

    def read_namespaced_config_map(self, name: str, namespace: str) -> SimpleNamespace:
        self.reads += 1
        if self.status is not None:
            raise ApiException(status=self.status, reason="Forbidden")
        return SimpleNamespace(data=self.data, metadata=SimpleNamespace(resource_version="1"))


def test_the_ref_and_the_value_are_checked() -> None:
    assert parse_configmap_ref("loadtest/run-1-start") == ("loadtest", "run-1-start")
    with pytest.raises(BarrierError, match="NAMESPACE/NAME"):
        parse_configmap_ref("a/b/c")
    assert read_start_at(None) is None and read_start_at({"start_at": ""}) is None
    assert read_start_at({"start_at": "1765000000.5"}) == 1765000000.5
    for bad in ("soon", "nan", "-1"):
        with pytest.raises(BarrierError, match="start_at"):
            read_start_at({"start_at": bad})


def test_a_start_already_written_is_taken_without_a_watch() -> None:
    api = Api({"start_at": "1765000010"})
    assert wait_start(api, "ns", "cm", lambda: False, timeout_s=5) == 1765000010.0
    assert api.reads == 1


def test_a_refused_read_is_one_line_not_a_wait() -> None:
    with pytest.raises(BarrierError, match="start ConfigMap ns/cm: HTTP 403 Forbidden"):
        wait_start(Api(status=403), "ns", "cm", lambda: False, timeout_s=5)


def test_stopping_before_the_start_starts_nothing() -> None:
    assert wait_start(Api({}), "ns", "cm", lambda: True, timeout_s=5) is None


def test_ready_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "run" / "ready"
    signal_ready(path)
    assert float(path.read_text()) > 0


def test_an_api_server_out_of_reach_is_tried_again_then_one_line() -> None:
    class Unreachable(Api):
        def read_namespaced_config_map(self, name: str, namespace: str) -> SimpleNamespace:
            self.reads += 1
            raise OSError("certificate verify failed")

    api = Unreachable()
    with pytest.raises(BarrierError, match="OSError: certificate verify failed"):
        wait_start(api, "ns", "cm", lambda: False, timeout_s=2.5)
    assert api.reads >= 2  # tried again before giving up
