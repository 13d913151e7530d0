"""A run id is the run's, not a path (issue #23: ``run --run-id ../../x`` wrote its chart
outside .elastic-channels): the chart and the result file stay in their folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emulator_support import sdk_available

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


def test_a_run_id_with_dots_and_slashes_writes_inside_its_folder(tmp_path: Path) -> None:
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", "run", "--run-id", "../../x",
         "--target-bps", "1e6", "--duration-seconds", "1", "--window-seconds", "1",
         "--no-monitor", "--json"],
        capture_output=True, text=True, timeout=180, cwd=cwd, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["run_id"] == "../../x" and result["landed"]["lost"] == 0
    home = (cwd / ".elastic-channels").resolve()
    for written in (result["chart"], result["result_file"]):
        assert (cwd / written).resolve().is_relative_to(home), written
    assert not list(tmp_path.glob("*.png")) and not (tmp_path / "x.png").exists()
