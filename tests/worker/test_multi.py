"""--channels N: one worker process driving N elastic channels, lines merged."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from emulator_support import sdk_available

from elastic_channels.billable import body_billable_bytes
from elastic_channels.monitor import histogram
from elastic_channels.worker.config import load_config
from elastic_channels.worker.multi import CHANNEL_SEQ_STRIDE, MultiChannelWorker, merge_windows


class _Appender:
    """Acks every append at once and keeps what was sent."""

    def __init__(self, mode: str | None) -> None:
        self.mode = mode or "ffi"
        self.sdk_cpu_s = 0.0
        self.sent: list[bytes] = []
        self._answered: Any = None

    def set_ack_handler(self, answered) -> None:
        self._answered = answered

    def append(self, data: bytes, n_rows: int, token: object) -> None:
        self.sent.append(data)
        self._answered((token,), None, 0)


class _Session:
    def __init__(self, mode: str | None) -> None:
        self.appender = _Appender(mode)

    def close(self, timeout_s: int) -> None:
        pass


def _run(argv: list[str]) -> tuple[dict, list[dict], dict[int, _Session]]:
    sessions: dict[int, _Session] = {}

    def factory(cfg, epoch, mode):
        sessions[cfg.channel_index] = _Session(mode)
        return sessions[cfg.channel_index]

    cfg = load_config(
        ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "multi", *argv],
        {"HOSTNAME": "laptop"},
    )
    out = io.StringIO()
    summary = MultiChannelWorker(cfg, out=out, session_factory=factory).run()
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    return summary, lines, sessions


def test_three_channels_split_the_rate_with_unique_txids_and_one_set_of_lines():
    summary, lines, sessions = _run(
        ["--channels", "3", "--target-bps", "6e6", "--duration-seconds", "2",
         "--window-seconds", "1", "--batch-bytes", "200000"]
    )  # fmt: skip
    assert sorted(sessions) == [0, 1, 2]
    txids = []
    per_channel_bytes = []
    for c, session in sorted(sessions.items()):
        sent = b"".join(session.appender.sent)
        per_channel_bytes.append(len(sent))
        seqs = [int(json.loads(x)["TXID"].rsplit("-", 1)[1]) for x in sent.splitlines()]
        assert seqs == list(range(c * CHANNEL_SEQ_STRIDE, c * CHANNEL_SEQ_STRIDE + len(seqs)))
        txids += [json.loads(x)["TXID"] for x in sent.splitlines()]
    assert len(txids) == len(set(txids)) == summary["rows_sent"] == summary["rows_acked"]
    assert summary["bytes_sent"] == sum(per_channel_bytes)
    # Each channel paced at a third of the rate (2 MB/s for 2 s, within two batches).
    for nbytes in per_channel_bytes:
        assert 2e6 * 2 * 0.8 <= nbytes <= 2e6 * 2 + 2 * 200_000
    assert summary["channels"] == 3 and summary["unacked_rows"] == 0
    assert summary["rows_generated"] == summary["rows_sent"]
    assert [s for s, _ in summary["channel_seqs"]] == [
        0,
        CHANNEL_SEQ_STRIDE,
        2 * CHANNEL_SEQ_STRIDE,
    ]
    windows = [x for x in lines if x["type"] == "window"]
    starts = [w["window_start"] for w in windows]
    assert starts == sorted(set(starts)), "one merged line per wall-clock window"
    assert sum(w["rows"] for w in windows) == summary["rows_sent"]
    assert all(w["channels"] == 3 and w["worker_id"] == 0 for w in windows)
    assert [x["type"] for x in lines][-1] == "summary" and len(lines) == len(windows) + 1
    # billable bytes (the values' bytes) add up across channels, in windows and summary
    sent_all = b"".join(b"".join(s.appender.sent) for s in sessions.values())
    assert summary["billable_bytes"] == body_billable_bytes(sent_all) > 0
    assert sum(w["billable_bytes"] for w in windows) == summary["billable_bytes"]


def test_channels_follow_the_schedule_scaled_and_the_lines_add_their_targets():
    stages = '[{"seconds": 0.5, "from_bps": 2e6, "to_bps": 2e6}, '
    stages += '{"seconds": 0.5, "from_bps": 2e6, "to_bps": 4e6}]'
    # One agreed start, as run gives its workers: without it each channel starts its
    # schedule when its own channel opens, and on a busy box their stages drift apart.
    start_at = math.ceil((time.time() + 1.0) / 0.5) * 0.5
    summary, lines, sessions = _run(
        ["--channels", "2", "--stages", stages, "--warmup-seconds", "0.5",
         "--window-seconds", "0.5", "--batch-bytes", "20000", "--scenario-name", "ramp",
         "--scenario-hash", "00ff", "--start-at", f"{start_at:.3f}"]
    )  # fmt: skip
    assert sorted(sessions) == [0, 1]
    windows = [x for x in lines if x["type"] == "window"]
    assert all(w["scenario"] == "ramp" and w["scenario_hash"] == "00ff" for w in windows)
    full = [w for w in windows if not w["partial"]]
    # Each channel books half the worker's schedule; the worker's windows add up to it.
    by_stage = {(w["warmup"], w["stage"]): w["target_bps"] for w in full}
    assert by_stage.get((False, 0)) == 2e6
    assert by_stage.get((False, 1)) == 3e6
    assert (summary["scenario"], summary["scenario_hash"]) == ("ramp", "00ff")
    assert [(s["stage"], s["target_bps"]) for s in summary["stages"]] == [(0, 2e6), (1, 3e6)]
    assert sum(s["rows"] for s in summary["stages"]) == summary["rows_sent"]
    assert summary["rows_sent"] + summary["warmup_rows_sent"] == summary["rows_generated"]
    assert summary["warmup_seconds"] >= 0.5
    assert summary["send_start"] < summary["send_end"]


def test_merged_window_sums_counts_and_merges_histograms():
    def window(rows: int, latencies_s: list[float], cpu: float) -> dict:
        h = histogram.new_histogram()
        for s in latencies_s:
            histogram.record_seconds(h, s)
        return {
            "type": "window", "host": "pod-4", "run_id": "r", "worker_id": 4, "window_start": 100.0,
            "window_seconds": 5.0, "partial": False, "start": 100.0, "end": 105.0,
            "rows": rows, "bytes": rows * 290, "acks": len(latencies_s),
            "ack_hist_us": histogram.encode(h), "cpu_pct": cpu, "rss_mib": 80.0,
        }  # fmt: skip

    merged = merge_windows([window(10, [0.1] * 99, 30.0), window(5, [0.9], 31.0)], 2)
    assert merged["rows"] == 15 and merged["bytes"] == 15 * 290 and merged["acks"] == 100
    assert merged["worker_id"] == 4 and merged["channels"] == 2
    assert merged["host"] == "pod-4"  # a monitor tells two workers of one id apart by it
    assert merged["ack_p50_ms"] == pytest.approx(100, rel=0.01)
    assert merged["ack_max_ms"] == pytest.approx(900, rel=0.01)
    assert merged["cpu_pct"] == 31.0 and merged["rss_mib"] == 80.0  # the process's, not summed


def test_channels_out_of_range_is_a_config_error():
    from elastic_channels.worker.config import ConfigError

    with pytest.raises(ConfigError, match=r"--channels \(CHANNELS\) must be 1..64, got 0"):
        load_config(["--account", "A", "--database", "D", "--schema", "S", "--channels", "0"], {})


@pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
def test_two_channels_through_the_sdk_land_every_row_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "elastic_channels", "run", "--workers", "1",
         "--worker-arg=--channels=2", "--target-bps", "4e6", "--duration-seconds", "3",
         "--window-seconds", "1", "--run-id", "two-channels", "--json"],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    (summary,) = result["worker_summaries"]
    assert summary["channels"] == 2 and summary["unacked_rows"] == 0
    landed = result["landed"]
    assert landed["lost"] == 0 and landed["duplicates"] == 0
    assert landed["rows_landed"] == landed["rows_expected"] == summary["rows_sent"] > 0


def test_channels_without_an_agreed_start_start_together_however_long_each_takes_to_open():
    # Channel 1 takes 0.6 s longer to open than channel 0 (TLS, token, pipe info on a
    # busy box): both still start the schedule at once, when the last one is open.
    sessions: dict[int, _Session] = {}

    def factory(cfg, epoch, mode):
        if cfg.channel_index == 1:
            time.sleep(0.6)
        sessions[cfg.channel_index] = _Session(mode)
        return sessions[cfg.channel_index]

    cfg = load_config(
        ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "gate",
         "--channels", "2", "--target-bps", "2e6", "--duration-seconds", "1",
         "--window-seconds", "0.5", "--batch-bytes", "20000"],
        {"HOSTNAME": "laptop"},
    )  # fmt: skip
    worker = MultiChannelWorker(cfg, out=io.StringIO(), session_factory=factory)
    summary = worker.run()
    starts = [worker.merger.summaries[c]["send_start"] for c in (0, 1)]
    assert abs(starts[0] - starts[1]) < 0.3, starts
    assert summary["unacked_rows"] == 0 and sorted(sessions) == [0, 1]
