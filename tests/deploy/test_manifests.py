"""The fleet's Kubernetes manifests, as ``deploy/run_job.sh --dry-run`` renders them.

No cluster and no network: the manifests are parsed with PyYAML, checked field by field,
and, when ``kubernetes-validate`` is installed, validated strictly against the
Kubernetes OpenAPI schemas it ships. Applying is tested with a stand-in ``kubectl``.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from run_job_support import BASH, REPO, REQUIRED, run_job

yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")
#: Kubernetes 1.29 is the oldest release with backoffLimitPerIndex on by default.
OLDEST_KUBERNETES = "1.29.0"


def render(workers: int, *extra: str, run_id: str = "ref-run-1") -> str:
    proc = run_job(
        run_id,
        "--target-bps",
        "92000000",
        "--duration-seconds",
        "600",
        "--workers",
        str(workers),
        *REQUIRED,
        *extra,
        "--dry-run",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


def objects(text: str) -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    return {d["kind"]: d for d in docs}


@pytest.fixture(scope="module", params=[1, 455])
def rendered(request: pytest.FixtureRequest) -> tuple[int, str]:
    return request.param, render(request.param)


def _container(job: dict[str, Any]) -> dict[str, Any]:
    containers = job["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_kinds_and_api_versions(rendered: tuple[int, str]) -> None:
    _, text = rendered
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    assert [(d["apiVersion"], d["kind"]) for d in docs] == [
        ("v1", "ConfigMap"),
        ("batch/v1", "Job"),
    ]
    for d in docs:
        assert d["metadata"]["namespace"] == "default"
        assert d["metadata"]["labels"]["elastic-channels/run-id"] == "ref-run-1"


def test_indexed_job_one_pod_per_worker(rendered: tuple[int, str]) -> None:
    workers, text = rendered
    spec = objects(text)["Job"]["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["parallelism"] == spec["completions"] == workers
    assert spec["backoffLimitPerIndex"] == 0
    assert spec["activeDeadlineSeconds"] > 600
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["nodeSelector"] == {"kubernetes.io/arch": "arm64"}
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_one_cpu_one_gib_guaranteed(rendered: tuple[int, str]) -> None:
    _, text = rendered
    resources = _container(objects(text)["Job"])["resources"]
    assert resources["requests"] == resources["limits"] == {"cpu": "1", "memory": "1024Mi"}


def test_worker_id_run_id_rate_and_duration(rendered: tuple[int, str]) -> None:
    _, text = rendered
    c = _container(objects(text)["Job"])
    env = _env(c)
    assert env["WORKER_ID"] == {
        "fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        }
    }
    assert env["RUN_ID"] == "ref-run-1"
    args = c["args"]
    pairs = dict(zip(args[::2], args[1::2], strict=True))
    assert pairs == {
        "--run-id": "ref-run-1",
        "--target-bps": "92000000",
        "--duration-seconds": "600",
    }
    # stdout carries the worker's JSON lines only: the SDK logs go to stderr.
    assert env["SS_LOG_TARGET"] == "stderr"
    assert env["ELASTIC_FAST_JSON_ENCODE"] == "true"
    assert "command" not in c  # the image's command is the worker


def test_private_key_comes_from_a_secret(rendered: tuple[int, str]) -> None:
    _, text = rendered
    job = objects(text)["Job"]
    c = _container(job)
    volumes = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    secret = volumes["snowflake-key"]["secret"]
    assert secret["secretName"] == "snowflake-key"
    assert mounts["snowflake-key"]["readOnly"] is True
    key_path = _env(c)["SNOWFLAKE_PRIVATE_KEY_FILE"]
    assert key_path == mounts["snowflake-key"]["mountPath"] + "/rsa_key.p8"
    # No key material anywhere in the manifests.
    assert "PRIVATE KEY" not in text
    assert "SNOWFLAKE_PRIVATE_KEY" not in objects(text)["ConfigMap"]["data"]


def test_configmap_carries_connection_and_sdk_memory_settings(rendered: tuple[int, str]) -> None:
    _, text = rendered
    objs = objects(text)
    cm = objs["ConfigMap"]
    c = _container(objs["Job"])
    assert c["envFrom"] == [{"configMapRef": {"name": cm["metadata"]["name"]}}]
    data = cm["data"]
    assert data["SNOWFLAKE_ACCOUNT"] == "ORG-ACCT"
    assert data["SNOWFLAKE_USER"] == "INGEST"
    assert data["SNOWFLAKE_DATABASE"] == "DEMO"
    assert data["SNOWFLAKE_SCHEMA"] == "PUBLIC"
    assert data["SNOWFLAKE_PIPE"] == "RESORT_SALES_PIPE"
    assert "SNOWFLAKE_ROLE" not in data
    props = json.loads(data["SNOWPIPE_SDK_PROPERTIES"])
    assert props == json.loads((REPO / "deploy" / "sdk-properties.json").read_text())
    assert props["mem_throttle_by_pod"] == "true"
    # The in-flight cap and throttle thresholds stay well inside a 1 GiB pod.
    assert int(props["max_inflight_megabytes_per_channel"]) <= 256
    assert int(props["mem_throttle_threshold_mb_by_process"]) < 1024
    assert 0 < int(props["mem_throttle_threshold_percentage"]) < 100


def test_sdk_property_names_are_the_sdks() -> None:
    """Each property name is one the installed SDK's Rust core knows (unknown keys are
    silently ignored by the SDK, so a typo would otherwise go unnoticed)."""
    import importlib.util

    spec = importlib.util.find_spec("snowflake.ingest.streaming")
    if spec is None or spec.origin is None:
        pytest.skip("snowpipe-streaming is not installed")
    core = next(Path(spec.origin).parent.glob("_python_ffi*.so"), None)
    if core is None:
        pytest.skip("the SDK's native core was not found")
    blob = core.read_bytes()
    props = json.loads((REPO / "deploy" / "sdk-properties.json").read_text())
    for name in props:
        assert name.encode() in blob, f"{name} is not a snowpipe-streaming property"


@pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "latest"])
def test_valid_kubernetes_objects(rendered: tuple[int, str], version: str) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    _, text = rendered
    if version == "latest":
        version = kv.latest_version()
    for doc in yaml.safe_load_all(text):
        if doc is not None:
            kv.validate(doc, version, strict=True)


def test_455_workers_fit_the_documented_node_group() -> None:
    cluster = yaml.safe_load((REPO / "deploy" / "eks" / "cluster.yaml").read_text())
    groups = {g["name"]: g for g in cluster["managedNodeGroups"]}
    workers = groups["workers-m7g"]
    assert workers["instanceType"] == "m7g.8xlarge"
    assert workers["maxSize"] * 31 >= 455
    taint = workers["taints"][0]
    job = objects(render(1))["Job"]
    tolerations = job["spec"]["template"]["spec"]["tolerations"]
    assert {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]} in tolerations


def test_options_change_what_they_name() -> None:
    objs = objects(
        render(
            3,
            "--image",
            "123.dkr.ecr.us-west-2.amazonaws.com/elastic-native:0.1.0",
            "--namespace",
            "bench",
            "--role",
            "INGEST_ROLE",
            "--secret",
            "sf-key",
            "--secret-key",
            "key.p8",
            "--arch",
            "amd64",
            run_id="Run_2026.10",
        )
    )
    job = objs["Job"]
    assert job["metadata"]["name"] == "elastic-run-2026-10"
    assert job["metadata"]["namespace"] == objs["ConfigMap"]["metadata"]["namespace"] == "bench"
    c = _container(job)
    assert c["image"] == "123.dkr.ecr.us-west-2.amazonaws.com/elastic-native:0.1.0"
    assert objs["ConfigMap"]["data"]["SNOWFLAKE_ROLE"] == "INGEST_ROLE"
    pod = job["spec"]["template"]["spec"]
    assert pod["volumes"][0]["secret"]["secretName"] == "sf-key"
    assert _env(c)["SNOWFLAKE_PRIVATE_KEY_FILE"].endswith("/key.p8")
    assert pod["nodeSelector"] == {"kubernetes.io/arch": "amd64"}


def test_long_run_id_gives_a_short_dns_job_name() -> None:
    run_id = "A" * 63
    job = objects(render(1, run_id=run_id))["Job"]
    name = job["metadata"]["name"]
    assert len(name) <= 52 and name == name.lower() and name[-1].isalnum()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "RUN_ID is required"),
        (["r", "--duration-seconds", "5", "--workers", "1"], "--target-bps is required"),
        (
            ["r", "--target-bps", "1e-3", "--duration-seconds", "5", "--workers", "1"],
            "--target-bps",
        ),
        (
            ["r", "--target-bps", "92.5", "--duration-seconds", "5", "--workers", "1"],
            "whole number",
        ),
        (["r", "--target-bps", "1", "--duration-seconds", "0", "--workers", "1"], "--duration"),
        (["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "-2"], "--workers"),
        (["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "20000"], "at most"),
        (["bad/id", "--target-bps", "1", "--duration-seconds", "5", "--workers", "1"], "RUN_ID"),
        (
            ["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "1", "--frob"],
            "--frob",
        ),
        (["r", "s", "--target-bps", "1"], "unexpected argument 's'"),
        (["r", "--target-bps"], "--target-bps needs a value"),
    ],
)
def test_bad_arguments_name_what_is_wrong(args: list[str], message: str) -> None:
    proc = run_job(*args, *REQUIRED, "--dry-run")
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--namespace", "Bad_NS"], "--namespace"),
        (["--arch", "s390x"], "--arch"),
        (["--image", "has space"], "--image"),
        (["--database", "a-b"], "--database"),
        (["--log-level", "loud"], "--log-level"),
        (["--sdk-properties", "/nonexistent.json"], "--sdk-properties"),
        (["--channels", "0"], "--channels must be a positive integer"),
        (["--channels", "65"], "--channels must be at most 64"),
        (["--max-inflight-bytes", "1.5"], "--max-inflight-bytes must be a whole number"),
        (["--memory-mib", "64"], "--memory-mib must be at least 128"),
        (["--memory-mib", "1Gi"], "--memory-mib must be a positive integer"),
    ],
)
def test_bad_options_name_what_is_wrong(args: list[str], message: str) -> None:
    base = ["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "1"]
    proc = run_job(*base, *REQUIRED, *args, "--dry-run")
    assert proc.returncode == 2, proc.stdout
    assert message in proc.stderr


def test_help_explains_usage() -> None:
    proc = run_job("--help")
    assert proc.returncode == 0
    for word in ("RUN_ID", "--target-bps", "--duration-seconds", "--workers", "--dry-run"):
        assert word in proc.stdout
    # --help anywhere helps and runs nothing, even next to bad arguments.
    proc = run_job("bad/id", "--frob", "--help")
    assert proc.returncode == 0 and "--target-bps" in proc.stdout and proc.stderr == ""


# --- applying, with a stand-in kubectl ---------------------------------------------


def _fake_kubectl(tmp_path: Path, secret_exists: bool) -> tuple[str, Path]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "kubectl.log"
    script = f"""#!/bin/sh
