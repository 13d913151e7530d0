"""benches/bench_cli_start.py at its smallest (one run of each command, 1-s workers): it
prints both figures, ``--help``'s wall time and max RSS, and the two workers' max RSS."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

BENCH = Path(__file__).resolve().parents[2] / "benches" / "bench_cli_start.py"

pytestmark = pytest.mark.skipif(
    not Path("/usr/bin/time").is_file(), reason="/usr/bin/time (GNU time) is not installed"
)


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), "--repeats", "1", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
def test_one_repeat_gives_both_figures() -> None:
    proc = run_bench("--worker-seconds", "1", "--target-bps", "2e6", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)  # --json: the one document on stdout
    help_ = result["help"]
    assert help_["command"].endswith("--help")
    assert 0 < help_["wall_s"]["median"] < 30 and help_["wall_s"]["n"] == 1
    assert 1 < help_["max_rss_mb"]["median"] < 500
    workers = result["worker"]
    for name in ("elastic-channels worker", "python -m elastic_channels.k8s_worker"):
        assert 10 < workers[name]["max_rss_mb"]["median"] < 2000
    assert workers["rss_ratio"] > 0
    # The same figures, as text, on stderr (where --json puts it).
    for text in ("--help: wall ", "--help: max RSS ", "elastic-channels worker: max RSS ",
                 "k8s_worker: max RSS ", "load average"):  # fmt: skip
        assert text in proc.stderr, proc.stderr


def test_help_only_times_help_and_starts_no_worker() -> None:
    proc = run_bench("--help-only")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "--help: wall " in proc.stdout and "--help: max RSS " in proc.stdout
    assert "worker" not in proc.stdout.replace("--help", "")


def test_its_help_explains_it() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    for text in ("--repeats", "--help-only", "--worker-seconds", "/usr/bin/time", "k8s_worker"):
        assert text in proc.stdout
