"""Every entry point that reads account settings reads ``.env`` the same way: the file
in the working directory fills what the environment does not set (env_file)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elastic_channels.env_file import load_settings_file


def _env_without_settings() -> dict[str, str]:
    drop = ("SNOWFLAKE_", "RUN_ID", "WORKER_ID", "JOB_COMPLETION_INDEX", "SNOWPIPE_SDK_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=60, cwd=cwd, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


SETUP_ENTRIES = [["-m", "elastic_channels", "setup"], ["-m", "elastic_channels.setup"]]


@pytest.mark.parametrize("entry", SETUP_ENTRIES, ids=["elastic-channels setup", "-m setup"])
def test_setup_reads_dot_env_and_the_environment_wins(entry: list[str], tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SNOWFLAKE_DATABASE=FROM_FILE\nSNOWFLAKE_SCHEMA=FILE_SCHEMA\n")
    done = _run([*entry, "--print"], tmp_path, _env_without_settings())
    assert done.returncode == 0, done.stderr
    assert "FROM_FILE.FILE_SCHEMA.RESORT_SALES" in done.stdout
    env = {**_env_without_settings(), "SNOWFLAKE_DATABASE": "FROM_ENV"}
    done = _run([*entry, "--print"], tmp_path, env)
    assert "FROM_ENV.FILE_SCHEMA.RESORT_SALES" in done.stdout and "FROM_FILE" not in done.stdout


WORKER_ENTRIES = [
    ["-m", "elastic_channels", "worker"],
    ["-m", "elastic_channels.k8s_worker"],
    ["-m", "elastic_channels.worker"],
]
WORKER_IDS = ["elastic-channels worker", "-m k8s_worker", "-m worker"]


@pytest.mark.parametrize("entry", WORKER_ENTRIES, ids=WORKER_IDS)
def test_the_worker_reads_its_account_from_dot_env(entry: list[str], tmp_path: Path) -> None:
    """The account and database come from .env: the first setting still missing is the
    schema (without the file it would be the connection itself)."""
    env = {**_env_without_settings(), "HOSTNAME": "laptop"}
    done = _run(entry, tmp_path, env)
    assert done.returncode == 2 and "no Snowflake connection" in done.stderr, done.stderr
    (tmp_path / ".env").write_text("SNOWFLAKE_ACCOUNT=ACCT\nSNOWFLAKE_DATABASE=DEMO\n")
    done = _run(entry, tmp_path, env)
    assert done.returncode == 2, done.stderr
    assert "no schema: give --schema or SNOWFLAKE_SCHEMA" in done.stderr
    assert done.stdout == ""


def test_the_file_fills_only_what_is_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELASTIC_TEST_SET", "from-env")
    monkeypatch.delenv("ELASTIC_TEST_UNSET", raising=False)
    path = tmp_path / ".env"
    assert load_settings_file(path) is False  # no file: nothing read
    path.write_text("ELASTIC_TEST_SET=from-file\nELASTIC_TEST_UNSET=from-file\n")
    try:
        assert load_settings_file(path) is True
        assert os.environ["ELASTIC_TEST_SET"] == "from-env"
        assert os.environ["ELASTIC_TEST_UNSET"] == "from-file"
    finally:
        os.environ.pop("ELASTIC_TEST_UNSET", None)
