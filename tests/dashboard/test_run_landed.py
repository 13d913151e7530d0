"""The Run page's landed / duplicates / lost: counted by SQL on the sales table, lost
from the workers' summary rows (the monitor's own), unknown with a reason without them."""

from __future__ import annotations

import time

import duckdb
import pandas as pd
import pytest
from dashboard_support import (
    LandedRun,
    duplicate_rows,
    fleet_windows,
    metric,
    render,
    sql,
    summary_rows,
    write_metrics,
)

from elastic_channels.dashboard import run_landed


def _finished_run(run: LandedRun, generated: dict[int, int]) -> None:
    """Metrics of a run that ended 70 s ago: windows of workers 0-2, and a summary row
    from each worker in ``generated``."""
    t0 = time.time() - 100
    rows = fleet_windows(run.run_id, t0, n_windows=30)
    write_metrics(run.data_dir, run.run_id, rows + summary_rows(run.run_id, t0, generated))


def _landed_oracle(run: LandedRun) -> tuple[int, int, int]:
    """Landed, duplicates and distinct TXIDs of the run, straight from the file."""
    ((landed, distinct),) = sql(
        run.data_dir,
        f"SELECT count(*), count(DISTINCT TXID) FROM RESORT_SALES WHERE RUN_ID = '{run.run_id}'",
    )
    return landed, landed - distinct, distinct


