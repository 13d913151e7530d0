"""``python -m elastic_channels.emulator``: serve, query (online and offline), stats, faults."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import zstandard
from emulator_support import PYTHON_DIR, make_emulator

from elastic_channels.rows import ResortGenerator

ENV = dict(
    os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")])
)
SERVE_FLAGS = (
    "--port", "--data-dir", "--info-file", "--host", "--public-key", "--duration-seconds",
    "--no-fsync", "--append-buffer-ms", "--token-ttl-seconds", "--duckdb-threads", "--verbose",
    "--no-key-check", "--header-timeout-seconds", "--body-timeout-seconds",
    "--idle-timeout-seconds", "--max-connections", "--sink", "--no-sink-check",
    "--answer-delay-seconds", "--table-format",
)  # fmt: skip
#: Spellings retired for the ones above (a unit in every name): now refused.
RETIRED_FLAGS = ("--duration", "--token-ttl", "--answer-delay-s")


def cli_in(cwd, *args, timeout=60):
    """``cli`` run in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.emulator", *map(str, args)],
        env=ENV, capture_output=True, text=True, timeout=timeout, cwd=cwd,
    )  # fmt: skip


def cli(*args, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.emulator", *map(str, args)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_help_explains_every_flag():
    out = cli("serve", "--help").stdout
    for flag in SERVE_FLAGS:
        assert flag in out
    assert "0 picks a free one" in out
    assert "%" not in out, "help says what a flag does, not what it measured once"
    assert "add" in cli("faults", "--data-dir", "x", "--help").stdout
    add = cli("faults", "--data-dir", "x", "add", "--help").stdout
    assert "--delay-seconds" in add and "--delay-s " not in add


def test_every_command_describes_itself():
    for argv in (["stats"], ["faults", "--data-dir", "x", "list"],
                 ["faults", "--data-dir", "x", "clear"]):  # fmt: skip
        out = cli(*argv, "--help").stdout
        usage_end = out.index("\n\n")
        assert "options:" in out[usage_end:] and not out[usage_end:].lstrip().startswith(
            "options:"
        ), f"{argv}: no description in --help"


def test_retired_flag_spellings_are_refused(tmp_path):
    for flag in RETIRED_FLAGS:
        r = cli("serve", "--data-dir", tmp_path / "emu", flag, "1", timeout=30)
        assert r.returncode == 2 and "unrecognized arguments" in r.stderr, flag
    r = cli("faults", "--data-dir", tmp_path, "add", "rows", "delay", "--delay-s", "1")
    assert r.returncode == 2 and "unrecognized arguments" in r.stderr


def test_clear_errors_without_a_server(tmp_path):
    r = cli("stats", "--data-dir", tmp_path)
    assert r.returncode == 1 and "no emulator database" in r.stderr
    r = cli("faults", "--data-dir", tmp_path, "list")
    assert r.returncode == 1 and "no emulator is running" in r.stderr
    r = cli("query", "--data-dir", tmp_path, "SELECT 1")
    assert r.returncode == 1 and "no emulator database" in r.stderr
    r = cli("serve", "--data-dir", tmp_path, "--host", "0.0.0.0", "--duration-seconds", "1")
    assert r.returncode != 0 and "loopback" in r.stderr


def test_serve_query_stats_faults_then_offline_query(tmp_path):
    data, info_file = tmp_path / "emu", tmp_path / "info.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "elastic_channels.emulator", "serve", "--port", "0",
         "--data-dir", str(data), "--info-file", str(info_file), "--duration-seconds", "60"],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not info_file.exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the server did not become ready"
            time.sleep(0.05)
        info = json.loads(info_file.read_text())
        props = info["properties"]
        assert props["host"] == "localhost" and props["scheme"] == "https"
        # The SDK runs with its own defaults (file mode for big flushes), as on an account;
        # file mode's uploads go to the stage named in client_env.
        assert "max_buffered_kb_for_rowset_mode" not in props
        assert "max_rowset_payload_size_mb" not in props
        assert info["client_env"]["AWS_ENDPOINT_URL"].startswith("https://127.0.0.1:")
        assert info["client_env"]["SSL_CERT_FILE"] == info["ssl_cert_file"]
        assert os.path.exists(info["ssl_cert_file"]) and os.path.exists(props["private_key_file"])
        assert (info["database"], info["schema"], info["pipe"]) == (
            "EMULATOR_DB", "PUBLIC", "RESORT_SALES_PIPE",
        )  # fmt: skip

        r = cli(
            "faults", "--data-dir", data, "add", "rows", "status", "--status", "503", "--count", "3"
        )
        assert r.returncode == 0 and json.loads(r.stdout)[0]["remaining"] == 3
        stats = json.loads(cli("stats", "--data-dir", data).stdout)
        assert stats["port"] == props["port"] and stats["faults"][0]["status"] == 503
        r = cli("query", "--data-dir", data, "SELECT count(*) AS n FROM RESORT_SALES")
        assert r.returncode == 0 and json.loads(r.stdout) == {"n": 0}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert proc.returncode == 0
    assert not (data / "server.json").exists()
    r = cli("query", "--data-dir", data, "SELECT count(*) AS n FROM RESORT_SALES")
    assert r.returncode == 0 and json.loads(r.stdout) == {"n": 0}


