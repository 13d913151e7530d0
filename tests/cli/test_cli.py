"""The one command: every job listed, plain-text help at every level, .env settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

JOBS = ["run", "worker", "bench", "emulator", "setup", "plan", "monitor", "dashboard"]


def cli(*args: str, cwd: Path | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, env=env,
    )  # fmt: skip


def test_top_level_help_lists_every_job() -> None:
    done = cli("--help")
    assert done.returncode == 0, done.stderr
    for job in JOBS:
        assert f"\n    {job}" in done.stdout, job
    assert "``" not in done.stdout and ":data:" not in done.stdout  # no RST markup


@pytest.mark.parametrize("job", JOBS)
def test_every_job_has_plain_text_help(job: str) -> None:
    done = cli(job, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: elastic-channels {job}")
    assert "``" not in done.stdout and "default: None" not in done.stdout
    assert "unavailable" not in done.stdout


def test_an_unknown_job_is_refused_with_the_list() -> None:
    done = cli("launch")
    assert done.returncode == 2
    assert "invalid choice: 'launch'" in done.stderr and "run" in done.stderr


def _env_without_snowflake() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_")}


def test_settings_come_from_a_dot_env_file_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SNOWFLAKE_DATABASE=FROM_FILE\nSNOWFLAKE_SCHEMA=FILE_SCHEMA\n")
    done = cli("setup", "--print", cwd=tmp_path, env=_env_without_snowflake())
    assert done.returncode == 0, done.stderr
    assert "CREATE DATABASE IF NOT EXISTS FROM_FILE" in done.stdout
    assert "FROM_FILE.FILE_SCHEMA.RESORT_SALES" in done.stdout
    env = {**_env_without_snowflake(), "SNOWFLAKE_DATABASE": "FROM_ENV"}
    done = cli("setup", "--print", cwd=tmp_path, env=env)
    assert "CREATE DATABASE IF NOT EXISTS FROM_ENV" in done.stdout
    assert "FROM_FILE" not in done.stdout


def test_without_a_dot_env_file_a_missing_setting_is_named(tmp_path: Path) -> None:
    done = cli("setup", "--print", cwd=tmp_path, env=_env_without_snowflake())
    assert done.returncode == 2
    assert "--database (or SNOWFLAKE_DATABASE) is required" in done.stderr
