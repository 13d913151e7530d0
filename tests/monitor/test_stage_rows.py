"""The per-stage table (``ELASTIC_K8S_METRICS_STAGES``): one row per stage of the load
shape, written by the monitor once every worker has ended (not before), again if a late
line changes a window, never twice, with the figures a local run's result file holds
per stage (``results.derive.stage_figures``) over the fleet windows the monitor wrote."""

from __future__ import annotations

import pytest
from monitor_support import EPOCH0, duckdb_with_landing_table, make_sink
from test_load_shape_rows import RUN, worker_lines

from elastic_channels.monitor import histogram
from elastic_channels.monitor.monitor import Monitor
from elastic_channels.results.derive import stage_figures
from elastic_channels.snowflake import ddl


def stage_table(con) -> list[dict]:
    cur = con.execute(
        f"SELECT * FROM ELASTIC_K8S_METRICS_STAGES WHERE RUN_ID = '{RUN}' ORDER BY STAGE"
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def fed_monitor(con, workers=(0, 1), summaries=True) -> tuple[Monitor, list[dict]]:
    monitor = Monitor(RUN, make_sink(con), grace_s=0.0, visible=False, expected_workers=2)
    everything = []
    for wid in workers:
        lines, summary = worker_lines(wid)
        everything += lines
        for line in lines + ([summary] if summaries else []):
            assert monitor.feed(line)
    return monitor, everything


def test_one_row_per_stage_with_the_result_files_figures() -> None:
    con = duckdb_with_landing_table()
    monitor, lines = fed_monitor(con)
    monitor.tick(now=EPOCH0 + 100)  # every worker ended: written without the final flush
    got = stage_table(con)
    assert [r["STAGE"] for r in got] == [0, 1]  # warmup (-1) is not a stage
    fleet = [r["RAW"] for r in monitor.sink.read_rows(RUN, fleet=True)]
    want = stage_figures({"windows": [w for w in fleet if not w["warmup"]]})
    for row, f in zip(got, want, strict=True):
        assert row["MB_PER_SEC"] == pytest.approx(f["mb_per_s"])
        assert row["ACKED_MB_PER_SEC"] == pytest.approx(f["acked_mb_per_s"])
        assert row["TARGET_MB_PER_SEC"] == pytest.approx(f["target_mb_per_s"])
        assert row["ACK_LATENCY_P99_MS"] == pytest.approx(f["ack_p99_ms"])
        assert (row["WINDOWS"], row["SECONDS"]) == (f["windows"], pytest.approx(f["seconds"]))
        assert row["SCENARIO_NAME"] == "ramp" and row["SCENARIO_HASH"] == "beef"
        assert row["WORKERS_REPORTING"] == 2
    # 2 workers: stage 0 at 2 MB/s each; stage 1 ramps 2 -> 4 (its windows' mean targets)
    assert got[0]["TARGET_MB_PER_SEC"] == pytest.approx(4.0)
    assert 4.0 < got[1]["TARGET_MB_PER_SEC"] <= 8.0
    # counts: the stage's windows of both workers added up; latency off their histograms
    for row in got:
        mine = [x for x in lines if x["stage"] == row["STAGE"]]
        assert row["ROWS_APPENDED"] == sum(x["rows"] for x in mine)
        assert row["BYTES_APPENDED"] == sum(x["bytes"] for x in mine)
        assert row["ROWS_ACKED"] == sum(x["acked_rows"] for x in mine)
        merged = histogram.merge(x["ack_hist_us"] for x in mine if x.get("ack_hist_us"))
        assert row["ACK_LATENCY_MAX_MS"] == histogram.percentile_ms(merged, 100)
        assert histogram.decode(row["ACK_LATENCY_HIST"]).get_total_count() == (
            merged.get_total_count()
        )


def test_not_written_while_a_worker_runs_then_at_the_final_flush() -> None:
    con = duckdb_with_landing_table()
    monitor, _ = fed_monitor(con, summaries=False)  # no worker has ended
    monitor.tick(now=EPOCH0 + 100)
    assert stage_table(con) == []
    monitor.flush(final=True)  # the run is over, whoever ended: the stages as they were
    assert [r["STAGE"] for r in stage_table(con)] == [0, 1]
    assert monitor.pending() == 0 and monitor.stages.rows_written == 2


def test_a_late_line_rewrites_its_stage_and_a_restart_adds_nothing() -> None:
    con = duckdb_with_landing_table()
    monitor, lines = fed_monitor(con)
    monitor.flush(final=True)
    before = {r["STAGE"]: r for r in stage_table(con)}
    last = max((x for x in lines if x["worker_id"] == 1), key=lambda x: x["window_start"])
    monitor.feed({**last, "errors": 7})  # a replayed line with a change
    monitor.flush(final=True)
    after = {r["STAGE"]: r for r in stage_table(con)}
    assert after.keys() == before.keys()
    assert after[last["stage"]]["ERRORS"] == before[last["stage"]]["ERRORS"] + 7
    second = Monitor(RUN, make_sink(con), grace_s=0.0, visible=False, expected_workers=2)
    second.resume()
    for wid in (0, 1):
        for line in [*worker_lines(wid)[0], worker_lines(wid)[1]]:
            second.feed(line)
    second.flush(final=True)
    assert len(stage_table(con)) == 2


def test_setup_creates_the_per_stage_table_beside_the_metrics_table() -> None:
    sql = ddl.render(ddl.statements("DB", "SC", metrics_table="MY_METRICS"))
    assert "CREATE TABLE IF NOT EXISTS DB.SC.MY_METRICS_STAGES (" in sql
    for name, sf_type in ddl.STAGE_COLUMNS:
        assert f'"{name}" {sf_type}' in sql
