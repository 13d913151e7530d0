"""The "Run" page, run headless by AppTest: no metrics table, an empty one, and a
table with a finished, a failed and a running worker, checked against SQL."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from dashboard_support import APP_DIR, LandedRun, fleet_windows, run_into, sql, write_metrics
from streamlit.testing.v1 import AppTest

from elastic_channels.dashboard.common import LATEST
from elastic_channels.dashboard.run_page import NO_METRICS

PAGE = str(APP_DIR / "pages" / "run.py")


def render(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> AppTest:
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def last_end(data_dir: Path, worker: int):
    return sql(
        data_dir,
        f"SELECT max(WINDOW_END) FROM ELASTIC_K8S_METRICS WHERE WORKER_ID = {worker}",
    )[0][0]


def test_no_metrics_table(monkeypatch: pytest.MonkeyPatch, landed: LandedRun) -> None:
    at = render(monkeypatch, landed.data_dir)
    assert not at.error
    assert any(i.value.startswith(NO_METRICS) for i in at.info)
    assert not at.metric


def test_empty_metrics_table(monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun) -> None:
    write_metrics(landed_copy.data_dir, landed_copy.run_id, [])
    at = render(monkeypatch, landed_copy.data_dir)
    assert not at.error
    assert any(i.value.startswith(NO_METRICS) and "empty" in i.value for i in at.info)


def test_missing_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    at = render(monkeypatch, tmp_path / "nothing-here")
    assert not at.error
    assert any(i.value.startswith(NO_METRICS) for i in at.info)


def test_workers_totals_and_failed_worker(
    monkeypatch: pytest.MonkeyPatch, with_metrics: LandedRun
) -> None:
    at = render(monkeypatch, with_metrics.data_dir)
    assert at.selectbox(key="metrics_run").value == LATEST
    assert with_metrics.run_id in at.selectbox(key="metrics_run").options[0]
    # the failed worker is a message on the page, not an exception
    assert [e.value for e in at.error] == [
        "Worker 2 failed: it stopped reporting at "
        f"{last_end(with_metrics.data_dir, 2):%H:%M:%S} UTC, 2 error(s) in its last window"
    ]
    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    states = dict(zip(workers["WORKER_ID"], workers["STATE"], strict=True))
    # no emulator serves the data dir: nothing more can come, and 0 and 1 sent no summary
    assert states == {0: "no summary", 1: "no summary", 2: "failed"}
    assert list(workers["MB/s"]) == sorted(workers["MB/s"])  # slowest first
    # each worker's rate over its run so far: acknowledged bytes over its sending window
    # (first send to its latest window's end), not its latest window's MB_PER_SEC
    want = dict(
        sql(
            with_metrics.data_dir,
            "SELECT WORKER_ID, sum(CAST(RAW->>'acked_bytes' AS DOUBLE)) / "
            "(epoch(max(WINDOW_END)) - min(CAST(RAW->>'start' AS DOUBLE))) / 1e6 "
            "FROM ELASTIC_K8S_METRICS WHERE NOT IS_FLEET GROUP BY WORKER_ID",
        )
    )
    shown = dict(zip(workers["WORKER_ID"], workers["MB/s"], strict=True))
    assert shown == pytest.approx(want) == {0: 3.0, 1: 5.0, 2: 5.5}
    ((last_window_rate,),) = sql(
        with_metrics.data_dir,
        "SELECT MB_PER_SEC FROM ELASTIC_K8S_METRICS WHERE NOT IS_FLEET AND WORKER_ID = 0 "
        "ORDER BY WINDOW_END DESC LIMIT 1",
    )
    assert last_window_rate != pytest.approx(shown[0])  # the fixture's windows drift

    (rows, resends) = sql(
        with_metrics.data_dir,
        "SELECT sum(ROWS_APPENDED), sum(RESENT_BATCHES) FROM ELASTIC_K8S_METRICS "
        "WHERE NOT IS_FLEET",
    )[0]
    assert metric(at, "Workers") == "3"
    assert metric(at, "Rows appended") == f"{rows:,}"
    assert metric(at, "Resends") == f"{resends:,}"


def test_finished_run_shows_done(monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun) -> None:
    rows = fleet_windows(landed_copy.run_id, time.time() - 100, n_windows=30)
    write_metrics(landed_copy.data_dir, landed_copy.run_id, rows)
    at = render(monkeypatch, landed_copy.data_dir)
    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    states = dict(zip(workers["WORKER_ID"], workers["STATE"], strict=True))
    # over (no emulator serves the dir), but no worker sent a summary: none is "done"
    assert states == {0: "no summary", 1: "no summary", 2: "failed"}
    # a table written by hand, no monitor: no per-stage table, no "Per stage" section
    assert not any("Stage" in d.value.columns for d in at.dataframe)
    assert "Per stage" not in [h.value for h in at.subheader]


def test_fleet_series_per_window(monkeypatch: pytest.MonkeyPatch, with_metrics: LandedRun) -> None:
    at = render(monkeypatch, with_metrics.data_dir)
    titles = [s.value for s in at.subheader]
    for title in ("Throughput (MB/s)", "Workers reporting", "Batch ack latency (ms)"):
        assert title in titles
    assert len(at.get("vega_lite_chart")) >= 4  # one chart per figure the table holds
    series = next(d.value for d in at.dataframe if "workers reporting" in d.value.columns)
    # the monitor's fleet rows, one per window, as they are in the table
    want = sql(
        with_metrics.data_dir,
        "SELECT WORKERS_REPORTING, MB_PER_SEC, ACK_LATENCY_P99_MS, INGEST_TO_VISIBLE_P99_MS "
        "FROM ELASTIC_K8S_METRICS WHERE IS_FLEET ORDER BY WINDOW_END",
    )
    assert list(series["workers reporting"]) == [w for w, _, _, _ in want]
    assert list(series["MB/s"]) == pytest.approx([mb for _, mb, _, _ in want])
    assert list(series["ack p99 ms"]) == pytest.approx([p99 for _, _, p99, _ in want])
    assert list(series["ingest-to-visible p99 ms"]) == pytest.approx([v for *_, v in want])
    # the workers' lines carry target_bps: the target line is 5 MB/s per worker reporting
    assert list(series["target MB/s"]) == pytest.approx([5.0 * w for w, _, _, _ in want])


def test_worker_windows_when_no_fleet_rows(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    rows = fleet_windows(landed_copy.run_id, time.time() - 30, n_windows=30)
    write_metrics(landed_copy.data_dir, landed_copy.run_id, [r for r in rows if not r["IS_FLEET"]])
    at = render(monkeypatch, landed_copy.data_dir)
    series = next(d.value for d in at.dataframe if "workers reporting" in d.value.columns)
    want = sql(
        landed_copy.data_dir,
        "SELECT time_bucket(INTERVAL 1 SECOND, WINDOW_END) AS t, count(DISTINCT WORKER_ID), "
        "sum(MB_PER_SEC) FROM ELASTIC_K8S_METRICS GROUP BY t ORDER BY t",
    )
    assert list(series["workers reporting"]) == [w for _, w, _ in want]
    assert list(series["MB/s"]) == pytest.approx([mb for _, _, mb in want])


def test_a_run_with_its_monitor_shows_what_the_monitor_wrote(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No hand-made table: `elastic-channels run` with its in-process monitor, then the
    page over the metrics table that monitor wrote."""
    run = run_into(tmp_path / "emu", seconds=3, workers=2, monitor=True)
    at = render(monkeypatch, run.data_dir)
    assert not at.error
    assert run.run_id in at.selectbox(key="metrics_run").options[0]
    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    assert dict(zip(workers["WORKER_ID"], workers["STATE"], strict=True)) == {0: "done", 1: "done"}
    ((rows,),) = sql(  # the workers' whole-run counts: their summary rows
        run.data_dir,
        f"SELECT sum(ROWS_APPENDED) FROM ELASTIC_K8S_METRICS WHERE RUN_ID = '{run.run_id}' "
        "AND NOT IS_FLEET AND IS_SUMMARY",
    )
    assert rows == run.rows_landed  # every appended row landed: the table is the truth
    assert metric(at, "Workers") == "2"
    assert metric(at, "Rows appended") == f"{rows:,}"
    assert metric(at, "Landed") == f"{run.rows_landed:,}"
    assert (metric(at, "Duplicates"), metric(at, "Lost")) == ("0", "0")
    # the run's one stage (flags alone: one constant stage), as the monitor wrote it
    stages = next(d.value for d in at.dataframe if "Stage" in d.value.columns)
    ((stage, mb, target),) = sql(
        run.data_dir,
        "SELECT STAGE, MB_PER_SEC, TARGET_MB_PER_SEC FROM ELASTIC_K8S_METRICS_STAGES "
        f"WHERE RUN_ID = '{run.run_id}'",
    )
    assert list(stages["Stage"]) == [stage] == [0]
    assert list(stages["MB/s"]) == pytest.approx([mb]) and mb > 0
    assert list(stages["Target MB/s"]) == pytest.approx([target])


