"""When a page calls a run over (issue #29 item 6): only once every worker's summary is
in or nothing serves the data any more, never because the metrics are late (the page
says how far behind they are instead), by one rule for every page; Landed never exceeds
Rows appended then either; a window without an ingest-to-visible figure is a gap in its
chart, not 0; the per-stage table writes its numbers as the other tables do."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from dashboard_support import (
    LandedRun,
    _duck_type,
    fleet_windows,
    metric,
    render,
    write_metrics,
)

from elastic_channels.dashboard.refresh import RunState, note
from elastic_channels.dashboard.run_progress import (
    QUIET_S,
    STALE_MIN_S,
    Progress,
    run_state,
    stale_after,
)

NOW = dt.datetime(2026, 12, 6, 12, 0, 0, tzinfo=dt.timezone.utc)


def _ago(seconds: float) -> dt.datetime:
    return NOW - dt.timedelta(seconds=seconds)


# --- the rule ---------------------------------------------------------------------------


def test_late_metrics_never_end_a_run_they_say_how_late() -> None:
    """Two workers, no summary, the last window 40 s old (a monitor held back under
    load): the run goes on, 40 s behind; however late, it is never over."""
    for late_s in (40.0, 3600.0):
        state = run_state(True, Progress(2, 0, _ago(late_s), window_s=1.0), NOW)
        assert not state.over
        assert state.behind_s == pytest.approx(late_s)
        assert "2 of 2 worker(s) have sent no summary" in state.why
    text = note(3.0, run_state(True, Progress(2, 0, _ago(40), 1.0), NOW))
    assert "refreshing every 3 s. The metrics are 40 s behind (no window since 11:59:20 UTC" in text
    assert "over" not in text


def test_a_worker_without_its_summary_keeps_the_run_going() -> None:
    # one finished, one killed before its summary (the monitor writes nothing for it)
    state = run_state(True, Progress(2, 1, _ago(600), 1.0), NOW)
    assert not state.over and "1 of 2 worker(s) have sent no summary" in state.why


def test_over_once_every_summary_is_in_or_nothing_serves_the_data() -> None:
    assert run_state(True, Progress(3, 3, _ago(1), 1.0), NOW) == RunState(
        True, "every worker has finished"
    )
    gone = run_state(False, Progress(3, 0, _ago(1), 1.0), NOW)
    assert gone.over and "no emulator serves the data dir" in gone.why


def test_current_metrics_are_not_behind() -> None:
    assert run_state(True, Progress(2, 0, _ago(STALE_MIN_S - 1), 1.0), NOW) == RunState(False)
    # three windows of 5 s: 14 s without one is not late yet, 16 s is
    assert run_state(True, Progress(2, 0, _ago(14), 5.0), NOW) == RunState(False)
    assert run_state(True, Progress(2, 0, _ago(16), 5.0), NOW).behind_s == pytest.approx(16)


def test_one_threshold_for_every_page() -> None:
    assert stale_after(None) == stale_after(1.0) == STALE_MIN_S == 10.0
    assert stale_after(5.0) == 15.0


def test_a_run_without_metrics_is_over_once_nothing_lands() -> None:
    assert not run_state(True, None, NOW, _ago(QUIET_S - 1)).over
    assert run_state(True, Progress(0, 0, None), NOW, _ago(QUIET_S + 1)).over


# --- the pages --------------------------------------------------------------------------


def _windows(run_id: str, t0: float, n: int, workers: tuple[int, ...]) -> list[dict[str, Any]]:
    from elastic_channels.monitor.rows import worker_row

    return [
        worker_row({
            "type": "window", "run_id": run_id, "worker_id": w, "window_start": t0 + i,
            "window_seconds": 1.0, "start": t0 + i, "end": t0 + i + 1, "rows": 5,
            "bytes": 1500, "acked_rows": 5, "acked_bytes": 1500, "errors": 0,
        })
        for i in range(n)
        for w in workers
    ]  # fmt: skip


def _notes(at: Any) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("As of ")]


def test_pages_held_back_metrics_are_behind_not_over(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The issue's run: two workers sending, their windows held back 40 s, rows still
    landing. The Run page and the rows page keep refreshing and say the metrics are
    behind; no worker is done; Landed counts only the rows the totals hold."""
    from workload_rows import Batch, write_rows

    from elastic_channels.emulator import Emulator, EmulatorConfig
    from elastic_channels.workload import load_workload

    run_id, workload = "behind-1", "clickstream"
    t0 = time.time() - 60
    now = dt.datetime.now(dt.timezone.utc)
    data_dir = tmp_path / "emu"
    write_rows(data_dir, load_workload(workload), [
        Batch(run_id, 0, 10, dt.datetime.fromtimestamp(t0, dt.timezone.utc)),
        # sent since the last window the monitor wrote: landed, not yet in any window
        Batch(run_id, 0, 300, now - dt.timedelta(seconds=5)),
        Batch(run_id, 1, 300, now - dt.timedelta(seconds=5)),
    ])  # fmt: skip
    write_metrics(data_dir, run_id, _windows(run_id, t0, 20, (0, 1)))  # to now - 40 s
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", workload)
    emu = Emulator(EmulatorConfig(data_dir=data_dir)).start()  # live: the run goes on
    try:
        at = render(monkeypatch, "run.py", data_dir)
        rows_page = render(monkeypatch, "rows.py", data_dir)
    finally:
        emu.stop()
    for page in (at, rows_page):
        (said,) = _notes(page)
        assert "The run is over" not in said, said
        behind = re.search(r"The metrics are (\d+) s behind", said)
        assert behind and int(behind.group(1)) >= 40, said
    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    assert set(workers["STATE"]) == {"running"}  # not "done": no summary came
    assert metric(at, "Rows appended") == "200"
    assert metric(at, "Landed") == "10"  # not 610: 600 landed after the windows held


