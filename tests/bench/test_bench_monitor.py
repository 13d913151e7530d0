"""benches/bench_monitor.py at its smallest (3 workers x 2 windows, one run through the
latency proxy): it replays the lines through a real ``monitor`` into a real ``emulator
serve`` and reports every figure, the rows it wrote and whether it kept up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benches" / "bench_monitor.py"


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), "--repeats", "1", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_tiny_fleet_is_replayed_and_every_figure_reported() -> None:
    proc = run_bench("--workers", "3", "--windows", "2", "--sql-latency-ms", "20", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)  # --json: the one document on stdout
    (case,) = result["cases"]
    assert case["sql_latency_ms"] == 20
    # 3 workers x 2 windows, and one fleet row per window, at the least.
    assert case["rows_written"]["median"] >= 3 * 2 + 2
    assert case["statements"]["median"] >= 2  # at least the table check and one MERGE
    assert case["fleet_rows_per_s"] == (3 + 1) / 5.0
    assert case["wall_s"]["median"] > 0.02 * case["statements"]["median"]  # the latency paid
    assert case["monitor_cpu_s"]["median"] > 0 and case["emulator_cpu_s"]["median"] > 0
    assert case["kept_up"] == (case["headroom"]["median"] >= 1)
    for text in ("monitor --workers 3:", "+20 ms/statement: wall ", "rows/s", "load average"):
        assert text in proc.stderr, proc.stderr


def test_a_before_tree_without_the_package_is_refused(tmp_path: Path) -> None:
    proc = run_bench("--before-tree", str(tmp_path))
    assert proc.returncode == 2
    assert f"--before-tree {tmp_path}: no elastic_channels package there" in proc.stderr
