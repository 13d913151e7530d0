"""Each command that reaches an account asks the preflight first and says its one line:
``setup`` (through the SQL API or the connector), ``monitor`` and the dashboard's
account source, against a closed 127.0.0.1 port (the account URL overridden with
SNOWFLAKE_HOST/SNOWFLAKE_PORT). The SDK-less stand-ins of their own tests leave the
preflight out; this is where it is seen wired."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from key_files import pem_key
from reach_support import closed_port

from elastic_channels.snowflake import cli as setup_cli

pytest.importorskip("jwt")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def account_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[dict[str, str], int]:
    """SNOWFLAKE_* naming an account whose URL is a closed loopback port (set here, and
    returned for a child process)."""
    for name in list(os.environ):
        if name.startswith("SNOWFLAKE_"):
            monkeypatch.delenv(name)
    port = closed_port()
    env = {
        "SNOWFLAKE_ACCOUNT": "myorg-myacct", "SNOWFLAKE_USER": "ingest",
        "SNOWFLAKE_PRIVATE_KEY_FILE": str(pem_key(tmp_path)), "SNOWFLAKE_DATABASE": "DEMO",
        "SNOWFLAKE_HOST": "127.0.0.1", "SNOWFLAKE_PORT": str(port),
    }  # fmt: skip
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env, port


def _line(port: int) -> str:
    return f"cannot reach the account at 127.0.0.1:{port}: TCP connect to 127.0.0.1 refused"


def test_setup_says_the_line_before_any_statement(
    account_env: tuple[dict[str, str], int], capsys: pytest.CaptureFixture[str]
) -> None:
    _, port = account_env
    assert setup_cli.main([]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"setup: error: {_line(port)}\n")


def test_setup_via_the_connector_never_connects(
    account_env: tuple[dict[str, str], int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, port = account_env
    connects: list[dict] = []
    connector = types.ModuleType("snowflake.connector")
    connector.connect = lambda **params: connects.append(params)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snowflake.connector", connector)
    assert setup_cli.main(["--via", "connector"]) == 2
    assert capsys.readouterr().err == f"setup: error: {_line(port)}\n"
    assert connects == []


def test_monitor_says_the_line_and_exits_2(
    account_env: tuple[dict[str, str], int], tmp_path: Path
) -> None:
    env, port = account_env
    child_env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "python"), **env}
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.monitor", "-", "--run-id", "r1"],
        input="", capture_output=True, text=True, timeout=60, cwd=tmp_path, env=child_env,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == f"elastic-channels monitor: error: {_line(port)}\n"


def test_the_dashboards_account_source_says_the_line(
    account_env: tuple[dict[str, str], int], tmp_path: Path
) -> None:
    pytest.importorskip("pandas")
    from elastic_channels.dashboard.account import AccountSource
    from elastic_channels.dashboard.source import QueryError

    _, port = account_env
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"account": "myorg-myacct", "user": "ingest"}))
    with pytest.raises(QueryError) as caught:
        AccountSource(str(profile))
    assert str(caught.value) == _line(port)
