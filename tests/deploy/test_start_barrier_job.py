"""run_job.sh --start-barrier (issue #31 item 4): the pods wait, Ready once their channel
is open, for the run's start in one ConfigMap they alone may read; the script writes it
once every pod is Ready, on a window boundary a few seconds ahead."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from run_job_support import REQUIRED, run_job

yaml = pytest.importorskip("yaml")
BASE = ["rb-1", "--target-bps", "5e6", "--duration-seconds", "10", "--workers", "3"]


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_the_barrier_renders_its_configmap_access_and_probe() -> None:
    proc = run_job(*BASE, *REQUIRED, "--start-barrier", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    docs = _docs(proc.stdout)
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    role = by[("Role", "elastic-rb-1-start")]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"],
                              "resourceNames": ["elastic-rb-1-start"],
                              "verbs": ["get", "list", "watch"]}]  # fmt: skip
    assert by[("ConfigMap", "elastic-rb-1-start")]["data"] == {}
    binding = by[("RoleBinding", "elastic-rb-1-start")]
    assert binding["subjects"][0]["name"] == "elastic-rb-1-start"
    pod = by[("Job", "elastic-rb-1")]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "elastic-rb-1-start"
    (worker,) = pod["containers"]
    assert worker["readinessProbe"]["exec"]["command"] == ["test", "-f", "/tmp/ready"]
    args = worker["args"]
    assert args[args.index("--ready-file") + 1] == "/tmp/ready"
    assert args[args.index("--start-configmap") + 1] == "default/elastic-rb-1-start"
    kv = pytest.importorskip("kubernetes_validate")
    for doc in docs:
        kv.validate(doc, kv.latest_version(), strict=True)


def test_without_the_barrier_nothing_of_it_is_rendered() -> None:
    proc = run_job(*BASE, *REQUIRED, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    kinds = [d["kind"] for d in _docs(proc.stdout)]
    assert kinds == ["ConfigMap", "Job"]
    assert "--start-configmap" not in proc.stdout and "readinessProbe" not in proc.stdout


def test_the_start_is_written_once_every_pod_is_ready(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log, polls = tmp_path / "kubectl.log", tmp_path / "polls"
    # The pods turn Ready one poll after another: 1, 2, then all 3.
    script = f"""#!/bin/bash
echo "$*" >> {log}
case "$1 $2" in
  "get secret") exit 0 ;;
  "get job") exit 1 ;;
  "apply "*) cat > /dev/null ;;
  "get pods") n=$(( $(cat {polls} 2>/dev/null || echo 0) + 1 )); echo $n > {polls}
              for i in $(seq $n); do echo True; done; echo False ;;
esac
exit 0
"""
    kubectl = bindir / "kubectl"
    kubectl.write_text(script)
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
    began = time.time()
    proc = run_job(*BASE, *REQUIRED, "--start-barrier", path=f"{bindir}:{os.environ['PATH']}")
    assert proc.returncode == 0, proc.stderr
    assert "1 of 3 pods ready" in proc.stderr and "2 of 3 pods ready" in proc.stderr
    calls = log.read_text().splitlines()
    patch = [c for c in calls if c.startswith("patch configmap elastic-rb-1-start")]
    assert len(patch) == 1 and calls[-1] == patch[0]
    start = int(patch[0].split('"start_at":"')[1].split('"')[0])
    assert start % 5 == 0 and start >= began + 3  # a window boundary, a few seconds ahead
    assert "3 of 3 pods ready; the run starts at" in proc.stderr


def test_an_api_endpoint_goes_to_the_pods_environment_with_the_barrier_only() -> None:
    proc = run_job(*BASE, *REQUIRED, "--start-barrier", "--api-endpoint", "127.0.0.1:6443",
                   "--dry-run")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = next(d for d in _docs(proc.stdout) if d["metadata"]["name"] == "elastic-rb-1")["data"]
    assert (data["KUBERNETES_SERVICE_HOST"], data["KUBERNETES_SERVICE_PORT"]) == (
        "127.0.0.1", "6443",
    )  # fmt: skip
    proc = run_job(*BASE, *REQUIRED, "--api-endpoint", "127.0.0.1:6443", "--dry-run")
    assert proc.returncode == 2 and "--api-endpoint is where the pods reach" in proc.stderr