def test_lost_from_the_summaries_with_duplicates(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    run = landed_copy
    # worker 0's rows all landed; workers 1 and 2 generated rows none of which did
    _finished_run(run, {0: run.rows_landed, 1: 40, 2: 83})
    duplicate_rows(run.data_dir, run.run_id, 5)
    at = render(monkeypatch, "run.py", run.data_dir)
    assert [t.key for t in at.toggle] == ["auto_refresh"]  # a small run: counted unasked
    landed, dups, distinct = _landed_oracle(run)
    ((generated,),) = sql(
        run.data_dir, "SELECT sum(ROWS_APPENDED) FROM ELASTIC_K8S_METRICS WHERE IS_SUMMARY"
    )
    assert (landed, dups, generated - distinct) == (run.rows_landed + 5, 5, 123)
    assert metric(at, "Landed") == f"{landed:,}"
    assert metric(at, "Duplicates") == "5"
    assert metric(at, "Lost") == "123"
    assert not any(c.value.startswith("Lost is unknown") for c in at.caption)


def test_lost_unknown_while_a_worker_has_no_summary(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    run = landed_copy
    _finished_run(run, {0: run.rows_landed, 1: 40})  # worker 2 ended without one
    at = render(monkeypatch, "run.py", run.data_dir)
    assert metric(at, "Landed") == f"{run.rows_landed:,}"
    assert metric(at, "Duplicates") == "0"
    assert metric(at, "Lost") == "unknown"
    assert [c.value for c in at.caption if c.value.startswith("Lost is unknown")] == [
        "Lost is unknown: no summary yet from worker(s) 2 (still running, or ended without one)."
    ]
    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    has = dict(zip(workers["WORKER_ID"], workers["HAS_SUMMARY"], strict=True))
    assert has == {0: True, 1: True, 2: False}


def test_a_big_run_counts_duplicates_on_request(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    """Above run_landed.DISTINCT_AUTO_ROWS only the (cheap) count shows until the toggle is on."""
    run = landed_copy
    _finished_run(run, {0: run.rows_landed, 1: 0, 2: 0})
    monkeypatch.setattr(run_landed, "DISTINCT_AUTO_ROWS", run.rows_landed - 1)
    at = render(monkeypatch, "run.py", run.data_dir)
    assert metric(at, "Landed") == f"{run.rows_landed:,}"
    assert not [m for m in at.metric if m.label in ("Duplicates", "Lost")]
    assert at.toggle(key="count_landed").value is False
    at.toggle(key="count_landed").set_value(True).run()
    assert not at.exception
    assert (metric(at, "Duplicates"), metric(at, "Lost")) == ("0", "0")


def _workers(at) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "STATE" in d.value.columns)


def test_unacked_rows_from_the_summaries_and_no_developer_note(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    run = landed_copy
    t0 = time.time() - 100
    rows = fleet_windows(run.run_id, t0, n_windows=30)
    ends = summary_rows(run.run_id, t0, {0: run.rows_landed, 1: 40}, unacked={1: 7})
    write_metrics(run.data_dir, run.run_id, rows + ends)
    at = render(monkeypatch, "run.py", run.data_dir)
    workers = _workers(at)
    got = dict(zip(workers["WORKER_ID"], workers["unacked rows at end"], strict=True))
    assert (got[0], got[1]) == (0, 7) and pd.isna(got[2])  # 2: no summary
    assert dict(zip(workers["WORKER_ID"], workers["STATE"], strict=True))[1] == "failed"
    # what the table lacks is the developers' business, not the reader's
    shown = [c.value for c in (*at.caption, *at.info, *at.warning)]
    assert not [t for t in shown if "ELASTIC_K8S_METRICS" in t or "column" in t], shown


def test_an_unacked_rows_column_is_shown(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    """A metrics table with UNACKED_ROWS: the latest window's value per worker, and no
    note that the column is missing."""
    run = landed_copy
    write_metrics(run.data_dir, run.run_id, fleet_windows(run.run_id, time.time() - 30))
    con = duckdb.connect(str(run.data_dir / "emulator.duckdb"))
    try:
        con.execute("ALTER TABLE ELASTIC_K8S_METRICS ADD COLUMN UNACKED_ROWS BIGINT")
        con.execute("UPDATE ELASTIC_K8S_METRICS SET UNACKED_ROWS = 100 + WORKER_ID")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    at = render(monkeypatch, "run.py", run.data_dir)
    workers = _workers(at)
    assert dict(zip(workers["WORKER_ID"], workers["unacked rows"], strict=True)) == {
        0: 100,
        1: 101,
        2: 102,
    }
    assert not any(c.value.startswith("Unacked rows:") for c in at.caption)


@pytest.mark.parametrize("workload", ["clickstream", "iot-telemetry"])
def test_a_worker_not_reporting_yet_is_not_counted_landed(
    monkeypatch: pytest.MonkeyPatch, tmp_path, workload: str
) -> None:
    """During a run, worker 1 started late: its rows have landed but the metrics table
    has none of its windows yet. Landed counts worker 0's rows only (those the totals
    hold), so it never exceeds Rows appended: by the WORKER_ID column (clickstream), or
    by the unique id's ``<run>-<worker>-`` prefix (iot-telemetry has no worker column)."""
    import datetime as dt

    from workload_rows import Batch, write_rows

    from elastic_channels.emulator import Emulator, EmulatorConfig
    from elastic_channels.monitor.rows import worker_row
    from elastic_channels.workload import load_workload

    run_id = "late-1"
    t0 = time.time() - 20
    sent = dt.datetime.fromtimestamp(t0, dt.timezone.utc)
    data_dir = tmp_path / "emu"
    write_rows(data_dir, load_workload(workload), [
        Batch(run_id, 0, 30, sent), Batch(run_id, 1, 400, sent),
    ])  # fmt: skip

    def window(i: int) -> dict:
        return worker_row({
            "type": "window", "run_id": run_id, "worker_id": 0, "window_start": t0 + i,
            "window_seconds": 1.0, "start": t0 + i, "end": t0 + i + 1, "rows": 5,
            "bytes": 1500, "acked_rows": 5, "acked_bytes": 1500, "errors": 0,
        })  # fmt: skip

    windows = [window(i) for i in range(19)]
    write_metrics(data_dir, run_id, windows)
    monkeypatch.setenv("ELASTIC_DASHBOARD_WORKLOAD", workload)
    emu = Emulator(EmulatorConfig(data_dir=data_dir)).start()  # live: the run goes on
    try:
        at = render(monkeypatch, "run.py", data_dir)
    finally:
        emu.stop()
    assert metric(at, "Rows appended") == "95"
    assert metric(at, "Landed") == "30"  # not 430: worker 1 has reported no window
    assert any(c.value.startswith("Landed: the rows committed by") for c in at.caption)
