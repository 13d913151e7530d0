"""deploy/deploy_monitor.sh and deploy/monitor/: the monitor's Deployment and its
least-privilege RBAC, rendered without a cluster and validated like the Job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

IMAGE = "registry.example/team/elastic-native:0.1.0"
SETTINGS = {
    "IMAGE": IMAGE,
    "SNOWFLAKE_ACCOUNT": "ORG-ACCT",
    "SNOWFLAKE_USER": "INGEST",
    "SNOWFLAKE_DATABASE": "DEMO",
}
OLDEST_KUBERNETES = "1.29.0"
SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "deploy_monitor.sh"


def _render(deploy, *args: str, run_id: str = "ref-455", **settings: str) -> dict[str, Any]:
    proc = deploy.run("deploy_monitor", run_id, *args, "--dry-run", **{**SETTINGS, **settings})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d is not None]
    kinds = [d["kind"] for d in docs]
    assert len(kinds) == len(set(kinds))
    return {d["kind"]: d for d in docs}


def _pod(objs: dict[str, Any]) -> dict[str, Any]:
    return objs["Deployment"]["spec"]["template"]["spec"]


def test_kinds_and_labels(deploy) -> None:
    objs = _render(deploy)
    assert set(objs) == {"ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment"}
    for obj in objs.values():
        assert obj["metadata"]["namespace"] == "default"
        # teardown.sh deletes by this label
        assert obj["metadata"]["labels"]["app.kubernetes.io/part-of"] == "elastic-native"


def test_role_may_only_read_pods_and_their_logs(deploy) -> None:
    objs = _render(deploy)
    rules = objs["Role"]["rules"]
    granted = {(r, v) for rule in rules for r in rule["resources"] for v in rule["verbs"]}
    assert granted == {
        ("pods", "get"),
        ("pods", "list"),
        ("pods", "watch"),
        ("pods/log", "get"),
    }
    assert all(rule["apiGroups"] == [""] for rule in rules)
    binding = objs["RoleBinding"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": objs["Role"]["metadata"]["name"],
    }
    account = objs["ServiceAccount"]["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": "default"}
    ]
    assert _pod(objs)["serviceAccountName"] == account


def test_the_monitor_command_and_its_settings(deploy) -> None:
    objs = _render(deploy, "--role", "MON_ROLE", "--warehouse", "MON_WH")
    dep = objs["Deployment"]
    assert dep["spec"]["replicas"] == 1
    assert dep["spec"]["strategy"] == {"type": "Recreate"}
    pod = _pod(objs)
    (c,) = pod["containers"]
    assert c["image"] == IMAGE
    assert c["command"] == ["elastic-channels", "monitor", "--k8s", "--run-id", "ref-455"]
    assert c["envFrom"] == [{"configMapRef": {"name": objs["ConfigMap"]["metadata"]["name"]}}]
    assert objs["ConfigMap"]["data"] == {
        "SNOWFLAKE_ACCOUNT": "ORG-ACCT",
        "SNOWFLAKE_USER": "INGEST",
        "SNOWFLAKE_ROLE": "MON_ROLE",
        "SNOWFLAKE_WAREHOUSE": "MON_WH",
        "SNOWFLAKE_DATABASE": "DEMO",
        "SNOWFLAKE_SCHEMA": "PUBLIC",
    }
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in c["env"]}
    assert env["POD_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    assert env["SNOWFLAKE_PRIVATE_KEY_FILE"] == mounts["snowflake-key"]["mountPath"] + "/rsa_key.p8"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["snowflake-key"]["secret"]["secretName"] == "snowflake-key"
    # Kept off the worker nodes: no toleration for their taint.
    assert "tolerations" not in pod
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["resources"]["limits"]["memory"] == "512Mi"


def test_optional_settings_are_left_out_when_empty(deploy) -> None:
    data = _render(deploy)["ConfigMap"]["data"]
    assert "SNOWFLAKE_ROLE" not in data and "SNOWFLAKE_WAREHOUSE" not in data
    data = _render(deploy, SNOWFLAKE_WAREHOUSE="ENV_WH")["ConfigMap"]["data"]
    assert data["SNOWFLAKE_WAREHOUSE"] == "ENV_WH"


def test_selector_matches_the_pod_template(deploy) -> None:
    dep = _render(deploy, run_id="Run_2026.10")["Deployment"]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert dep["metadata"]["name"] == "elastic-monitor-run-2026-10"
    assert labels["elastic-channels/run-id"] == "Run_2026.10"


@pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "latest"])
def test_valid_kubernetes_objects(deploy, version: str) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    if version == "latest":
        version = kv.latest_version()
    for obj in _render(deploy, "--namespace", "bench").values():
        kv.validate(obj, version, strict=True)


def test_placeholders_also_validate(deploy) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    proc = deploy.run("deploy_monitor", "r1", "--dry-run")
    assert proc.returncode == 0
    assert "IMAGE" in proc.stderr and "SNOWFLAKE_ACCOUNT" in proc.stderr
    for obj in yaml.safe_load_all(proc.stdout):
        if obj is not None:
            kv.validate(obj, kv.latest_version(), strict=True)


@pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "latest"])
def test_455_workers_render_sized_and_valid(deploy, version: str) -> None:
    """For the reference fleet: a window waits for all 455 pods, and the pod is sized
    for 455 log streams and a minute of their windows (5 KiB a window line held, 64 KiB
    a stream, 256 MiB base: 455 x (14 x 5 + 64) KiB = 60 MiB more)."""
    objs = _render(deploy, "--workers", "455", "--duration-seconds", "60")
    (c,) = _pod(objs)["containers"]
    assert c["command"][-2:] == ["--workers", "455"]
    assert c["resources"] == {
        "requests": {"cpu": "250m", "memory": "316Mi"},
        "limits": {"cpu": "1", "memory": "632Mi"},
    }
    assert objs["Deployment"]["spec"]["replicas"] == 1  # still one writer, whatever N
    kv = pytest.importorskip("kubernetes_validate")
    version = kv.latest_version() if version == "latest" else version
    for obj in objs.values():
        kv.validate(obj, version, strict=True)


def test_sizing_constants_are_the_monitors() -> None:
    """The script sizes memory with the monitor's grace period and pruning margin."""
    from elastic_channels.monitor.cli import build_parser
    from elastic_channels.monitor.pruning import LATE_MARGIN_S

    text = SCRIPT.read_text()
    grace = build_parser().get_default("grace_seconds")
    assert f"MONITOR_GRACE_S={grace:g}\n" in text
    assert f"MONITOR_LATE_MARGIN_S={LATE_MARGIN_S:g}\n" in text


