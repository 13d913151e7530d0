"""The load shape in the metrics table: each worker row holds its window's target,
stage, warmup and scenario; a fleet row the workers' targets added up; a summary row its
mean target and the whole run's totals, warmup's included; a line's new keys are
typed and bounded."""

from __future__ import annotations

import pytest
from monitor_support import EPOCH0, duckdb_with_landing_table, make_sink

from elastic_channels.fleet.report import aggregate_window
from elastic_channels.monitor import records
from elastic_channels.monitor.monitor import Monitor, fleet_windows
from elastic_channels.monitor.rows import fleet_row, from_row, summary_row, worker_row
from elastic_channels.snowflake.ddl import METRICS_COLUMNS
from elastic_channels.worker.meter import Meter
from elastic_channels.worker.schedule import Schedule, Stage

RUN = "shape"
#: 1 s warmup at 2 MB/s, 2 s at 2 MB/s, then a ramp from 2 to 4 MB/s over 2 s.
SCHEDULE = Schedule([Stage(2, 2e6, 2e6), Stage(2, 2e6, 4e6)], warmup_s=1.0)


def worker_lines(wid: int) -> tuple[list[dict], dict]:
    """A worker's window lines and summary on fake clocks, starting at EPOCH0 (a
    window boundary), one batch a quarter second, each acked a quarter second later."""
    now = [EPOCH0]
    meter = Meter(1.0, schedule=SCHEDULE, clock=lambda: now[0], wall=lambda: now[0],
                  cpu=lambda: 0.0)  # fmt: skip
    ids = {"run_id": RUN, "worker_id": wid, "scenario": "ramp", "scenario_hash": "beef"}
    lines: list[dict] = []
    pending: list[int] = []
    for _ in range(20):
        now[0] += 0.25
        for stage in pending:
            meter.record_acked(10, 1000, 0.25, stage=stage)
        stage = meter.stage_now()
        meter.record_sent(10, 1000, stage=stage)
        pending = [stage]
        while meter.window_due():
            lines.append(meter.close_window(0, 0, **ids))
    for stage in pending:
        meter.record_acked(10, 1000, 0.25, stage=stage)
    meter.end_mono = now[0]
    lines.append(meter.close_window(0, 0, **ids))
    return lines, meter.summary(0, **ids)


def test_worker_fleet_and_summary_rows_carry_the_load_shape() -> None:
    lines, summary = worker_lines(0)
    full = [x for x in lines if not x["partial"]]
    row = worker_row(full[0])
    assert (row["TARGET_BPS"], row["STAGE"], row["WARMUP"]) == (2e6, -1, True)
    assert (row["SCENARIO_NAME"], row["SCENARIO_HASH"]) == ("ramp", "beef")
    ramp = worker_row(full[-1])
    assert (ramp["TARGET_BPS"], ramp["STAGE"], ramp["WARMUP"]) == (3.5e6, 1, False)
    other, _ = worker_lines(1)
    fleet = fleet_row(RUN, aggregate_window([full[-1], other[len(lines) - 2]]))
    assert (fleet["TARGET_BPS"], fleet["STAGE"], fleet["WARMUP"]) == (7e6, 1, False)
    assert fleet["SCENARIO_NAME"] == "ramp"
    s = summary_row(summary, (EPOCH0, EPOCH0 + 5.0), "done")
    assert s["TARGET_BPS"] == summary["target_bps"] == 2.5e6
    assert s["SCENARIO_NAME"] == "ramp" and s["STAGE"] is None
    # whole-run totals: the windows' sums, warmup's rows included
    assert s["BYTES_APPENDED"] == sum(x["bytes"] for x in lines) == 20_000
    assert s["ROWS_ACKED"] == sum(x["acked_rows"] for x in lines) == 200
    # sends at 0.25, 0.5 and 0.75 s are warmup's; the one at 1.0 s is the run's first
    assert summary["bytes_sent"] == 17_000 and summary["warmup_bytes_sent"] == 3_000
    back = from_row(row)
    assert (back["target_bps"], back["stage"], back["warmup"], back["scenario"]) == (
        2e6, -1, True, "ramp",
    )  # fmt: skip


def test_the_monitor_writes_the_new_columns_and_reads_them_back() -> None:
    sink = make_sink(duckdb_with_landing_table())
    monitor = Monitor(RUN, sink, grace_s=0.0, visible=False, expected_workers=2)
    everything = []
    for wid in (0, 1):
        lines, summary = worker_lines(wid)
        everything += lines
        for line in [*lines, summary]:
            assert monitor.feed(line)
    monitor.flush(final=True)
    assert monitor.pending() == 0, monitor.last_error
    fleet = {f["window_start"]: f for f in fleet_windows(sink, RUN)}
    for ws in sorted({x["window_start"] for x in everything}):
        mine = [x for x in everything if x["window_start"] == ws]
        f = fleet[ws]
        assert f["target_bps"] == pytest.approx(sum(x["target_bps"] for x in mine))
        assert (f["stage"], f["warmup"]) == (mine[0]["stage"], mine[0]["warmup"])
        assert (f["scenario"], f["scenario_hash"]) == ("ramp", "beef")
    held = sink.read_rows(RUN, fleet=False, summary=None)
    assert {r["SCENARIO_HASH"] for r in held} == {"beef"}
    assert sorted(r["STAGE"] for r in held if r["WARMUP"]) == [-1, -1]
    assert monitor.summaries.acked_rows() == 400  # warmup's acks too: all landed


def test_the_new_columns_are_in_the_metrics_table() -> None:
    types = dict(METRICS_COLUMNS)
    assert types["TARGET_BPS"] == "FLOAT" and types["STAGE"] == "NUMBER(10,0)"
    assert types["WARMUP"] == "BOOLEAN"
    assert types["SCENARIO_NAME"] == types["SCENARIO_HASH"] == "VARCHAR"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"stages": "all"}, "'stages' must be a list"),
        ({"stages": [{"stage": -1}]}, "'stages' [0] 'stage'"),
        ({"stages": [{"stage": 0, "acked_bytes": -5}]}, "'stages' [0] 'acked_bytes'"),
        ({"warmup_seconds": -1}, "'warmup_seconds'"),
        ({"warmup_rows_sent": 1.5}, "'warmup_rows_sent'"),
        ({"scenario_hash": ""}, "'scenario_hash'"),
    ],
)
def test_a_summarys_new_keys_are_typed_and_bounded(change: dict, words: str) -> None:
    _, summary = worker_lines(0)
    records.parse(summary)  # as the worker writes it: fine
    with pytest.raises(records.LineError, match=f"summary line: {words}".replace("[", r"\[")):
        records.parse({**summary, **change})
