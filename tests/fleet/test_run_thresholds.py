"""A scenario's thresholds gate the run (issue #24 item 5): one that does not hold makes
``run`` exit 1 and is named; the result file records each bound and whether it held."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

from elastic_channels import results

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

SCENARIO = """\
name: gated
workers: 1
window_seconds: 1
stages:
  - {seconds: 3, mbps: 2}
thresholds:
  errors: {max: 0}
  lost: {max: 0}
  mb_per_s: {min: 1000}
"""


def test_a_threshold_not_held_fails_the_run_and_is_named(tmp_path: Path) -> None:
    (tmp_path / "gated.yaml").write_text(SCENARIO, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", "run", "gated.yaml", "--json"],
        capture_output=True, text=True, timeout=180, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert proc.returncode == 99, proc.stderr[-3000:]  # thresholds_failed
    result = json.loads(proc.stdout)
    assert result["outcome"]["outcome"] == "thresholds_failed"
    assert "THRESHOLDS FAILED: threshold not held: mb_per_s" in proc.stderr
    assert result["landed"]["lost"] == 0  # the run itself went well: only the gate failed
    assert "threshold NOT HELD: mb_per_s" in proc.stderr and "under its min 1000" in proc.stderr
    assert "threshold held: errors 0 is within its max 0" in proc.stderr
    assert "threshold held: lost 0 is within its max 0" in proc.stderr
    doc = results.load(tmp_path / result["result_file"])
    assert doc["thresholds_held"] is False and result["thresholds_held"] is False
    held = {(t["figure"], t["bound"]): t["held"] for t in doc["thresholds"]}
    assert held == {("errors", "max"): True, ("lost", "max"): True, ("mb_per_s", "min"): False}