def _visible_gap_rows(run_id: str, t0: float) -> list[dict[str, Any]]:
    """Ten windows, the visible read of windows 4 and 5 missing (NULL)."""
    rows = fleet_windows(run_id, t0, n_windows=10)
    fleet = [r for r in rows if r["IS_FLEET"]]
    for r in fleet[4:6]:
        r["INGEST_TO_VISIBLE_P50_MS"] = r["INGEST_TO_VISIBLE_P99_MS"] = None
    return rows


def _chart_of(at: Any, series: str) -> tuple[dict[str, Any], list[Any]]:
    """The spec of the chart that draws ``series``, and its values in time order."""
    import pyarrow as pa

    for chart in at.get("vega_lite_chart"):
        for ds in chart.proto.datasets:
            table = pa.ipc.open_stream(ds.data.data).read_all().to_pandas()
            if "series" in table.columns and series in set(table["series"]):
                part = table[table["series"] == series].sort_values("T")
                values = [None if v != v else v for v in part["value"]]  # NaN as None
                return json.loads(chart.proto.spec), values
    raise AssertionError(f"no chart draws {series!r}")


def test_a_window_without_a_visible_figure_is_a_gap(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    run = landed_copy
    write_metrics(run.data_dir, run.run_id, _visible_gap_rows(run.run_id, time.time() - 100))
    at = render(monkeypatch, "run.py", run.data_dir)
    spec, p50 = _chart_of(at, "ingest-to-visible p50 ms")
    assert p50[4:6] == [None, None]  # a gap, not 0
    assert all(v and v > 0 for v in p50[:4] + p50[6:])
    assert spec["mark"]["invalid"] == "break-paths-show-domains"  # the line breaks there


def test_the_stage_table_writes_numbers_as_the_others_do(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    import duckdb

    from elastic_channels.dashboard.stages_view import STAGES_TABLE
    from elastic_channels.snowflake.ddl import STAGE_COLUMNS

    run = landed_copy
    write_metrics(run.data_dir, run.run_id, fleet_windows(run.run_id, time.time() - 100, 30))
    con = duckdb.connect(str(run.data_dir / "emulator.duckdb"))
    try:
        body = ", ".join(f'"{n}" {_duck_type(t)}' for n, t in STAGE_COLUMNS)
        con.execute(f"CREATE TABLE {STAGES_TABLE} ({body})")
        con.execute(
            f"INSERT INTO {STAGES_TABLE} (RUN_ID, STAGE, SECONDS, MB_PER_SEC, "
            "ACK_LATENCY_P99_MS) VALUES (?, 0, 60.0, 38.461538461, 1234.5678)",
            [run.run_id],
        )
        con.execute("CHECKPOINT")
    finally:
        con.close()
    at = render(monkeypatch, "run.py", run.data_dir)
    table = next(d for d in at.dataframe if "Stage" in d.value.columns)
    config = json.loads(table.proto.columns)
    assert config["MB/s"]["type_config"]["format"] == "%.2f"  # as the workers' MB/s
    assert config["Ack p99 ms"]["type_config"]["format"] == "%.0f"
    assert config["Seconds"]["type_config"]["format"] == "%.1f"