echo "$*" >> {log}
case "$1 $2" in
  "get secret") exit {0 if secret_exists else 1} ;;
  "get job") exit 1 ;;
  "apply "*) cat > {tmp_path / "applied.yaml"} ;;
esac
exit 0
"""
    kubectl = bindir / "kubectl"
    kubectl.write_text(script)
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
    return f"{bindir}:/usr/bin:/bin", log


def test_apply_sends_exactly_the_dry_run_manifests(tmp_path: Path) -> None:
    path, log = _fake_kubectl(tmp_path, secret_exists=True)
    args = ["ref-run-1", "--target-bps", "92000000", "--duration-seconds", "600"]
    proc = run_job(*args, "--workers", "15", *REQUIRED, path=path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "applied.yaml").read_text() == render(15)
    calls = log.read_text().splitlines()
    assert calls[0].startswith("get secret snowflake-key --namespace default")
    assert calls[-1] == "apply --namespace default -f -"
    assert "job/elastic-ref-run-1" in proc.stderr


def test_apply_without_the_secret_says_how_to_make_it(tmp_path: Path) -> None:
    path, _ = _fake_kubectl(tmp_path, secret_exists=False)
    args = ["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "1"]
    proc = run_job(*args, *REQUIRED, path=path)
    assert proc.returncode == 2
    assert "Secret 'snowflake-key' not found" in proc.stderr
    assert "kubectl create secret generic snowflake-key" in proc.stderr
    assert not (tmp_path / "applied.yaml").exists()


def test_default_pod_is_one_channel_1gib_with_the_files_sdk_properties() -> None:
    base = ["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "1"]
    proc = run_job(*base, *REQUIRED, "--dry-run")
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    job = next(d for d in docs if d["kind"] == "Job")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert "--channels" not in container["args"]
    assert "--max-inflight-bytes" not in container["args"]
    assert container["resources"]["limits"]["memory"] == "1024Mi"
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    shipped = json.loads((REPO / "deploy" / "sdk-properties.json").read_text())
    assert json.loads(config["SNOWPIPE_SDK_PROPERTIES"]) == shipped
