"""Every entry point that reads account settings reads ``.env`` the same way: the file
in the working directory fills what the environment does not set (env_file), and an
empty value is unset on either side, so ``cp .env.example .env`` breaks nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elastic_channels.env_file import load_settings_file

REPO = Path(__file__).resolve().parents[2]


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
    """The account comes from .env: the first setting still missing is the database
    (without the file it would be the account itself)."""
    env = {**_env_without_settings(), "HOSTNAME": "laptop"}
    done = _run(entry, tmp_path, env)
    assert done.returncode == 2 and "no account: give --account" in done.stderr, done.stderr
    (tmp_path / ".env").write_text("SNOWFLAKE_ACCOUNT=ACCT\n")
    done = _run(entry, tmp_path, env)
    assert done.returncode == 2, done.stderr
    assert "no database: give --database or SNOWFLAKE_DATABASE" in done.stderr
    assert done.stdout == ""


def _example_filled_in(tmp_path: Path, **values: str) -> Path:
    """``cp .env.example .env``, then ``values`` written into their lines."""
    lines = (REPO / ".env.example").read_text().splitlines()
    for i, line in enumerate(lines):
        key = line.partition("=")[0]
        if key in values and line == f"{key}=":
            lines[i] = f"{key}={values.pop(key)}"
    assert not values, f"not in .env.example: {values}"
    path = tmp_path / ".env"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("entry", SETUP_ENTRIES, ids=["elastic-channels setup", "-m setup"])
def test_a_copy_of_env_example_breaks_no_command(entry: list[str], tmp_path: Path) -> None:
    """Every value in .env.example is empty: each means its default (PUBLIC, ...)."""
    _example_filled_in(tmp_path)
    done = _run([*entry, "--print", "--database", "X"], tmp_path, _env_without_settings())
    assert done.returncode == 0, done.stderr
    assert "X.PUBLIC.RESORT_SALES" in done.stdout and "X.PUBLIC.RESORT_SALES_PIPE" in done.stdout
    done = _run(["-m", "elastic_channels", "worker"], tmp_path, _env_without_settings())
    assert done.returncode == 2 and "no account: give --account" in done.stderr, done.stderr


def test_the_documented_variables_give_the_worker_its_account_url(tmp_path: Path) -> None:
    """.env.example filled in as it documents (no host, port, schema or profile): the
    worker's SDK properties carry the host derived from the account."""
    key = tmp_path / "rsa_key.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")
    _example_filled_in(
        tmp_path, SNOWFLAKE_ACCOUNT="myorg-myacct", SNOWFLAKE_USER="INGEST",
        SNOWFLAKE_PRIVATE_KEY_FILE=str(key), SNOWFLAKE_DATABASE="DEMO",
    )  # fmt: skip
    code = (
        "from elastic_channels.env_file import load_settings_file\n"
        "from elastic_channels.worker.config import load_config\n"
        "load_settings_file()\n"
        "c = load_config([])\n"
        "print(c.properties['host'], c.properties['scheme'], c.database, c.schema, c.pipe)\n"
    )
    env = {**_env_without_settings(), "HOSTNAME": "laptop", "SNOWFLAKE_SCHEMA": ""}
    done = _run(["-c", code], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "myorg-myacct.snowflakecomputing.com", "https", "DEMO", "PUBLIC", "RESORT_SALES_PIPE"
    ]  # fmt: skip


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


def test_empty_values_are_unset_on_either_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELASTIC_TEST_EMPTY_ENV", "")
    monkeypatch.delenv("ELASTIC_TEST_EMPTY_FILE", raising=False)
    path = tmp_path / ".env"
    path.write_text("ELASTIC_TEST_EMPTY_ENV=from-file\nELASTIC_TEST_EMPTY_FILE=\n")
    assert load_settings_file(path) is True
    assert os.environ["ELASTIC_TEST_EMPTY_ENV"] == "from-file"  # an empty variable is unset
    assert "ELASTIC_TEST_EMPTY_FILE" not in os.environ  # an empty value sets nothing