def test_a_worker_gone_quiet_without_errors_is_missing(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    """A worker whose windows stopped coming while the others' still come, its last one
    without errors: 'missing' (not failed), said in a warning, never an error."""
    rows = fleet_windows(landed_copy.run_id, time.time() - 30, n_windows=30)
    for r in rows:
        if r["WORKER_ID"] == 2:
            r["ERRORS"] = 0
    write_metrics(landed_copy.data_dir, landed_copy.run_id, rows)
    at = render(monkeypatch, landed_copy.data_dir)
    assert not at.error
    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    states = dict(zip(workers["WORKER_ID"], workers["STATE"], strict=True))
    assert states == {0: "no summary", 1: "no summary", 2: "missing"}
    assert [w.value for w in at.warning] == [
        "No window for 10 s from worker(s) 2.",
        "Worker(s) 0, 1 ended without a summary: how they ended is unknown.",
    ]


def test_a_figure_zero_in_every_window_is_said_not_drawn(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    rows = fleet_windows(landed_copy.run_id, time.time() - 100, n_windows=30)
    for r in rows:
        r.update(RESENT_BATCHES=0, SDK_RETRIES=0, ERRORS=0)
    write_metrics(landed_copy.data_dir, landed_copy.run_id, rows)
    at = render(monkeypatch, landed_copy.data_dir)
    assert "Resends, SDK retries, errors" in [s.value for s in at.subheader]
    assert "0 in every window (resends, SDK retries, errors)." in [c.value for c in at.caption]
    assert len(at.get("vega_lite_chart")) == 6  # the other charts still drawn


def test_windows_no_worker_reported_in_are_not_drawn(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    """A fleet window after the last worker finished (0 workers, 0 MB/s), or the sliver
    of one after the end of sending, is not a point of the charts: they would dive to 0
    at the end of every run."""
    from elastic_channels.monitor.rows import fleet_row

    t0 = time.time() - 100
    rows = fleet_windows(landed_copy.run_id, t0, n_windows=10)
    empty = {"window_start": t0 + 10, "window_seconds": 1.0, "start": t0 + 10, "end": t0 + 11,
             "workers": 0, "rows": 0, "bytes": 0, "mb_per_s": 0.0, "rows_per_s": 0.0,
             "ack_p50_ms": 40.0, "ack_p99_ms": 90.0}  # fmt: skip
    # and the 3 ms sliver of a window after the end of sending (partial, its rate 0)
    sliver = {**empty, "window_start": t0 + 11, "start": t0 + 11, "end": t0 + 11.003,
              "workers": 2, "partial": True}  # fmt: skip
    # a partial first window that covers most of its length stays (a rate over its part)
    first = {**empty, "window_start": t0 - 1, "start": t0 - 0.6, "end": t0, "workers": 2,
             "partial": True, "mb_per_s": 8.0}  # fmt: skip
    extra = [fleet_row(landed_copy.run_id, w) for w in (empty, sliver, first)]
    write_metrics(landed_copy.data_dir, landed_copy.run_id, [*rows, *extra])
    at = render(monkeypatch, landed_copy.data_dir)
    series = next(d.value for d in at.dataframe if "workers reporting" in d.value.columns)
    assert len(series) == 11 and min(series["workers reporting"]) > 0
    assert series["MB/s"].iloc[0] == 8.0 and min(series["MB/s"]) > 0
