"""The monitor against a real emulator: real SDK workers land rows, the monitor writes
their windows through the emulator's SQL API over HTTPS (its CA, a key-pair JWT), and
what the metrics table then holds agrees with the workers' lines and the landed rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from emulator_support import make_emulator, sdk_available
from worker_support import WorkerRun, worker_args, worker_env

from elastic_channels.fleet.report import aggregate_window
from elastic_channels.monitor import histogram
from elastic_channels.monitor.monitor import Monitor, fleet_windows
from elastic_channels.monitor.target import profile_sink

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
RUN = "monitor-e2e"
#: A warmup and a scenario, so the rows carry the load shape's columns.
SCENARIO_FLAGS = ["--warmup-seconds", "1", "--scenario-name", "duo", "--scenario-hash", "c0ffee"]
#: The load shape's columns and the line keys they hold.
SHAPE = {
    "TARGET_BPS": "target_bps", "STAGE": "stage", "WARMUP": "warmup",
    "SCENARIO_NAME": "scenario", "SCENARIO_HASH": "scenario_hash",
}  # fmt: skip


def test_two_workers_windows_and_visible_latency_in_the_emulators_table(tmp_path: Path):
    emu = make_emulator(tmp_path)  # serves the SQL API by default
    try:
        info = tmp_path / "info.json"
        info.write_text(json.dumps(emu.info()))
        runs = [
            WorkerRun(
                worker_args(
                    info,
                    RUN,
                    worker_id=w,
                    target_bps=2e6,
                    duration_s=4,
                    window_s=1,
                    extra=SCENARIO_FLAGS,
                ),
                worker_env(),
                tmp_path / f"w{w}.stderr",
            )
            for w in range(2)
        ]
        results = [r.finish(90) for r in runs]
        for r in runs:
            r.__exit__(None, None, None)
        assert [r.returncode for r in results] == [0, 0], [str(r) for r in results]
        assert emu.wait_landed(60)

        sink = profile_sink(info)  # HTTPS, the emulator's CA, the emulator user's key
        sink.ensure_table()
        monitor = Monitor(RUN, sink, grace_s=0.0, expected_workers=2)
        for r in results:
            for record in r.records:
                monitor.feed(json.dumps(record))
        monitor.flush(final=True)
        assert monitor.pending() == 0 and monitor.garbage_lines == 0

        lines = [w for r in results for w in r.windows]
        everything = fleet_windows(sink, RUN)
        # The windows the workers reported, and none after their last (issue #22).
        fleet = [f for f in everything if f["workers"]]
        assert fleet == everything
        assert [f["window_start"] for f in fleet] == sorted({x["window_start"] for x in lines})
        for f in fleet:
            mine = [x for x in lines if x["window_start"] == f["window_start"]]
            assert f["workers"] == len(mine)
            assert f["rows"] == sum(x["rows"] for x in mine)
            assert f["bytes"] == sum(x["bytes"] for x in mine)
            merged = histogram.merge(x["ack_hist_us"] for x in mine)
            assert f["ack_p99_ms"] == histogram.percentile_ms(merged, 99)
            assert f["ack_p50_ms"] == aggregate_window(mine)["ack_p50_ms"]
            # the fleet's target is the workers' added up; stage, warmup and scenario kept
            assert f["target_bps"] == pytest.approx(sum(x["target_bps"] for x in mine))
            assert f["stage"] == max(x["stage"] for x in mine)
            assert f["warmup"] == any(x["warmup"] for x in mine)
            assert (f["scenario"], f["scenario_hash"]) == ("duo", "c0ffee")
        # the windows hold warmup's rows too; the summaries' run figures leave them out
        assert sum(f["rows"] for f in fleet) == sum(
            r.summary["rows_sent"] + r.summary["warmup_rows_sent"] for r in results
        )

        # Ingest-to-visible per window is what a direct query of the landed rows says;
        # rows committed after the workers' last window count in that window.
        last = fleet[-1]["window_start"]
        direct = {
            float(ws): (int(n), float(p50))
            for ws, n, p50 in emu.query(
                f"SELECT least(floor(epoch_ms(_COMMIT_TIME) / 1000), {last}), count(*), "
                "quantile_cont(date_diff('microsecond', SALE_TIME, _COMMIT_TIME), 0.5) / 1e3 "
                f"FROM RESORT_SALES WHERE RUN_ID = '{RUN}' GROUP BY 1"
            )
        }
        assert sum(f["visible_rows"] for f in everything) == sum(n for n, _ in direct.values())
        for f in everything:
            n, p50 = direct.get(f["window_start"], (0, None))
            assert f["visible_rows"] == n
            if n:
                assert f["visible_p50_ms"] == pytest.approx(p50, abs=1e-3)
        # The table is in the emulator's database: its own query path sees it.
        rows = emu.query(
            f"SELECT count(*) FROM ELASTIC_K8S_METRICS WHERE RUN_ID = '{RUN}' AND IS_FLEET"
        )
        assert rows[0][0] == len(everything)
        # Every worker row holds its line's target, stage, warmup and scenario.
        cols = ", ".join(SHAPE)
        held = emu.query(
            f"SELECT WORKER_ID, epoch(WINDOW_START), {cols} FROM ELASTIC_K8S_METRICS "
            f"WHERE RUN_ID = '{RUN}' AND NOT IS_FLEET AND NOT IS_SUMMARY"
        )
        by_window = {(r[0], float(r[1])): r[2:] for r in held}
        assert len(by_window) == len(lines)
        for x in lines:
            want = tuple(x[k] for k in SHAPE.values())
            assert by_window[(x["worker_id"], x["window_start"])] == pytest.approx(want)
        assert any(x["warmup"] and x["stage"] == -1 for x in lines)
        # A summary row: the mean target over the sending window, the scenario, and the
        # whole run's bytes (warmup's too, as the worker's windows add up).
        summaries = emu.query(
            "SELECT WORKER_ID, TARGET_BPS, SCENARIO_NAME, BYTES_APPENDED FROM "
            f"ELASTIC_K8S_METRICS WHERE RUN_ID = '{RUN}' AND IS_SUMMARY ORDER BY WORKER_ID"
        )
        for (wid, target, name, nbytes), r in zip(summaries, results, strict=True):
            assert (wid, name) == (r.summary["worker_id"], "duo")
            assert target == pytest.approx(r.summary["target_bps"])
            assert nbytes == sum(x["bytes"] for x in r.windows)
    finally:
        emu.stop()
