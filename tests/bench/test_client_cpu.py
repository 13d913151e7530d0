"""The client-only benchmark, run for real as a user would, on both paths."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys

import pytest
from bench_support import ENCODERS


def bench(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", "bench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize("encoder", ENCODERS)
def test_two_workers_hit_the_paced_rate_and_report(encoder: str) -> None:
    proc = bench(
        "--workers", "2", "--target-bps", "10e6", "--duration-seconds", "2.5",
        "--encoder", encoder, "--batch-bytes", "200000", "--run-id", "bench-test", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # --json: stdout is one JSON document, nothing else
    workers = result["workers"]
    assert [w["worker_id"] for w in workers] == [0, 1]
    assert {w["backend"] for w in workers} == {encoder}
    total = result["total"]
    assert total["rows"] == sum(w["rows"] for w in workers) > 0
    # Paced: each worker's share, 10 MB/s, within 10% on a shared 2-core machine.
    for w in workers:
        assert w["mb_per_s"] == pytest.approx(10.0, rel=0.10)
        assert 250 <= w["avg_row_bytes"] <= 310
        assert w["peak_rss_mib"] > 0 and w["cpu_pct"] > 0
    # With --json the table goes to stderr, one line per worker plus the total, as
    # does progress while it runs, with the path in use.
    table = proc.stderr[proc.stderr.index(": mean row ") :]
    assert "MB/s" in table and "total" in table
    assert f"{encoder} path" in proc.stderr
    assert "rows/s" in proc.stderr


#: A progress line: ``[   4.1s / 5s] 2 workers      20.3 MB/s       70,000 rows/s``.
PROGRESS = re.compile(r"\[\s*[\d.]+s / [\d.]+s\] \d+ workers ")


def test_without_json_the_table_is_on_stdout() -> None:
    proc = bench(
        "--workers", "1", "--target-bps", "2e6", "--duration-seconds", "1",
        "--batch-bytes", "200000", "--run-id", "bench-test", "--quiet",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "mean row" in proc.stdout and "total" in proc.stdout
    assert not PROGRESS.search(proc.stdout)


def test_a_progress_line_only_when_new_progress_came_in() -> None:
    """Each worker reports about once a second; a line is printed per batch of reports,
    never again when a worker's result (and no new report) arrives."""
    seconds = 3.5
    proc = bench(
        "--workers", "2", "--target-bps", "2e6", "--duration-seconds", str(seconds),
        "--batch-bytes", "100000", "--run-id", "bench-test", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if PROGRESS.match(x)]
    assert lines, proc.stderr
    repeats = [a for a, b in itertools.pairwise(lines) if a == b]
    assert not repeats, "\n".join(lines)
    # At most one line per report: each worker reports at most once a second.
    assert len(lines) <= 2 * int(seconds), "\n".join(lines)
    assert json.loads(proc.stdout)["total"]["rows"] > 0


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--workers", "0"), ("--target-bps", "-5"), ("--duration-seconds", "0"),
     ("--duration-seconds", "inf"), ("--target-bps", "nan")],
)  # fmt: skip
def test_bad_arguments_name_the_flag(flag: str, value: str) -> None:
    proc = bench(flag, value)
    assert proc.returncode == 2
    assert flag in proc.stderr


def test_help_explains_the_flags() -> None:
    proc = bench("--help")
    assert proc.returncode == 0
    for flag in ("--workers", "--target-bps", "--duration-seconds", "--encoder"):
        assert flag in proc.stdout
    assert "(default: 92e6)" in proc.stdout and "default: None" not in proc.stdout
