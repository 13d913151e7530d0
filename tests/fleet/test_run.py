"""elastic-channels run, end to end, as a user runs it: embedded emulator, N workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


def run_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,  # not the checkout: the installed package, and its data dir lands here
        check=False,
    )


def test_two_workers_land_everything_and_report_it(tmp_path: Path) -> None:
    proc = run_cli(
        "run", "--workers", "2", "--target-bps", "5e6", "--duration-seconds", "4",
        "--window-seconds", "1", "--run-id", "cli-e2e", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    landed = result["landed"]
    totals = result["totals"]
    assert landed["lost"] == 0 and landed["duplicates"] == 0
    assert landed["rows_landed"] == landed["rows_expected"] == totals["rows_sent"] > 0
    assert totals["rows_acked"] == totals["rows_sent"] and totals["unacked_rows"] == 0
    workers = result["worker_summaries"]
    assert totals["sdk_retries"] == sum(s["sdk_retries"] for s in workers)
    assert landed["visible_p50_ms"] is not None and landed["visible_p99_ms"] >= 0
    assert [s["worker_id"] for s in result["worker_summaries"]] == [0, 1]
    assert result["failed_workers"] == []
    # Live fleet-wide windows went to stderr while it ran, and are in the JSON.
    assert len(result["windows"]) >= 2
    assert all(w["workers"] >= 1 and w["mb_per_s"] > 0 for w in result["windows"])
    assert "MB/s" in proc.stderr and "rows/s" in proc.stderr
    # The summary table, the landed line and the chart.
    assert "total" in proc.stdout and "0 lost" in proc.stdout
    chart = Path(result["chart"])
    if not chart.is_absolute():
        chart = tmp_path / chart
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The emulator's data stays for queries afterwards, under the working directory.
    assert (tmp_path / ".elastic-channels" / "emulator").is_dir()


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--workers", "0"), ("--target-bps", "0"), ("--duration-seconds", "-1")],
)
def test_bad_arguments_name_the_flag(tmp_path: Path, flag: str, value: str) -> None:
    proc = run_cli("run", flag, value, cwd=tmp_path, timeout=30)
    assert proc.returncode == 2
    assert flag in proc.stderr


def test_help_explains_run(tmp_path: Path) -> None:
    proc = run_cli("run", "--help", cwd=tmp_path, timeout=30)
    assert proc.returncode == 0
    for flag in ("--workers", "--target-bps", "--duration-seconds", "--json", "--profile"):
        assert flag in proc.stdout
    # Defaults argparse holds are shown; flags that default to None explain themselves.
    assert "(default: 1)" in proc.stdout and "default: None" not in proc.stdout