def test_memory_and_cpu_grow_with_the_fleet_and_the_run(deploy) -> None:
    def resources(*args: str) -> dict[str, Any]:
        (c,) = _pod(_render(deploy, *args))["containers"]
        return c["resources"]

    hour = resources("--workers", "455", "--duration-seconds", "3600")
    # Held in full: (10 + 60) / 5 + 2 = 16 windows; the other 706 as 12-byte stubs.
    assert hour["requests"]["memory"] == f"{256 + -(-455 * (16 * 5 + 9 + 64) // 1024)}Mi"
    day = resources("--workers", "455", "--duration-seconds", "86400")
    assert day["requests"]["memory"] == f"{256 + -(-455 * (16 * 5 + 203 + 64) // 1024)}Mi"
    big = resources("--workers", "4000", "--window-seconds", "1")
    assert big["requests"]["cpu"] == "4800m" and big["limits"]["cpu"] == "9600m"
    default = resources()
    assert default["requests"] == {"cpu": "250m", "memory": "256Mi"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["r", "--workers", "0"], "--workers must be a positive integer"),
        (["r", "--workers", "10001"], "--workers must be at most 10000"),
        (["r", "--workers", "4", "--duration-seconds", "1.5"], "--duration-seconds must be"),
        ([], "RUN_ID is required"),
        (["bad/id"], "RUN_ID 'bad/id'"),
        (["r", "--namespace", "Bad_NS"], "--namespace 'Bad_NS'"),
        (["r", "--image", "has space"], "--image"),
        (["r", "--database", "a-b"], "--database 'a-b'"),
        (["r", "--warehouse", "w h"], "--warehouse 'w h'"),
        (["r", "s"], "unexpected argument 's'"),
    ],
)
def test_bad_arguments_are_named(deploy, args: list[str], message: str) -> None:
    proc = deploy.run("deploy_monitor", *args, "--dry-run", **SETTINGS)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_real_run_applies_the_dry_run_manifests(deploy) -> None:
    deploy.stub("kubectl")
    expected = deploy.run("deploy_monitor", "ref-1", "--dry-run", **SETTINGS).stdout
    proc = deploy.run("deploy_monitor", "ref-1", **SETTINGS)
    assert proc.returncode == 0, proc.stderr
    calls = deploy.calls()
    assert calls[0] == "kubectl get secret snowflake-key --namespace default"
    assert calls[1] == "kubectl apply --namespace default -f -"
    assert deploy.stdin_of(1, "kubectl") == expected
    assert "deployment/elastic-monitor-ref-1" in proc.stderr


def test_real_run_without_the_secret_says_how_to_make_it(deploy) -> None:
    deploy.stub("kubectl", "exit 1")
    proc = deploy.run("deploy_monitor", "ref-1", **SETTINGS)
    assert proc.returncode == 2
    assert "deploy/create_secret.sh" in proc.stderr
    assert len(deploy.calls()) == 1  # nothing applied


def test_delete(deploy) -> None:
    proc = deploy.run("deploy_monitor", "ref-1", "--delete", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert deploy.commands(proc.stdout) == [
        "kubectl delete deployment,configmap --namespace default --ignore-not-found "
        "-l app.kubernetes.io/name=elastic-monitor,elastic-channels/run-id=ref-1"
    ]
