"""deploy/teardown.sh: the Kubernetes objects, then the cluster; never without --yes."""

from __future__ import annotations


def test_dry_run_lists_everything_in_order(deploy) -> None:
    proc = deploy.run("teardown", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    cmds = deploy.commands(proc.stdout)
    assert cmds == [
        "kubectl delete job,deployment,configmap,secret,rolebinding,role,serviceaccount "
        "--namespace default -l app.kubernetes.io/part-of=elastic-native --ignore-not-found --wait",
        "eksctl delete cluster --name elastic-channels --region us-west-2 --wait",
    ]


def test_options(deploy) -> None:
    proc = deploy.run(
        "teardown",
        "--keep-cluster",
        "--delete-repository",
        "--drop-allowlist",
        "--namespace",
        "bench",
        "--dry-run",
        SNOWFLAKE_DATABASE="DEMO",
        SNOWFLAKE_USER="INGEST",
        AWS_REGION="eu-west-1",
    )
    assert proc.returncode == 0, proc.stderr
    cmds = deploy.commands(proc.stdout)
    assert "--namespace bench" in cmds[0]
    assert not any(c.startswith("eksctl") for c in cmds)
    assert "DROP NETWORK RULE IF EXISTS DEMO.PUBLIC.ELASTIC_EKS_EGRESS;" in proc.stdout
    assert "elastic-channels setup --sql-file /tmp/elastic-allowlist.sql" in cmds
    assert cmds[-1] == (
        "aws ecr delete-repository --region eu-west-1 --repository-name elastic-native --force"
    )


def test_refuses_without_yes(deploy) -> None:
    proc = deploy.run("teardown")
    assert proc.returncode == 2
    assert "--yes" in proc.stderr and "elastic-channels in us-west-2" in proc.stderr
    assert deploy.calls() == []


def test_real_run_with_yes(deploy) -> None:
    deploy.stub("kubectl")
    deploy.stub("eksctl")
    proc = deploy.run("teardown", "--yes", CLUSTER_NAME="bench")
    assert proc.returncode == 0, proc.stderr
    calls = deploy.calls()
    assert calls[0].startswith("kubectl delete job,deployment,configmap,secret")
    assert calls[1] == "eksctl delete cluster --name bench --region us-west-2 --wait"
    assert len(calls) == 2
