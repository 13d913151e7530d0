"""elastic-channels run checks the account settings once, before any worker starts:
one error naming the missing or bad setting, and no worker; the schema is not one of
them (PUBLIC by default)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from elastic_channels.fleet.run import _account_problem


def _clean_env(**settings: str) -> dict[str, str]:
    drop = ("SNOWFLAKE_", "SNOWPIPE_SDK_", "RUN_ID", "WORKER_ID")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)} | settings


def _run(*args: str, cwd: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", "run", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, env=_clean_env(**settings),
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error" in line.lower()]


def test_a_missing_profile_is_one_error_and_no_worker(tmp_path: Path) -> None:
    proc = _run("--profile", "missing.json", "--workers", "4", "--duration-seconds", "1",
                cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2
    assert _errors(proc.stderr) == [
        "elastic-channels run: error: --profile missing.json: cannot read it as JSON: "
        "No such file or directory"
    ], proc.stderr
    assert "worker(s)" not in proc.stderr  # the banner printed as the workers start
    assert not (tmp_path / ".elastic-channels").exists()  # nor a chart, nor an emulator


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"SNOWFLAKE_USER": "U", "SNOWFLAKE_PRIVATE_KEY": "PEM"},
         "no database: give --database or SNOWFLAKE_DATABASE"),
        ({"SNOWFLAKE_DATABASE": "D"}, "no user: give --user or SNOWFLAKE_USER"),
        ({"SNOWFLAKE_USER": "U", "SNOWFLAKE_DATABASE": "D"}, "no private key: give "),
        (
            {"SNOWFLAKE_USER": "U", "SNOWFLAKE_DATABASE": "D",
             "SNOWFLAKE_PRIVATE_KEY_FILE": "absent.p8"},
            "private key file absent.p8 (SNOWFLAKE_PRIVATE_KEY_FILE): No such file",
        ),
        ({"SNOWFLAKE_ACCOUNT": "my acct"}, "SNOWFLAKE_ACCOUNT 'my acct' is not an account"),
    ],
)  # fmt: skip
def test_the_first_missing_or_bad_setting_is_named_once(
    tmp_path: Path, settings: dict[str, str], named: str
) -> None:
    env = {"SNOWFLAKE_ACCOUNT": "myorg-myacct", **settings}
    proc = _run("--workers", "4", "--duration-seconds", "1", cwd=tmp_path, **env)
    assert proc.returncode == 2
    (error,) = _errors(proc.stderr)
    assert named in error, proc.stderr
    assert "worker(s)" not in proc.stderr


def test_the_schema_is_not_demanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = tmp_path / "rsa_key.p8"
    key.write_text("-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")
    for name, value in _clean_env().items():
        monkeypatch.setenv(name, value)
    for name in [k for k in os.environ if k.startswith("SNOWFLAKE_")]:
        monkeypatch.delenv(name)
    documented = {"SNOWFLAKE_ACCOUNT": "myorg-myacct", "SNOWFLAKE_USER": "INGEST",
                  "SNOWFLAKE_PRIVATE_KEY_FILE": str(key), "SNOWFLAKE_DATABASE": "DEMO",
                  "SNOWFLAKE_SCHEMA": ""}  # fmt: skip
    for name, value in documented.items():
        monkeypatch.setenv(name, value)
    values = {"profile": None, "database": None, "schema": None, "pipe": None}
    assert _account_problem(values) is None


def test_run_takes_channels_per_worker_and_passes_them_on():
    from elastic_channels.cli import build_parser
    from elastic_channels.fleet.run import SHARED_SETTINGS, _values
    from elastic_channels.worker.settings import flag_args

    args = build_parser("run").parse_args(["run", "--channels", "3", "--run-id", "c3"])
    v = _values(args)
    assert "channels" in SHARED_SETTINGS and v["channels"] == 3
    flags = flag_args(v)
    assert flags[flags.index("--channels") + 1] == "3"
