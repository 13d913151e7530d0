"""The account settings a fleet's pods get: the Job's ConfigMap names the account, and
the worker the pod runs derives the account URL's host from it (as every command
does); SNOWFLAKE_HOST and SNOWFLAKE_PORT reach the pods only as overrides; an empty
value in .env or the environment is unset (`cp .env.example .env`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from elastic_channels.worker.config import load_config

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[2]
BASE = ["r", "--target-bps", "1", "--duration-seconds", "5", "--workers", "1"]
#: What .env.example documents for an account (no host, port or profile).
DOCUMENTED = {
    "SNOWFLAKE_ACCOUNT": "myorg-myacct",
    "SNOWFLAKE_USER": "INGEST",
    "SNOWFLAKE_DATABASE": "DEMO",
    "IMAGE": "x/y:1",
}


def _manifests(text: str) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d is not None}


def _pod_config(job_text: str, tmp_path: Path) -> Any:
    """The worker's configuration as a pod of the rendered Job gets it: its args, its
    ConfigMap as environment, its own env (the key file where the Secret is mounted)."""
    objs = _manifests(job_text)
    (c,) = objs["Job"]["spec"]["template"]["spec"]["containers"]
    env = {str(k): str(v) for k, v in objs["ConfigMap"]["data"].items()}
    env |= {e["name"]: e["value"] for e in c["env"] if "value" in e}
    key = tmp_path / "rsa_key.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")
    env["SNOWFLAKE_PRIVATE_KEY_FILE"] = str(key)
    env["WORKER_ID"] = "0"
    return load_config(list(c["args"]), env)


def test_a_pod_derives_the_host_from_the_account(deploy, tmp_path: Path) -> None:
    proc = deploy.run("run_job", *BASE, "--dry-run", **DOCUMENTED)
    assert proc.returncode == 0, proc.stderr
    data = _manifests(proc.stdout)["ConfigMap"]["data"]
    assert "SNOWFLAKE_HOST" not in data and "SNOWFLAKE_PORT" not in data
    assert "# SNOWFLAKE_HOST not set: derived from SNOWFLAKE_ACCOUNT" in proc.stdout
    cfg = _pod_config(proc.stdout, tmp_path)
    assert cfg.properties["host"] == "myorg-myacct.snowflakecomputing.com"
    assert (cfg.properties["account"], cfg.properties["scheme"]) == ("myorg-myacct", "https")
    assert (cfg.database, cfg.schema) == ("DEMO", "PUBLIC")


def test_host_and_port_reach_the_pods_only_as_overrides(deploy, tmp_path: Path) -> None:
    settings = {**DOCUMENTED, "SNOWFLAKE_HOST": "sf.internal.example", "SNOWFLAKE_PORT": "8443"}
    for script in ("run_job", "deploy_monitor"):
        proc = deploy.run(
            script, *(BASE if script == "run_job" else ["r"]), "--dry-run", **settings
        )
        assert proc.returncode == 0, proc.stderr
        data = _manifests(proc.stdout)["ConfigMap"]["data"]
        assert (data["SNOWFLAKE_HOST"], data["SNOWFLAKE_PORT"]) == ("sf.internal.example", "8443")
    proc = deploy.run("run_job", *BASE, "--dry-run", **settings)
    props = _pod_config(proc.stdout, tmp_path).properties
    assert (props["host"], props["port"]) == ("sf.internal.example", 8443)
    bad = deploy.run("run_job", *BASE, "--dry-run", **{**settings, "SNOWFLAKE_PORT": "https"})
    assert bad.returncode == 2 and "SNOWFLAKE_PORT 'https' is not a port number" in bad.stderr


def test_a_copy_of_env_example_is_all_defaults(deploy, tmp_path: Path) -> None:
    """Every value of .env.example is empty: each means its default, and a variable the
    environment leaves empty is still filled from the file."""
    env_file = tmp_path / ".env"
    shutil.copy(REPO / ".env.example", env_file)
    proc = deploy.run("run_job", *BASE, "--dry-run", ENV_FILE=str(env_file), **DOCUMENTED)
    assert proc.returncode == 0, proc.stderr
    data = _manifests(proc.stdout)["ConfigMap"]["data"]
    assert (data["SNOWFLAKE_SCHEMA"], data["SNOWFLAKE_PIPE"]) == ("PUBLIC", "RESORT_SALES_PIPE")
    # filled in where the example leaves it empty (a key given twice is refused)
    text = env_file.read_text()
    assert "\nSNOWFLAKE_ACCOUNT=\n" in text
    env_file.write_text(text.replace("\nSNOWFLAKE_ACCOUNT=\n", "\nSNOWFLAKE_ACCOUNT=file-acct\n"))
    env = {**DOCUMENTED, "SNOWFLAKE_ACCOUNT": ""}
    proc = deploy.run("run_job", *BASE, "--dry-run", ENV_FILE=str(env_file), **env)
    assert _manifests(proc.stdout)["ConfigMap"]["data"]["SNOWFLAKE_ACCOUNT"] == "file-acct"
