"""deploy/create_cluster.sh: eksctl from deploy/eks/cluster.yaml, name/region/nodes applied."""

from __future__ import annotations

import pytest

yaml = pytest.importorskip("yaml")


def _config(deploy, *args: str, **settings: str) -> tuple[dict, list[str]]:
    proc = deploy.run("create_cluster", *args, "--dry-run", **settings)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return yaml.safe_load(deploy.heredoc(proc.stdout, "<<'EOF'")), deploy.commands(proc.stdout)


def test_defaults_graviton_workers_and_a_system_group(deploy) -> None:
    config, cmds = _config(deploy)
    assert cmds[0] == "eksctl create cluster -f - <<'EOF'"
    assert cmds[1].startswith("kubectl get nodes")
    assert config["metadata"]["name"] == "elastic-channels"
    assert config["metadata"]["region"] == "us-west-2"
    groups = {g["name"]: g for g in config["managedNodeGroups"]}
    assert set(groups) == {"workers-m7g", "system"}
    workers = groups["workers-m7g"]
    assert workers["instanceType"].startswith("m7g.")  # Graviton: arm64
    assert workers["desiredCapacity"] == 1
    assert workers["taints"][0]["effect"] == "NoSchedule"
    assert "taints" not in groups["system"]
    assert config["vpc"]["nat"]["gateway"] == "Single"


def test_options_and_settings_reach_the_config(deploy) -> None:
    config, _ = _config(deploy, "--name", "bench-2", "--region", "eu-central-1", "--nodes", "15")
    assert config["metadata"] == {"name": "bench-2", "region": "eu-central-1", "version": "1.33"}
    workers = next(g for g in config["managedNodeGroups"] if g["name"] == "workers-m7g")
    assert workers["desiredCapacity"] == 15
    system = next(g for g in config["managedNodeGroups"] if g["name"] == "system")
    assert system["desiredCapacity"] == 1  # only the worker group is scaled
    config, _ = _config(deploy, CLUSTER_NAME="from-env", AWS_REGION="ap-south-1", WORKER_NODES="2")
    assert config["metadata"]["name"] == "from-env"
    assert config["metadata"]["region"] == "ap-south-1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "16"], "maxSize (15)"),
        (["--nodes", "many"], "--nodes"),
        (["--region", "mars"], "--region 'mars'"),
        (["--name", "9lives"], "--name '9lives'"),
    ],
)
def test_bad_values_are_named(deploy, args: list[str], message: str) -> None:
    proc = deploy.run("create_cluster", *args, "--dry-run")
    assert proc.returncode == 2
    assert message in proc.stderr


def test_real_run_gives_eksctl_the_dry_run_config(deploy) -> None:
    deploy.stub("eksctl")
    deploy.stub("kubectl")
    expected, _ = _config(deploy, "--nodes", "3")
    proc = deploy.run("create_cluster", "--nodes", "3")
    assert proc.returncode == 0, proc.stderr
    calls = deploy.calls()
    assert calls[0] == "eksctl create cluster -f -"
    assert yaml.safe_load(deploy.stdin_of(0, "eksctl")) == expected
    assert calls[1].startswith("kubectl get nodes")
