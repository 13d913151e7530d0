"""The Run page says the run's one outcome, read from the result file ``run`` recorded
beside the emulator's data dir (issue #29: an interrupted run looked clean there), and
what the run's values would be billed (issue #32)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from dashboard_support import APP_DIR, LandedRun
from streamlit.testing.v1 import AppTest

from elastic_channels import results
from elastic_channels.dashboard.run_outcome import recorded_outcome

PAGE = str(APP_DIR / "pages" / "run.py")
STOPPED = {"outcome": "interrupted", "exit_code": 105,
           "reasons": ["stopped by SIGINT at 55.2 s of 80 s (69%)"]}  # fmt: skip


def _record(home: Path, run_id: str, outcome: dict | None) -> None:
    result = {"run_id": run_id, "started_at": time.time(), "workers": 1}
    if outcome is not None:
        result["outcome"] = outcome
    results.record(result, home)


def test_the_outcome_is_read_from_the_result_beside_the_data_dir(tmp_path: Path) -> None:
    src = SimpleNamespace(data_dir=tmp_path / "emulator")
    assert recorded_outcome(src, "r1") is None  # no result file: nothing said
    _record(tmp_path, "r1", STOPPED)
    _record(tmp_path, "r0", None)  # recorded before outcomes
    assert recorded_outcome(src, "r1") == STOPPED
    assert recorded_outcome(src, "r0")["outcome"] == "unknown"


def test_the_run_page_shows_an_interrupted_run_as_such(
    monkeypatch: pytest.MonkeyPatch, with_metrics: LandedRun
) -> None:
    data_dir = with_metrics.data_dir
    _record(data_dir.parent, with_metrics.run_id, STOPPED)
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [e.value for e in at.error]
    assert any(s.startswith("Outcome: INTERRUPTED (exit 105): stopped by SIGINT") for s in said)
    assert not any("Outcome: PASSED" in s.value for s in at.success)


def test_the_run_page_shows_the_billed_gb_of_values(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    from dashboard_support import fleet_windows, write_metrics

    rows = fleet_windows(landed_copy.run_id, time.time() - 30, n_windows=5)
    for r in rows:  # a third of each worker window's bytes are values
        if not r["IS_FLEET"]:
            r["BILLABLE_BYTES"] = int(r["BYTES_APPENDED"]) // 3
    write_metrics(landed_copy.data_dir, landed_copy.run_id, rows)
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(landed_copy.data_dir))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    want = sum(r["BILLABLE_BYTES"] for r in rows if not r["IS_FLEET"]) / 1e9
    shown = {m.label: m.value for m in at.metric}
    assert shown["GB of values (billed)"] == f"{want:,.3f}"
    assert shown["Ingest credits"] == f"{want * 0.0037:,.6g}"
