"""deploy/build_and_push.sh: a multi-arch image, to ECR by default or to any registry."""

from __future__ import annotations

ECR = "123456789012.dkr.ecr.us-west-2.amazonaws.com"


def _dry(deploy, *args: str, **settings: str):
    proc = deploy.run("build_and_push", *args, "--dry-run", **settings)
    assert proc.returncode == 0, proc.stderr
    return proc, deploy.commands(proc.stdout)


def test_ecr_by_default(deploy) -> None:
    proc, cmds = _dry(deploy, AWS_ACCOUNT_ID="123456789012")
    assert proc.stderr == ""
    assert cmds[0].startswith("aws ecr describe-repositories --region us-west-2 ")
    assert "|| aws ecr create-repository" in cmds[0]
    assert cmds[1] == (
        "aws ecr get-login-password --region us-west-2 | "
        f"docker login --username AWS --password-stdin {ECR}"
    )
    build = cmds[-1]
    assert build.startswith("docker buildx build ")
    assert "--platform linux/arm64,linux/amd64" in build
    assert f"--tag {ECR}/elastic-native:0.1.0 --push" in build
    assert f"# IMAGE={ECR}/elastic-native:0.1.0" in proc.stdout


def test_unknown_account_is_a_placeholder_in_a_dry_run(deploy) -> None:
    proc, cmds = _dry(deploy)
    assert "AWS_ACCOUNT_ID" in proc.stderr
    assert "aws sts get-caller-identity" in proc.stdout
    assert "<AWS_ACCOUNT_ID>.dkr.ecr.us-west-2.amazonaws.com/elastic-native:0.1.0" in cmds[-1]


def test_any_registry_by_flag_skips_ecr(deploy) -> None:
    _, cmds = _dry(deploy, "--registry", "ghcr.io/acme/", "--tag", "v7", "--name", "worker")
    assert not any(c.startswith("aws ") for c in cmds)
    assert "--tag ghcr.io/acme/worker:v7 --push" in cmds[-1]
    _, cmds = _dry(deploy, REGISTRY="registry.example:5000", IMAGE_TAG="t1")
    assert "--tag registry.example:5000/elastic-native:t1" in cmds[-1]


def test_arm64_is_built_for_the_graviton_nodes(deploy) -> None:
    proc, cmds = _dry(deploy, "--registry", "r.example", "--platforms", "linux/amd64")
    assert "--platform linux/amd64 " in cmds[-1]
    assert "no linux/arm64" in proc.stderr and "--arch amd64" in proc.stderr
    proc = deploy.run("build_and_push", "--platforms", "linux/s390x", "--dry-run")
    assert proc.returncode == 2 and "linux/s390x" in proc.stderr
    proc = deploy.run("build_and_push", "--registry", "r.example", "--tag", "a b", "--dry-run")
    assert proc.returncode == 2 and "--tag 'a b'" in proc.stderr


def test_real_run_asks_aws_for_the_account_and_pushes(deploy) -> None:
    deploy.stub("aws", 'case "$1 $2" in "sts get-caller-identity") echo 123456789012 ;; esac')
    deploy.stub("docker")
    proc = deploy.run("build_and_push")
    assert proc.returncode == 0, proc.stderr
    calls = deploy.calls()
    assert calls[0] == "aws sts get-caller-identity --query Account --output text"
    assert calls[1].startswith("aws ecr describe-repositories")
    assert "docker login --username AWS --password-stdin " + ECR in calls
    assert calls[-1].startswith("docker buildx build")
    assert f"IMAGE={ECR}/elastic-native:0.1.0" in proc.stdout
    # The login password goes through a pipe, never the command line.
    assert not any("get-login-password" in c and "docker" in c for c in calls)
