"""A run against the embedded emulator says its billable GB and price, and the workers'
count of the values' bytes is what the emulator counted in the rows it landed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "elastic_channels.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd, check=False)


def test_the_run_prices_its_values_and_the_emulator_counts_the_same(tmp_path: Path) -> None:
    proc = run_cli(
        "run", "--workers", "1", "--target-bps", "2e6", "--duration-seconds", "2",
        "--window-seconds", "1", "--run-id", "billable-e2e", "--price-per-credit", "3",
        "--json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    check = result["billable_check"]
    summary = result["worker_summaries"][0]
    assert check["agree"] is True and check["workers"] == check["emulator"] > 0
    assert check["workers"] == summary["billable_bytes"] + summary["warmup_billable_bytes"]
    # the values are a share of the NDJSON: keys and punctuation are not billed
    assert 0.3 < summary["billable_bytes"] / summary["bytes_acked"] < 0.9
    assert sum(w["billable_bytes"] for w in result["windows"]) == summary["billable_bytes"]
    assert result["price"] == {"credits_per_gb": 0.0037, "price_per_credit": 3.0}
    assert "billable: " in proc.stderr and "credits (at 0.0037 credits/GB" in proc.stderr
    assert "a credit" in proc.stderr and "disagree" not in proc.stderr
