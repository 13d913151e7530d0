"""The search for the highest rate held, end to end: one worker through the real SDK
climbs a staircase against the emulator with a per-channel limit of 4 MB/s, its windows
judged as they come (through ``fleet/report.aggregate_window``, as a run makes fleet
windows), and is stopped (SIGTERM: it drains) at the first step that does not hold.
The answer must be within one step of the limit, name the bound that stopped it, and
every row the worker sent must be acked and land once."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from emulator_support import sdk_available
from worker_support import WorkerRun, worker_env

from elastic_channels.emulator import Emulator, EmulatorConfig
from elastic_channels.fleet.find_max import plan_from, run_search, stages_for
from elastic_channels.fleet.find_max_report import describe
from elastic_channels.fleet.report import aggregate_window

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

LIMIT_MBPS = 4.0
STEP_MBPS = 1.0
#: Steps of 2, 3, ... 8 MB/s, 3 s each (1 s windows: two judged a step), after 2 s of
#: warmup; the search stops at 5 at the latest, so the test is over in about 20 s.
SEARCH = {
    "start_mbps": 2, "step_mbps": STEP_MBPS, "max_mbps": 8, "step_seconds": 3,
    "bounds": {"behind_p99_ms": 1000, "ack_p99_ms": None, "errors": 0, "sdk_retries": None},
}  # fmt: skip
#: The whole run's bound: its stages, the SDK's start, the drain.
RUN_TIMEOUT_S = 120


def _windows(run: WorkerRun, give_up: float) -> Iterator[dict[str, Any]]:
    """The worker's windows as fleet windows, as they come, until its summary."""
    while True:
        record = run.wait_for(
            lambda r: r.get("type") in ("window", "summary"), max(give_up - time.monotonic(), 1)
        )
        if record["type"] == "summary":
            return
        yield aggregate_window([record])


def test_the_search_finds_the_channel_limit_within_a_step_and_names_the_bound(tmp_path):
    plan = plan_from(SEARCH, window_seconds=1.0)
    config = EmulatorConfig(
        data_dir=tmp_path / "emu",
        channel_limit_bps=LIMIT_MBPS * 1e6,
        # a burst a quarter of a second long: a step 1 MB/s over the limit spends it in
        # the step's first second, the one the search does not judge
        channel_limit_burst_s=0.25,
        # the SDK flushes every 20 ms (as the other end-to-end tests have it): acks come
        # in small lumps, so three judged seconds measure a step's acked rate to a few %
        append_buffer_ms=20,
    )
    with Emulator(config) as emu:
        profile = tmp_path / "emulator-info.json"
        profile.write_text(json.dumps(emu.info()))
        args = [
            "--profile", str(profile), "--run-id", "find-max", "--worker-id", "0",
            "--stages", json.dumps(stages_for(plan)), "--window-seconds", "1",
            "--warmup-seconds", "2", "--batch-bytes", "250000", "--sleep-quantum-ms", "50",
            "--max-inflight-bytes", "8000000", "--retry-backoff-seconds", "60",
            "--connect-timeout-seconds", "30", "--drain-timeout-seconds", "30",
        ]  # fmt: skip
        with WorkerRun(
            args, worker_env(), tmp_path / "worker.stderr", ("-m", "elastic_channels.worker")
        ) as run:
            give_up = time.monotonic() + RUN_TIMEOUT_S
            report = run_search(
                plan, _windows(run, give_up), lambda: run.signal(signal.SIGTERM), workers=1,
                context={"target": "emulator", "channel_limit_mbps": LIMIT_MBPS, "channels": 1},
            )  # fmt: skip
            result = run.finish(max(give_up - time.monotonic(), 1))
        text = describe(report)
        print(text)
        assert result.returncode == 0, f"{result}\n{text}"
        s = result.summary
        assert s["unacked_rows"] == 0 and s["rows_acked"] == s["rows_sent"] > 0, text
        assert s["warmup_rows_acked"] == s["warmup_rows_sent"] > 0, text
        sent = s["rows_sent"] + s["warmup_rows_sent"]
        assert report["stopped_by"] is not None, text  # a bound broke, and is named
        assert report["stopped_by"]["bound"] in ("mb_per_s", "behind_p99_ms"), text
        assert report["held_mbps"] is not None, text
        assert abs(report["held_mbps"] - LIMIT_MBPS) <= STEP_MBPS, text
        assert report["stopped_by"]["target_mbps"] == report["held_mbps"] + STEP_MBPS, text
        assert report["cpu_s_per_gb"] and report["rss_mib"], text
        assert emu.stats_snapshot()["channel_limit"]["refused_requests"] > 0, text
        assert emu.wait_landed(60)
        ((n, distinct),) = emu.query(
            "SELECT count(*), count(DISTINCT TXID) FROM RESORT_SALES WHERE RUN_ID = 'find-max'"
        )
        assert n == distinct == sent, text