def test_serve_stops_by_itself(tmp_path):
    r = cli("serve", "--data-dir", tmp_path / "emu", "--duration-seconds", "0.5", timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)["url"].startswith("https://127.0.0.1:")


def test_host_localhost_binds_loopback(tmp_path):
    r = cli(
        "serve", "--data-dir", tmp_path / "emu", "--host", "localhost", "--duration-seconds", "0.5"
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["url"].startswith("https://127.0.0.1:")


def test_help_at_every_level_and_configure_parser_contract():
    import argparse

    from elastic_channels.emulator.cli import configure_parser

    top = cli("--help").stdout
    for command in ("serve", "query", "stats", "faults"):
        assert command in top
        assert cli(command, "--help").returncode == 0
    assert "lose_ack" in cli("faults", "--data-dir", "x", "add", "--help").stdout
    parser = argparse.ArgumentParser(prog="elastic-channels emulator")
    configure_parser(parser)
    for argv in (
        ["serve", "--data-dir", "d"],
        ["query", "--data-dir", "d", "SELECT 1"],
        ["stats", "--data-dir", "d"],
        ["faults", "--data-dir", "d", "list"],
    ):
        assert callable(parser.parse_args(argv).func)


def test_offline_query_sees_rows_landed_before_stop(tmp_path):
    n = 3
    emu = make_emulator(tmp_path)
    body = ResortGenerator("offline", 0).next_batch(n, 1_700_000_000_000_000)
    emu.lander.put(("EMULATOR_DB", "PUBLIC", "RESORT_SALES_PIPE", "ELASTIC"), "r",
                   zstandard.ZstdCompressor().compress(body), "zstd", len(body))  # fmt: skip
    emu.stop()  # lands what was acked first
    r = cli("query", "--data-dir", tmp_path / "emu", "SELECT TXID FROM RESORT_SALES ORDER BY 1")
    assert [json.loads(line)["TXID"] for line in r.stdout.splitlines()] == [
        f"offline-0-{i}" for i in range(n)
    ]
    stats = json.loads(cli("stats", "--data-dir", tmp_path / "emu").stdout)
    assert stats["running"] is False and stats["rows_landed"] == n
    assert stats["spooled_not_landed"] == 0
    # With no --data-dir, query and stats read where `run` keeps its emulator.
    home = tmp_path / "cwd" / ".elastic-channels"
    home.mkdir(parents=True)
    (tmp_path / "emu").rename(home / "emulator")
    r = cli_in(tmp_path / "cwd", "query", "SELECT count(*) AS n FROM RESORT_SALES")
    assert r.returncode == 0 and json.loads(r.stdout) == {"n": n}
    r = cli_in(tmp_path / "cwd", "stats")
    assert r.returncode == 0 and json.loads(r.stdout)["rows_landed"] == n
    r = cli_in(tmp_path, "query", "SELECT 1")  # nothing there: says what to do
    assert r.returncode == 1 and "elastic-channels run" in r.stderr and "--data-dir" in r.stderr


def test_a_channel_limit_outside_the_rates_a_scenario_takes_is_refused(tmp_path) -> None:
    import subprocess
    import sys

    for value in ("1e-300", "0", "1e300"):
        r = subprocess.run(
            [sys.executable, "-m", "elastic_channels.emulator", "serve", "--data-dir",
             str(tmp_path / "d"), "--channel-limit-mbps", value],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert r.returncode == 2, r.stderr
        assert "a rate must be a number of MB/s from 0.001 to 100000" in r.stderr
