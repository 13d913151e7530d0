"""The pages follow the workload: "Resort sales" for resort sales (the default) and
"Latest rows" for any other; the Run page counts landed rows, duplicates and lost in
the workload's table by its own run-id and unique-id columns."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest
from dashboard_support import APP_DIR, fleet_windows, metric, render, summary_rows, write_metrics
from streamlit.testing.v1 import AppTest
from workload_rows import Batch, write_rows

from elastic_channels.dashboard.common import pages
from elastic_channels.workload import load_text, load_workload

APP = str(APP_DIR / "app.py")


def _app(monkeypatch: pytest.MonkeyPatch, data_dir: Path, workload: str | None) -> AppTest:
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    if workload is not None:
        monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", workload)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_resort_sales_page_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert pages() == [("sales.py", "Resort sales"), ("run.py", "Run")]
    at = _app(monkeypatch, tmp_path / "emu", None)
    assert [t.value for t in at.title] == ["Resort sales"]  # the default page drawn


@pytest.mark.parametrize("workload", ["iot-telemetry", "clickstream", "wide-events"])
def test_no_resort_sales_page_for_another_workload(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workload: str
) -> None:
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", workload)
    assert pages() == [("rows.py", "Latest rows"), ("run.py", "Run")]
    at = _app(monkeypatch, tmp_path / "emu", workload)
    assert [t.value for t in at.title] == ["Latest rows"]


def test_a_copy_of_resort_sales_under_another_name_is_not_resort_sales(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The sales page reads the resort model's table and columns: a workload that names
    itself otherwise, or another table, gets "Latest rows"."""
    from elastic_channels.workload.load import shipped_text

    text = shipped_text("resort-sales").replace("name: resort-sales", "name: my-sales", 1)
    spec = tmp_path / "my-sales.yaml"
    spec.write_text(text)
    load_text(text, str(spec))  # a valid workload
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", str(spec))
    assert pages()[0] == ("rows.py", "Latest rows")


def test_run_page_counts_the_workloads_rows(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """iot-telemetry's rows (EVENT_ID, RUN_ID) with 3 of them landed twice; the metrics
    table says what the workers generated (their summaries)."""
    data_dir = tmp_path / "emu"
    run = "iot-run"
    t0 = time.time() - 40
    sent = dt.datetime.fromtimestamp(t0, dt.timezone.utc)
    write_rows(data_dir, load_workload("iot-telemetry"), [
        Batch(run, 0, 40, sent), Batch(run, 1, 30, sent), Batch("other", 0, 9, sent),
        Batch(run, 0, 3, sent + dt.timedelta(seconds=1), start_seq=10),  # again
    ])  # fmt: skip
    generated = {0: 45, 1: 30, 2: 0}  # 5 of worker 0's never landed
    write_metrics(
        data_dir, run, fleet_windows(run, t0, n_windows=30) + summary_rows(run, t0, generated)
    )
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", "iot-telemetry")
    at = render(monkeypatch, "run.py", data_dir)
    assert not at.error, [e.value for e in at.error]
    appended = int(metric(at, "Rows appended").replace(",", ""))
    assert metric(at, "Landed") == "73"
    assert metric(at, "Duplicates") == "3"
    assert metric(at, "Lost") == f"{appended - 70:,}"
    assert appended == sum(generated.values())


def test_run_page_without_a_unique_id_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = (
        "name: no-ids\ndescription: readings without an id\ntable: READINGS\ncolumns:\n"
        "  - {name: RUN_ID, type: VARCHAR, run_id: {}}\n"
        "  - {name: V, type: 'NUMBER(3,0)', range: {min: 1, max: 9}}\n"
    )
    spec = tmp_path / "no-ids.yaml"
    spec.write_text(text)
    data_dir = tmp_path / "emu"
    t0 = time.time() - 40
    sent = dt.datetime.fromtimestamp(t0, dt.timezone.utc)
    write_rows(data_dir, load_text(text, str(spec)), [Batch("r", 0, 11, sent)])
    write_metrics(data_dir, "r", fleet_windows("r", t0) + summary_rows("r", t0, {0: 11}))
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", str(spec))
    at = render(monkeypatch, "run.py", data_dir)
    assert metric(at, "Landed") == "11"
    assert not [m for m in at.metric if m.label in ("Duplicates", "Lost")]
    assert any("no unique-id column" in c.value for c in at.caption)
