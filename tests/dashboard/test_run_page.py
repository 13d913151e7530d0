"""The "Run" page, run headless by AppTest: no metrics table, an empty one, and a
table with a finished, a failed and a running worker, checked against SQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard_support import APP_DIR, LandedRun, sql, write_metrics
from streamlit.testing.v1 import AppTest

from elastic_channels.dashboard.run_page import NO_METRICS

PAGE = str(APP_DIR / "pages" / "run.py")


def render(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> AppTest:
    monkeypatch.setenv("ELASTIC_DASHBOARD_DATA_DIR", str(data_dir))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


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
    assert at.selectbox(key="metrics_run").value == with_metrics.run_id
    # the failed worker is a message on the page, not an exception
    assert [e.value for e in at.error] == ["Worker 1 failed: channel lost: HTTP 503"]

    workers = next(d.value for d in at.dataframe if "STATE" in d.value.columns)
    assert dict(zip(workers["WORKER_ID"], workers["STATE"], strict=True)) == {
        0: "done",
        1: "failed",
        2: "running",
    }
    assert list(workers["MB/s"]) == sorted(workers["MB/s"])  # slowest first
    want = dict(
        sql(
            with_metrics.data_dir,
            "SELECT WORKER_ID, MB_PER_SEC FROM ELASTIC_K8S_METRICS WHERE NOT IS_SUMMARY "
            "QUALIFY row_number() OVER (PARTITION BY WORKER_ID ORDER BY WINDOW_END DESC) = 1",
        )
    )
    assert dict(zip(workers["WORKER_ID"], workers["MB/s"], strict=True)) == pytest.approx(want)

    # totals: a worker's summary when it has one (0, 1), else its windows (2)
    (rows,) = sql(
        with_metrics.data_dir,
        "SELECT sum(ROWS_APPENDED) FROM ELASTIC_K8S_METRICS "
        "WHERE IS_SUMMARY OR WORKER_ID NOT IN "
        "(SELECT WORKER_ID FROM ELASTIC_K8S_METRICS WHERE IS_SUMMARY)",
    )[0]
    assert metric(at, "Workers") == "3"
    assert metric(at, "Rows appended") == f"{rows:,}"


def test_fleet_series_per_window(monkeypatch: pytest.MonkeyPatch, with_metrics: LandedRun) -> None:
    at = render(monkeypatch, with_metrics.data_dir)
    titles = [s.value for s in at.subheader]
    for title in ("Throughput (MB/s)", "Workers reporting", "Batch ack latency (ms)"):
        assert title in titles
    assert len(at.get("vega_lite_chart")) >= 4  # one chart per figure the table holds
    series = next(d.value for d in at.dataframe if "workers reporting" in d.value.columns)
    want = sql(
        with_metrics.data_dir,
        "SELECT time_bucket(INTERVAL 1 SECOND, WINDOW_END) AS t, count(DISTINCT WORKER_ID), "
        "sum(MB_PER_SEC), max(ACK_LATENCY_P99_MS) FROM ELASTIC_K8S_METRICS "
        "WHERE NOT IS_SUMMARY GROUP BY t ORDER BY t",
    )
    assert list(series["workers reporting"]) == [w for _, w, _, _ in want]
    assert list(series["MB/s"]) == pytest.approx([mb for _, _, mb, _ in want])
    assert list(series["ack p99 ms"]) == pytest.approx([p99 for _, _, _, p99 in want])


def test_landed_and_duplicates_on_request(
    monkeypatch: pytest.MonkeyPatch, with_metrics: LandedRun
) -> None:
    at = render(monkeypatch, with_metrics.data_dir)
    at.toggle(key="count_landed").set_value(True).run()
    assert not at.exception
    (landed, dups) = sql(
        with_metrics.data_dir,
        "SELECT count(*), count(*) - count(DISTINCT TXID) FROM RESORT_SALES "
        f"WHERE RUN_ID = '{with_metrics.run_id}'",
    )[0]
    assert landed == with_metrics.rows_landed
    assert metric(at, "Landed") == f"{landed:,}"
    assert metric(at, "Duplicates") == f"{dups:,}"
    # worker 2 has no summary yet: lost is not known
    assert "unknown" in metric(at, "Lost")
