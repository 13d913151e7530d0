"""``elastic-channels run --find-max`` against the emulator with a per-channel limit of
X MB/s reports a rate within one step of X and names the bound that stopped it (issue
#24's Done when); the run is stopped at the first step that broke, loses nothing, and
its result is what ``plan --figures`` takes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

LIMIT_MBPS = 4.0
STEP_MBPS = 2.0
#: Steps of 2, 4, 6 ... 12 MB/s, 5 s each after 2 s of warmup: with the emulator's
#: default 1 s burst, a step 2 MB/s over the limit spends it within 2 s, so the step's
#: judged windows (all but its first) are throttled. The search stops after 6. Batches
#: of 100 kB and four judged windows a step; acks come in lumps (the SDK flushes about
#: once a second at its own defaults, which run's emulator no longer overrides), which
#: the search's bound (how far the sender falls behind) does not see.
SCENARIO = f"""\
name: find-limit
workers: 1
window_seconds: 1
warmup_seconds: 2
batch_bytes: 100000
max_inflight_bytes: 8000000
destination: {{channel_limit_mbps: {LIMIT_MBPS}}}
stages:
  - {{seconds: 1, mbps: 1}}
search:
  start_mbps: 2
  step_mbps: {STEP_MBPS}
  max_mbps: 12
  step_seconds: 5
"""


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", *args],
        capture_output=True, text=True, timeout=240, cwd=cwd, check=False,
    )  # fmt: skip


def test_find_max_reports_the_channel_limit_within_a_step(tmp_path: Path) -> None:
    (tmp_path / "find.yaml").write_text(SCENARIO, encoding="utf-8")
    shown = _run(tmp_path, "run", "find.yaml", "--print-scenario")
    assert shown.returncode == 0, shown.stderr
    assert "mbps: 12.0}" in shown.stdout  # the stages are the search's staircase
    proc = _run(tmp_path, "run", "find.yaml", "--find-max", "--run-id", "find-1", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    report = result["find_max"]
    text = proc.stderr[-3000:]
    assert report["held_mbps"] is not None, text
    assert abs(report["held_mbps"] - LIMIT_MBPS) <= STEP_MBPS, text
    assert report["stopped_by"] is not None and report["stopped_by"]["bound"], text
    assert "highest rate held" in proc.stderr and "stopping the workers" in proc.stderr
    # stopped early: the staircase went on to 12 MB/s, the run did not
    seconds = result["ended_at"] - result["started_at"]
    assert seconds < 2 + 6 * 5, seconds
    assert result["landed"]["lost"] == 0 and result["landed"]["duplicates"] == 0
    # plan takes the run's result file as a measured figure
    plan = _run(tmp_path, "plan", "--target-gbps", "1", "--figures", result["result_file"],
                "--json")  # fmt: skip
    assert plan.returncode == 0, plan.stderr
    sized = json.loads(plan.stdout)
    # what it held is the emulator's limit, not the client's rate: a bound, no fleet of it
    (mine,) = [s for s in sized["sizings"] if s["label"].startswith("find-max")]
    assert "channel limit of 4 MB/s" in mine["bound"] and "pods" not in mine
    assert not sized["label"].startswith("find-max")
