"""The pages during a real run (``elastic-channels run`` with its monitor, read through
the running emulator): the live totals never contradict each other, and the kept sales
aggregates equal the table once the run is over."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dashboard_support import render, sql

from elastic_channels.dashboard.source import EmulatorSource


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def test_landed_never_exceeds_appended_during_a_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data_dir = tmp_path / "emu"
    cmd = [
        sys.executable, "-m", "elastic_channels", "run", "--workers", "2",
        "--target-bps", "2e6", "--duration-seconds", "14", "--data-dir", str(data_dir),
        "--json",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    src = EmulatorSource(data_dir)
    seen: list[tuple[int, int]] = []
    sales_seen = 0
    try:
        deadline = time.monotonic() + 90
        while proc.poll() is None and time.monotonic() < deadline:
            if not src.is_live():
                time.sleep(0.3)
                continue
            at = render(monkeypatch, "run.py", data_dir)
            shown = {m.label: m.value for m in at.metric}
            if "Rows appended" in shown and "Landed" in shown and src.is_live():
                appended, landed = _count(shown["Rows appended"]), _count(shown["Landed"])
                seen.append((appended, landed))
                assert landed <= appended, (landed, appended, shown)
            sales = render(monkeypatch, "sales.py", data_dir)  # kept aggregates, live
            sales_seen += any(m.label == "Sales" for m in sales.metric)
            time.sleep(0.5)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert seen, "no render during the run showed both figures"
    assert sales_seen
    run = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
    run_id = run["run_id"]
    # after the run: the page's figures are the table's, the kept aggregates included
    at = render(monkeypatch, "sales.py", data_dir)
    ((rows, revenue),) = sql(
        data_dir, f"SELECT count(*), sum(AMOUNT) FROM RESORT_SALES WHERE RUN_ID = '{run_id}'"
    )
    assert {m.label: m.value for m in at.metric}["Sales"] == f"{rows:,}"
    assert rows == int(run["landed"]["rows_landed"])
    assert float(revenue) > 0
