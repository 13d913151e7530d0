"""A run stopped by SIGINT or SIGTERM says so: outcome ``interrupted``, exit 105, the
result file, ``runs`` and ``compare`` all say it, and nothing says a threshold held."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from emulator_support import sdk_available

from elastic_channels import results

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


def _start(tmp_path: Path, run_id: str, seconds: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "elastic_channels", "run", "smoke", "--target-bps", "2e6",
         "--duration-seconds", str(seconds), "--warmup-seconds", "0", "--window-seconds", "1",
         "--run-id", run_id, "--no-visible", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip


def _wait_for(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> None:
    """Read stderr up to a line holding ``text``."""
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"no line with {text!r} came:\n" + "".join(seen))


def _wait_for_a_window(proc: subprocess.Popen[str]) -> None:
    """Up to the first fleet window line: the run is sending."""
    _wait_for(proc, "MB/s (target")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_is_recorded_as_interrupted(tmp_path: Path, sig: int) -> None:
    run_id = f"stop-{signal.Signals(sig).name.lower()}"
    proc = _start(tmp_path, run_id, 30)
    try:
        _wait_for_a_window(proc)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 105, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    name = signal.Signals(sig).name
    outcome = result["outcome"]
    assert outcome["outcome"] == "interrupted" and outcome["exit_code"] == 105
    assert outcome["reasons"][0].startswith(f"stopped by {name} at ")
    assert result["interrupt"]["signal"] == name
    assert 0 < result["interrupt"]["at_s"] < 30 and result["interrupt"]["planned_s"] == 30
    assert f"run {run_id}: INTERRUPTED: stopped by {name} at " in err
    # the part that ran landed whole; no threshold of it is said to hold
    assert result["landed"]["lost"] == 0
    assert "threshold held" not in err and "threshold not judged (interrupted)" in err
    doc = results.load(tmp_path / result["result_file"])
    assert doc["outcome"]["outcome"] == "interrupted" and doc["thresholds_held"] is None
    runs = subprocess.run(
        [sys.executable, "-m", "elastic_channels", "runs", "--json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=True,
    )  # fmt: skip
    (listed,) = json.loads(runs.stdout)
    assert listed["outcome"]["outcome"] == "interrupted"
    compare = subprocess.run(
        [sys.executable, "-m", "elastic_channels", "compare", result["result_file"],
         result["result_file"]],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert f"warning: A ({run_id}) is not a clean pass: interrupted" in compare.stdout


def test_a_second_sigint_stops_at_once_and_still_records(tmp_path: Path) -> None:
    proc = _start(tmp_path, "stop-twice", 30)
    try:
        _wait_for_a_window(proc)
        proc.send_signal(signal.SIGINT)
        _wait_for(proc, "SIGINT: stopping;")  # the first is handled: the workers drain
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 105, err[-3000:]
    assert "SIGINT again: stopping at once" in err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["outcome"]["outcome"] == "interrupted"
    assert (tmp_path / result["result_file"]).is_file()
