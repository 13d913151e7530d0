"""The local-cluster scripts without a cluster (building Kubernetes is too slow for CI):
scripts/k8s_local.sh and scripts/k8s_e2e.sh say what they do and refuse bad input
before touching anything, they are shellcheck-clean, and deploy/run_job.sh renders the
settings the local cluster needs (--cpu, --host-network, --trust-ca, --stage-endpoint)
and refuses bad ones. The real run is scripts/k8s_e2e.sh (docs/FLEET.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from run_job_support import BASH, REPO, REQUIRED, run_job

yaml = pytest.importorskip("yaml")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")
SCRIPTS = [REPO / "scripts" / "k8s_local.sh", REPO / "scripts" / "k8s_e2e.sh"]


def script(name: str, *args: str, state: Path | None = None) -> subprocess.CompletedProcess:
    assert BASH is not None
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    if state is not None:
        env["ELASTIC_K8S_STATE"] = str(state)
    return subprocess.run(
        [BASH, str(REPO / "scripts" / name), *args],
        capture_output=True, text=True, env=env, timeout=30, check=False,
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck")
def test_shellcheck_clean() -> None:
    proc = subprocess.run(["shellcheck", *map(str, SCRIPTS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_help_names_every_command_and_where_things_live() -> None:
    proc = script("k8s_local.sh", "--help")
    assert proc.returncode == 0, proc.stderr
    for word in ("up", "down", "status", "load", "kubeconfig", "K8S_VERSION",
                 "ELASTIC_K8S_CACHE", "ELASTIC_K8S_STATE", "127.0.0.1"):  # fmt: skip
        assert word in proc.stdout
    e2e = script("k8s_e2e.sh", "--help")
    assert e2e.returncode == 0 and "--fresh" in e2e.stdout and "--workers" in e2e.stdout


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("k8s_local.sh", ["frob"], "unknown command 'frob'"),
        ("k8s_local.sh", [], "scripts/k8s_local.sh up"),
        ("k8s_e2e.sh", ["--workers", "0"], "--workers must be 1..99"),
        ("k8s_e2e.sh", ["--workers", "4", "--delete-index", "4"], "--delete-index must be below"),
        ("k8s_e2e.sh", ["--mbps", "fast"], "--mbps must be a number"),
        ("k8s_e2e.sh", ["--frob"], "unknown argument '--frob'"),
    ],
)
def test_bad_arguments_are_named(name: str, args: list[str], message: str) -> None:
    proc = script(name, *args)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_status_of_a_cluster_that_is_not_up(tmp_path: Path) -> None:
    proc = script("k8s_local.sh", "status", state=tmp_path / "state")
    assert proc.returncode != 0
    for service in ("etcd", "kube-apiserver", "kubelet", "containerd"):
        assert f"{service}" in proc.stdout
    assert proc.stdout.count("stopped") == 6
    assert script("k8s_local.sh", "kubeconfig", state=tmp_path).stdout.strip() == str(
        tmp_path / "admin.kubeconfig"
    )


def test_load_without_an_image_or_a_cluster_says_so(tmp_path: Path) -> None:
    proc = script("k8s_local.sh", "load", state=tmp_path)
    assert proc.returncode == 1 and "load needs an image name" in proc.stderr
    proc = script("k8s_local.sh", "load", "localhost/x:1", state=tmp_path)
    assert proc.returncode == 1 and "the cluster is not up" in proc.stderr


def _render(*extra: str) -> dict[str, dict[str, Any]]:
    proc = run_job(
        "local-1", "--target-bps", "5e6", "--duration-seconds", "60", "--workers", "4",
        *REQUIRED, *extra, "--dry-run",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return {d["kind"]: d for d in yaml.safe_load_all(proc.stdout) if d}


def test_local_cluster_settings_reach_the_pods() -> None:
    objs = _render(
        "--cpu", "450m", "--host-network", "--trust-ca", "ca.pem",
        "--stage-endpoint", "https://127.0.0.1:41372",
    )  # fmt: skip
    pod = objs["Job"]["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    res = pod["containers"][0]["resources"]
    assert res["requests"]["cpu"] == res["limits"]["cpu"] == "450m"
    data = objs["ConfigMap"]["data"]
    assert data["SSL_CERT_FILE"] == data["AWS_CA_BUNDLE"] == "/var/run/secrets/snowflake/ca.pem"
    assert data["AWS_ENDPOINT_URL"] == data["AWS_ENDPOINT_URL_S3"] == "https://127.0.0.1:41372"
    # the Secret that holds the key is the one mounted where the CA is looked for
    mount = pod["containers"][0]["volumeMounts"][0]
    assert mount["mountPath"] == "/var/run/secrets/snowflake"


def test_without_them_the_pods_are_as_on_an_account() -> None:
    objs = _render()
    pod = objs["Job"]["spec"]["template"]["spec"]
    assert "hostNetwork" not in pod and "dnsPolicy" not in pod
    assert pod["containers"][0]["resources"]["limits"]["cpu"] == "1"
    assert not {"SSL_CERT_FILE", "AWS_CA_BUNDLE", "AWS_ENDPOINT_URL"} & set(
        objs["ConfigMap"]["data"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cpu", "0"], "--cpu must be a CPU quantity"),
        (["--cpu", "1 core"], "--cpu must be a CPU quantity"),
        (["--trust-ca", "a/b"], "--trust-ca 'a/b' must be a file name"),
        (["--trust-ca", "rsa_key.p8"], "is the private key's file name"),
        (["--stage-endpoint", 'https://x"y'], "--stage-endpoint must be a URL"),
        (["--stage-endpoint", "ftp://host"], "--stage-endpoint must be a URL"),
    ],
)
def test_bad_local_cluster_settings_are_named(args: list[str], message: str) -> None:
    proc = run_job(
        "local-1", "--target-bps", "5e6", "--duration-seconds", "60", "--workers", "4",
        *REQUIRED, *args, "--dry-run",
    )  # fmt: skip
    assert proc.returncode != 0
    assert message in proc.stderr


def _kubectl_answering(tmp_path: Path, conditions: str, pods: str) -> str:
    """A stand-in kubectl for run_job.sh --wait: the Secret exists, the Job is new, and
    reads of the Job's conditions and of its pods' waiting reasons get these answers."""
    bindir = tmp_path / "bin"
    bindir.mkdir(parents=True)
    (tmp_path / "pods.txt").write_text(pods)
    kubectl = bindir / "kubectl"
    kubectl.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        "  'get secret'*) exit 0 ;;\n"
        "  'get job '*'Failed'*) printf 'FailedIndexes: Job has failed indexes; "
        "failed indexes: 1' ;;\n"
        f"  'get job '*jsonpath*) printf '{conditions}' ;;\n"
        "  'get job '*) exit 1 ;;\n"
        f"  'get pods'*) cat {tmp_path / 'pods.txt'} ;;\n"
        "  'apply '*) cat > /dev/null ;;\n"
        "esac\n"
    )
    kubectl.chmod(0o755)
    return f"{bindir}:/usr/bin:/bin"


def _wait(path: str, grace: str = "0") -> subprocess.CompletedProcess:
    return run_job(
        "local-1", "--target-bps", "5e6", "--duration-seconds", "60", "--workers", "2",
        *REQUIRED, "--wait", path=path, settings={"START_GRACE_SECONDS": grace},
    )  # fmt: skip


def test_wait_ends_when_the_job_completes(tmp_path: Path) -> None:
    proc = _wait(_kubectl_answering(tmp_path, "SuccessCriteriaMet Complete ", ""))
    assert proc.returncode == 0, proc.stderr
    assert "job/elastic-local-1 complete" in proc.stderr


def test_wait_fails_with_the_job_not_after_its_deadline(tmp_path: Path) -> None:
    # one failed index fails the Job (backoffLimitPerIndex 0): never Complete
    proc = _wait(_kubectl_answering(tmp_path, "FailureTarget Failed ", ""))
    assert proc.returncode != 0
    assert "job/elastic-local-1 failed: FailedIndexes" in proc.stderr
    assert "failed indexes: 1" in proc.stderr


def test_wait_names_a_pod_that_cannot_start(tmp_path: Path) -> None:
    pods = (
        "elastic-local-1-0-abcde\t\t\n"
        'elastic-local-1-1-fghij\tImagePullBackOff\tBack-off pulling image "x:1"\n'
    )
    proc = _wait(_kubectl_answering(tmp_path, "", pods))
    assert proc.returncode != 0
    line = proc.stderr.strip().splitlines()[-1]
    assert (
        'pod elastic-local-1-1-fghij cannot start: ImagePullBackOff: Back-off pulling image "x:1"'
        in line
    )
    assert "kubectl delete job elastic-local-1" in line
    bad = _wait(_kubectl_answering(tmp_path / "b", "", pods), grace="soon")
    assert "START_GRACE_SECONDS must be whole seconds" in bad.stderr
