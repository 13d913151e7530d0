"""``elastic-channels dashboard``: its flags, the command it starts, clear errors."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

from elastic_channels.dashboard import cli
from elastic_channels.dashboard.settings import ENV, Settings


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="elastic-channels dashboard")
    cli.configure_parser(p)
    return p.parse_args(argv)


def test_defaults_and_command(tmp_path: Path) -> None:
    args = parse()
    assert args.port == 8501 and args.data_dir is None and args.workload is None
    assert args.func is cli.run
    cmd, env = cli.build_command(parse("--port", "9000", "--data-dir", str(tmp_path)))
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    # the app behind the loopback check (an st.App that streamlit run serves)
    assert Path(cmd[4]).name == "asgi.py" and Path(cmd[4]).is_file()
    assert "app = App(" in Path(cmd[4]).read_text()
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--server.port") + 1] == "9000"
    # no Deploy button, no developer menu (Streamlit >= 1.50: client.toolbarMode)
    assert cmd[cmd.index("--client.toolbarMode") + 1] == "viewer"
    assert cmd[cmd.index("--server.enableCORS") + 1] == "true"
    assert cmd[cmd.index("--server.enableXsrfProtection") + 1] == "true"
    assert Settings.from_env(env) == Settings(
        data_dir=tmp_path.resolve(), home=Path(".elastic-channels").resolve(), refresh_s=5.0
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--port", "0"), "port must be 1..65535"),
        (("--port", "http"), "not a port number"),
        (("--refresh-seconds", "0.1"), "give 0.5 to 3600 seconds"),
    ],
)
def test_bad_flags_name_the_problem(
    argv: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        parse(*argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_profile_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(parse("--profile", str(tmp_path / "nope.json"))) == 2
    assert "no such file" in capsys.readouterr().err


def test_settings_from_env_checks_refresh() -> None:
    with pytest.raises(ValueError, match=ENV["refresh_s"]):
        Settings.from_env({ENV["refresh_s"]: "soon"})
    got = Settings.from_env({})
    assert got.data_dir is None and got.home == Path(".elastic-channels")  # found there
    assert got.workload == "resort-sales"


def test_help_explains(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "127.0.0.1" in out and "--data-dir" in out and "Resort sales" in out
    assert "--workload" in out and "Latest rows" in out


def test_stopping_the_command_stops_the_server(tmp_path: Path) -> None:
    """SIGTERM to ``elastic-channels dashboard`` leaves no server behind (it becomes it);
    the server runs --nice lower in CPU priority than the shell (a run goes first)."""
    import socket
    import subprocess
    import time

    from dashboard_support import free_port, wait_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "elastic_channels.dashboard.cli", "--port", str(port),
         "--data-dir", str(tmp_path / "emu"), "--nice", "3"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_port(port, 60)
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == min(19, os.nice(0) + 3)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"something still serves 127.0.0.1:{port} after the command stopped")


def test_database_and_schema_as_run_takes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from elastic_channels.worker.settings import BY_NAME

    monkeypatch.delenv("SNOWFLAKE_ACCOUNT", raising=False)
    p = argparse.ArgumentParser(prog="elastic-channels dashboard")
    cli.configure_parser(p)
    helps = {a.dest: a.help for a in p._actions}
    for name in ("database", "schema"):  # the same help (and variable) as 'run --help'
        assert helps[name] == BY_NAME[name].help_text()
    profile = tmp_path / "p.json"
    profile.write_text("{}")
    args = parse("--profile", str(profile), "--database", "DEMO", "--schema", "RUNS")
    _, env = cli.build_command(args)
    got = Settings.from_env(env)
    assert (got.database, got.schema, got.profile) == ("DEMO", "RUNS", str(profile.resolve()))
    # without an account they name nothing: a clear error, not the emulator read instead
    assert cli.run(parse("--database", "DEMO")) == 2
    assert "--database/--schema name an account's objects" in capsys.readouterr().err


def test_the_workload_is_handed_to_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORKLOAD", raising=False)
    monkeypatch.setenv(ENV["data_dir"], "/somewhere/else")  # inherited: never passed on
    _, env = cli.build_command(parse())
    assert env[ENV["workload"]] == "resort-sales" and ENV["data_dir"] not in env
    assert Settings.from_env(env).home == Path(".elastic-channels").resolve()
    _, env = cli.build_command(parse("--workload", "iot-telemetry"))
    assert env[ENV["workload"]] == "iot-telemetry"
    spec = tmp_path / "mine.yaml"
    monkeypatch.chdir(tmp_path)
    _, env = cli.build_command(parse("--workload", "mine.yaml"))
    assert env[ENV["workload"]] == str(spec)  # a file: its absolute path
    monkeypatch.setenv("WORKLOAD", "clickstream")  # as 'run' reads it (.env too)
    _, env = cli.build_command(parse())
    assert env[ENV["workload"]] == "clickstream"
    _, env = cli.build_command(parse("--workload", "wide-events"))
    assert env[ENV["workload"]] == "wide-events"  # the flag first


def test_a_bad_workload_is_refused_naming_the_file_line_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("WORKLOAD", raising=False)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\ndescription: a range upside down\ntable: T\ncolumns:\n"
        "  - {name: ID, type: VARCHAR, unique_id: {}}\n"
        "  - name: TEMP\n    type: NUMBER(5,2)\n    range: {min: 50, max: 40}\n"
    )
    assert cli.run(parse("--workload", str(bad))) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"elastic-channels dashboard: --workload: {bad}:8: columns[1] (TEMP)")
    assert "range" in err and "Traceback" not in err
    assert cli.run(parse("--workload", "no-such-workload")) == 2
    err = capsys.readouterr().err
    assert "no shipped workload 'no-such-workload'" in err and "iot-telemetry" in err
    assert cli.run(parse("--workload", str(tmp_path / "missing.yaml"))) == 2
    assert "missing.yaml: cannot read it" in capsys.readouterr().err
    monkeypatch.setenv("WORKLOAD", str(bad))
    assert cli.run(parse()) == 2
    assert f"elastic-channels dashboard: WORKLOAD: {bad}:8:" in capsys.readouterr().err


def test_the_command_refuses_a_bad_workload_before_serving(tmp_path: Path) -> None:
    """``elastic-channels dashboard --workload BAD`` exits 2 with one line, no server."""
    import subprocess

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ndescription: x\ntable: T\ncolumns: []\n")
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels", "dashboard", "--workload", str(bad)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"elastic-channels dashboard: --workload: {bad}:4: columns: needs 1 to 1000 columns"
    ]
    assert "dashboard on http" not in proc.stdout


def test_nice_is_checked() -> None:
    assert parse().nice == cli.DEFAULT_NICE == 10  # a run on the same machine goes first
    assert parse("--nice", "0").nice == 0
    for bad in ("20", "-1", "low"):
        with pytest.raises(SystemExit):
            parse("--nice", bad)
