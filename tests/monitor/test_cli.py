"""``elastic-channels monitor`` (run as ``python -m elastic_channels.monitor``, the same
parser): files and stdin in, rows out
through the SQL API over HTTP (a local server with the emulator's JWT check and handler)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest
from monitor_support import EPOCH0, FakeWorker, sql_api_server

from elastic_channels.monitor.monitor import fleet_windows
from elastic_channels.monitor.target import TargetError, account_sink, profile_sink

REPO = Path(__file__).resolve().parents[2]


def monitor_cli(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """The monitor's entry point, in ``cwd`` (default: an empty directory, so no
    ``.env`` is read)."""
    with tempfile.TemporaryDirectory() as empty:
        return subprocess.run(
            [sys.executable, "-m", "elastic_channels.monitor", *args],
            input=stdin, capture_output=True, text=True, timeout=120, cwd=cwd or empty,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "python")},
        )  # fmt: skip


def write_profile(tmp_path: Path, url: str, pem: bytes) -> Path:
    key = tmp_path / "monitor.p8"
    key.write_bytes(pem)
    profile = tmp_path / "info.json"
    profile.write_text(json.dumps({
        "url": url, "private_key_file": str(key), "database": "EMU_DB", "schema": "PUBLIC",
        "properties": {"account": "emu", "user": "monitor"},
    }))  # fmt: skip
    return profile


def worker_logs(tmp_path: Path) -> tuple[list[Path], list[FakeWorker]]:
    rng = random.Random(11)
    paths, workers = [], []
    for wid in range(3):
        w = FakeWorker("cli-run", wid, EPOCH0 + 0.3 * wid, 5.0)
        while w.now < w.start + 11:
            w.step(0.3, rng)
        w.finish()
        path = tmp_path / f"worker-{wid}.log"
        body = "SDK noise line\n" + "".join(json.dumps(x) + "\n" for x in w.lines)
        path.write_text(body + json.dumps(w.summary()) + "\n")
        paths.append(path)
        workers.append(w)
    return paths, workers


def test_files_and_stdin_to_the_metrics_table(tmp_path: Path) -> None:
    con = duckdb.connect()
    with sql_api_server(con) as (url, pem):
        profile = write_profile(tmp_path, url, pem)
        paths, workers = worker_logs(tmp_path)
        stdin = paths[2].read_text()
        proc = monitor_cli(str(paths[0]), str(paths[1]), "-", "--profile", str(profile),
                           "--no-visible", stdin=stdin)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "3 line(s) skipped" in proc.stderr
        sink = profile_sink(profile)
        fleet = fleet_windows(sink, "cli-run")
        starts = sorted({x["window_start"] for w in workers for x in w.lines})
        assert [f["window_start"] for f in fleet] == starts
        for f in fleet:
            lines = [x for w in workers for x in w.lines if x["window_start"] == f["window_start"]]
            assert f["rows"] == sum(x["rows"] for x in lines)
            assert f["workers"] == len(lines)
        # Run again (a restart reading the same logs): the same rows, none added.
        before = sink.read_rows("cli-run")
        proc = monitor_cli(*map(str, paths), "--profile", str(profile), "--no-visible",
                           "--run-id", "cli-run")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "row(s) already in ELASTIC_K8S_METRICS" in proc.stderr
        after = sink.read_rows("cli-run")
        assert len(after) == len(before)


def test_settings_come_from_a_dotenv_file_in_the_working_directory(tmp_path: Path) -> None:
    """As every entry point does: the target and the run id from ``.env``."""
    con = duckdb.connect()
    with sql_api_server(con) as (url, pem):
        profile = write_profile(tmp_path, url, pem)
        paths, workers = worker_logs(tmp_path)
        (tmp_path / ".env").write_text(f"SNOWFLAKE_PROFILE={profile}\nRUN_ID=cli-run\n")
        proc = monitor_cli(*map(str, paths), "--no-visible", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "monitor cli-run: 0 row(s) already in" in proc.stderr  # RUN_ID from .env
        fleet = fleet_windows(profile_sink(profile), "cli-run")
        assert len(fleet) == len({x["window_start"] for w in workers for x in w.lines})
        (tmp_path / ".env").write_text("SNOWFLAKE_PROFILE=/nonexistent.json\n")
        assert "cannot read it as JSON" in monitor_cli(str(paths[0]), cwd=tmp_path).stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], "FILE arguments, - for stdin, or --k8s"),
        (["--k8s"], "--k8s needs --run-id"),
        (["x.log", "--workers", "0"], "--workers must be >= 1"),
        (["x.log"], "no target"),
        (["x.log", "--profile", "/nonexistent.json"], "cannot read it as JSON"),
        # NaN or infinity would remove the bound these set (issue #23)
        (["x.log", "--grace-seconds", "nan"], "--grace-seconds: give 0 to 3600 seconds"),
        (["x.log", "--visible-wait-seconds", "inf"], "--visible-wait-seconds: give 0 to 3600"),
    ],
)
def test_errors_say_what_to_do(args: list[str], words: str) -> None:
    proc = monitor_cli(*args)
    assert proc.returncode == 2
    assert words in proc.stderr


def test_account_settings_are_checked_before_connecting(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="SNOWFLAKE_PRIVATE_KEY_FILE"):
        account_sink({"account": "a", "user": "u", "database": "D", "schema": "S"})
    key = tmp_path / "k.p8"
    key.write_text("not a key")
    with pytest.raises(TargetError, match="not a usable PEM"):
        account_sink({"account": "a", "user": "u", "database": "D", "schema": "S",
                      "private_key_file": str(key)})  # fmt: skip


def test_help_explains_the_command() -> None:
    proc = monitor_cli("--help")
    assert proc.returncode == 0
    for words in ("--k8s", "--grace-seconds", "--profile", "SNOWFLAKE_ACCOUNT"):
        assert words in proc.stdout


def test_an_sdk_profile_is_completed_by_the_environment(tmp_path: Path) -> None:
    """An SDK profile (bare base64 key body, as the SDK keeps it) names the account;
    database and schema come from the environment; a missing one is named."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from elastic_channels.monitor.target import sink_from

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    body = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )  # fmt: skip
    import base64

    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"account": "org-acct", "user": "ingest",
                                   "private_key": base64.b64encode(body).decode()}))  # fmt: skip
    with pytest.raises(TargetError, match="SNOWFLAKE_DATABASE"):
        sink_from(str(profile), {}, {})
    sink = sink_from(str(profile), {}, {"SNOWFLAKE_DATABASE": "D", "SNOWFLAKE_SCHEMA": "S"})
    assert sink.client._context == {"database": "D", "schema": "S"}
