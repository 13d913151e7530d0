"""deploy/run_job.sh: where its settings come from, and what a dry run does without them.

Options win over the environment, the environment over the .env file, the file over
the defaults; a dry run with settings missing names them and renders <NAME>
placeholders; there is no default image to pull from Docker Hub.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

BASE = ["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "1"]
ACCOUNT = ["--account", "ORG-ACCT", "--user", "INGEST", "--database", "DEMO"]


def objects(text: str) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d is not None}


def container(text: str) -> dict[str, Any]:
    (c,) = objects(text)["Job"]["spec"]["template"]["spec"]["containers"]
    return c


def test_missing_settings_are_named_and_dry_run_shows_placeholders(deploy) -> None:
    proc = deploy.run("run_job", *BASE, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    for name in ("IMAGE", "SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_DATABASE"):
        assert name in proc.stderr
    assert objects(proc.stdout)["ConfigMap"]["data"]["SNOWFLAKE_ACCOUNT"] == "<SNOWFLAKE_ACCOUNT>"
    assert container(proc.stdout)["image"] == "<IMAGE>"
    # A real run does not start with placeholders, and touches no cluster.
    proc = deploy.run("run_job", *BASE)
    assert proc.returncode == 2
    assert "--account or SNOWFLAKE_ACCOUNT" in proc.stderr
    assert "IMAGE" in proc.stderr and proc.stdout == ""
    assert deploy.calls() == []


def test_no_silent_default_image(deploy) -> None:
    """Without --image, IMAGE or REGISTRY there is no image: never a Docker Hub pull."""
    proc = deploy.run("run_job", *BASE, *ACCOUNT, "--dry-run")
    assert "IMAGE" in proc.stderr
    assert "elastic-native:latest" not in proc.stdout
    # REGISTRY gives <registry>/elastic-native:<package version>.
    proc = deploy.run("run_job", *BASE, *ACCOUNT, "--dry-run", REGISTRY="reg.example:5000/team/")
    assert proc.returncode == 0 and proc.stderr == ""
    assert container(proc.stdout)["image"] == "reg.example:5000/team/elastic-native:0.1.0"
    proc = deploy.run("run_job", *BASE, *ACCOUNT, "--dry-run", AWS_ACCOUNT_ID="123456789012")
    assert container(proc.stdout)["image"] == (
        "123456789012.dkr.ecr.us-west-2.amazonaws.com/elastic-native:0.1.0"
    )
    proc = deploy.run("run_job", *BASE, *ACCOUNT, "--dry-run", IMAGE="ecr.example/w:7")
    assert container(proc.stdout)["image"] == "ecr.example/w:7"


@pytest.mark.parametrize(
    ("rate", "bps"),
    [
        ("92e6", "92000000"),
        ("9.2e7", "92000000"),
        ("1.5E+6", "1500000"),
        ("100000000", "100000000"),
    ],
)
def test_rates_written_with_an_exponent(deploy, rate: str, bps: str) -> None:
    args = ["r", "--target-bps", rate, "--duration-seconds", "5", "--workers", "1"]
    proc = deploy.run("run_job", *args, *ACCOUNT, "--dry-run", IMAGE="x/y:1")
    assert proc.returncode == 0, proc.stderr
    args = container(proc.stdout)["args"]
    assert args[args.index("--target-bps") + 1] == bps


@pytest.mark.parametrize(("rate", "message"), [("1.25e1", "whole number"), ("1e30", "too large")])
def test_rates_that_are_not_whole_bytes(deploy, rate: str, message: str) -> None:
    args = ["r", "--target-bps", rate, "--duration-seconds", "5", "--workers", "1"]
    proc = deploy.run("run_job", *args, "--dry-run")
    assert proc.returncode == 2
    assert message in proc.stderr


def test_settings_from_an_env_file(deploy, tmp_path: Path) -> None:
    env_file = tmp_path / "settings.env"
    env_file.write_text(
        "# comment\n"
        "SNOWFLAKE_ACCOUNT=FILE-ACCT  # trailing comment\n"
        "export SNOWFLAKE_USER='FILE_USER'\n"
        'SNOWFLAKE_DATABASE="FILE_DB"\n'
        "SNOWFLAKE_SCHEMA=\n"
        "IMAGE=file.example/elastic-native:9\n"
        "K8S_NAMESPACE=bench\n"
        "WORKER_ARCH=amd64\n"
    )
    env = {"ENV_FILE": str(env_file)}
    proc = deploy.run("run_job", *BASE, "--dry-run", SNOWFLAKE_DATABASE="ENV_DB", **env)
    assert proc.returncode == 0, proc.stderr
    objs = objects(proc.stdout)
    data = objs["ConfigMap"]["data"]
    assert data["SNOWFLAKE_ACCOUNT"] == "FILE-ACCT"
    assert data["SNOWFLAKE_USER"] == "FILE_USER"
    assert data["SNOWFLAKE_DATABASE"] == "ENV_DB"  # the environment wins over the file
    assert data["SNOWFLAKE_SCHEMA"] == "PUBLIC"  # empty means the default
    assert objs["Job"]["metadata"]["namespace"] == "bench"
    assert container(proc.stdout)["image"] == "file.example/elastic-native:9"
    pod = objs["Job"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.io/arch": "amd64"}
    # An option wins over both.
    proc = deploy.run("run_job", *BASE, "--dry-run", "--account", "OPT-ACCT", **env)
    assert objects(proc.stdout)["ConfigMap"]["data"]["SNOWFLAKE_ACCOUNT"] == "OPT-ACCT"


def test_dot_env_at_the_repository_root_is_the_default(deploy) -> None:
    """Without ENV_FILE the scripts read <repo>/.env; with ENV_FILE, only that file."""
    text = (Path(__file__).resolve().parents[2] / "deploy" / "lib" / "common.sh").read_text()
    assert "${ENV_FILE:-$REPO_DIR/.env}" in text


def test_bad_env_file_lines_are_named(deploy, tmp_path: Path) -> None:
    env_file = tmp_path / "bad.env"
    env_file.write_text("SNOWFLAKE_ACCOUNT=A\nthis is not a setting\n")
    proc = deploy.run("run_job", "--dry-run", "r", ENV_FILE=str(env_file))
    assert proc.returncode == 2
    assert "line 2" in proc.stderr and "KEY=VALUE" in proc.stderr
    proc = deploy.run("run_job", "r", ENV_FILE=str(tmp_path / "missing.env"))
    assert proc.returncode == 2 and "missing.env" in proc.stderr


def test_nothing_in_the_env_file_is_executed(deploy, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    env_file = tmp_path / "evil.env"
    env_file.write_text(f"SNOWFLAKE_ACCOUNT=$(touch {marker})\nIMAGE=`touch {marker}`\n")
    proc = deploy.run("run_job", *BASE, "--dry-run", ENV_FILE=str(env_file))
    assert not marker.exists()
    assert proc.returncode == 2  # and the value is refused as an account name
    assert "--image" in proc.stderr and "touch" in proc.stderr  # kept as text
