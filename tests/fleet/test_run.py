"""elastic-channels run, end to end, as a user runs it: embedded emulator, N workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import query_emulator, sdk_available

from elastic_channels.fleet.run import start_allowance

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
        "--window-seconds", "1", "--run-id", "cli-e2e", "--price-per-credit", "3", "--json",
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
    assert all(not s["under_target"] and s["short_mb"] == 0.0 for s in workers)
    assert result["failed_workers"] == []
    assert result["outcome"] == {"outcome": "passed", "exit_code": 0, "reasons": []}
    assert "run cli-e2e: PASSED (exit 0)" in proc.stderr
    # Every whole window counts both workers; each progress line says how far the run is.
    assert all(w["workers"] == 2 for w in result["windows"] if not w["partial"])
    assert "/4s]   2 workers" in proc.stderr
    # Live fleet-wide windows went to stderr while it ran, and are in the JSON.
    assert len(result["windows"]) >= 2
    assert all(w["workers"] >= 1 for w in result["windows"])
    # Windows are on the wall clock: only a partial first or last one (the drain) may
    # have sent nothing; each fleet window sums its workers' rows exactly.
    assert all(w["mb_per_s"] > 0 for w in result["windows"] if not w["partial"])
    assert sum(w["rows"] for w in result["windows"]) == totals["rows_sent"]
    assert "MB/s" in proc.stderr and "rows/s" in proc.stderr
    # The values' bytes (what Snowflake bills) as the workers counted them at ack is what
    # the emulator counted in the rows it landed; the summary prices them (issue #32).
    check = result["billable_check"]
    assert check["agree"] is True and check["workers"] == check["emulator"] > 0
    assert check["workers"] == sum(s["billable_bytes"] for s in workers) < totals["bytes_acked"]
    assert sum(w["billable_bytes"] for w in result["windows"]) == check["workers"]
    assert result["price"] == {"credits_per_gb": 0.0037, "price_per_credit": 3.0}
    assert "billable: " in proc.stderr and "(at 0.0037 credits/GB" in proc.stderr
    assert "at $3 a credit" in proc.stderr
    assert "disagree" not in proc.stderr
    # --json: stdout is the one JSON document; the tables and the landed line go to stderr.
    assert len(proc.stdout.strip().splitlines()) == 1
    assert "total" in proc.stderr and "0 lost" in proc.stderr
    chart = Path(result["chart"])
    if not chart.is_absolute():
        chart = tmp_path / chart
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The emulator's data stays for queries afterwards, under the working directory.
    assert (tmp_path / ".elastic-channels" / "emulator").is_dir()


def test_a_worker_held_below_its_target_says_by_how_much(tmp_path: Path) -> None:
    """At 2 GB/s with 2 MB in flight at most, a worker cannot keep up: its summary says
    it ended under target, short by what the target asked for less what it sent."""
    proc = run_cli(
        "run", "--workers", "1", "--target-bps", "2e9", "--duration-seconds", "2",
        "--worker-arg=--max-inflight-bytes=2000000", "--no-monitor", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (s,) = json.loads(proc.stdout.strip().splitlines()[-1])["worker_summaries"]
    assert s["under_target"] is True and s["target_bps"] == 2e9
    assert s["short_mb"] == round((2e9 * s["seconds"] - s["bytes_sent"]) / 1e6, 3) > 1000
    assert "worker(s) [0] ended under their target rate" in proc.stderr


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


def _child_pids(parent: int) -> dict[int, str]:
    """The child processes of ``parent`` and their command lines (from /proc)."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent:
            out[int(stat.parent.name)] = cmdline
    return out


def test_a_killed_worker_is_reported_lost_unknown_and_progress_goes_on(tmp_path: Path) -> None:
    """SIGKILL one of two workers mid-run: the run must not claim lost = 0, must say
    what it knows of that worker, and must keep printing the other's windows."""
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "elastic_channels", "run", "--workers", "2",
         "--target-bps", "5e6", "--duration-seconds", "8", "--window-seconds", "1",
         "--run-id", "cli-kill", "--no-visible", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        victim = None
        deadline = time.monotonic() + 30
        while victim is None and time.monotonic() < deadline:
            time.sleep(0.5)
            for pid, cmd in _child_pids(proc.pid).items():
                if "--worker-id 1" in cmd:
                    victim = pid
        assert victim is not None, "worker 1 never started"
        # let it send and report windows first (after the run's agreed start)
        time.sleep(3 + start_allowance(2) + 1)
        import os

        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result["failed_workers"] == [1]
    landed = result["landed"]
    assert landed["lost"] is None and landed["rows_expected"] is None
    (killed,) = landed["killed_workers"]
    assert killed["worker_id"] == 1 and killed["lost"] == "unknown"
    assert killed["exit_code"] == -signal.SIGKILL
    assert killed["unacked_bytes_at_last_window"] is not None
    assert killed["rows_landed"] > 0 and killed["missing_below_last_landed"] >= 0
    # Its bounds: what it generated for certain up to what its pacing allowed, and every
    # TXID of it that landed within them.
    (top,) = query_emulator(
        tmp_path, "SELECT max(CAST(regexp_extract(TXID, '([0-9]+)$', 1) AS BIGINT)) + 1 "
        "AS N FROM RESORT_SALES WHERE WORKER_ID = 1",
    )  # fmt: skip
    assert killed["rows_appended_by_last_line"] > 0
    assert killed["rows_generated_at_least"] >= max(top["N"], killed["rows_landed"])
    assert killed["rows_generated_at_most"] >= top["N"]
    assert 0 <= killed["lost_at_least"] <= killed["lost_at_most"]
    assert landed["rows_expected_at_least"] <= landed["rows_expected_at_most"]
    assert landed["lost_at_least"] <= landed["lost_at_most"]
    # --json: the landed line is on stderr, stdout holds the JSON alone
    assert "lost unknown (at least" in err
    assert "worker 1 ended without a summary (killed by SIGKILL)" in err and "exit -9" not in err
    assert "its pacing allowed" in err
    assert "worker 1 killed by SIGKILL without a summary" in err
    # --no-visible reached the monitor: its windows carry no ingest-to-visible figures.
    assert result["metrics_windows"]
    assert all(w["visible_rows"] is None for w in result["metrics_windows"])
    # Worker 0 ran on to the end, and its windows kept coming after the kill.
    assert [s["worker_id"] for s in result["worker_summaries"]] == [0]
    assert len(result["windows"]) >= 7, result["windows"]
    # The outcome says which worker failed and how; nothing says a threshold held.
    outcome = result["outcome"]
    assert outcome["outcome"] == "workers_failed" and outcome["exit_code"] == 1
    assert any(r.startswith("worker 1 killed by SIGKILL at ") for r in outcome["reasons"])
    assert "run cli-kill: WORKERS FAILED: worker 1 killed by SIGKILL" in out + err
    assert "threshold held" not in err
    (detail,) = result["failed_worker_details"]
    assert detail["worker_id"] == 1 and detail["at_s"] is not None and 0 < detail["at_s"] < 8
    # The target stays the fleet's (2 x 5 MB/s) after the kill: the fleet falls short.
    killed_at = detail["at_s"] + result["start_at"]
    after = [w for w in result["windows"] if w["start"] >= killed_at + 1 and w.get("rows")]
    assert after, result["windows"]
    assert all(w["workers"] == 1 and w["target_bps"] == 10e6 for w in after), after
    assert all(w["mb_per_s"] < 7.5 for w in after if not w["partial"]), after
