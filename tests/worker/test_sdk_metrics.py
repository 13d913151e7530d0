"""The SDK's own figures in a run's windows, checked against what the emulator saw.

``elastic-channels run`` (one worker of two channels: two SDK clients on the process's
one endpoint) sends in file mode (the emulator's default buffering: ~1 s flushes of
~2.5 MB per channel) to an emulator of the test's own, so its counters before and after
are the run's alone. The files, bytes, rows and registrations the SDK says it sent,
summed over the windows, are what the emulator's stage and API received.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from emulator_support import sdk_available

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")
pytest.importorskip("prometheus_client")

#: Variables that would steer the SDK's endpoint or the worker's reading of it.
STEERING = ("SS_ENABLE_METRICS", "SS_METRICS_IP", "SS_METRICS_PORT", "SDK_METRICS")


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    from elastic_channels.emulator import Emulator, EmulatorConfig

    emulator = Emulator(
        EmulatorConfig(data_dir=tmp_path_factory.mktemp("sdk-metrics") / "emu", fsync=False)
    ).start()
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture
def profile(emu, tmp_path) -> Path:
    path = tmp_path / "emulator-info.json"
    path.write_text(json.dumps(emu.info()))
    return path


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in STEERING}
    out.update(SS_LOG_LEVEL="warn", SS_LOG_TARGET="stderr")
    return out


def seen(emu: Any) -> dict[str, int]:
    s = emu.stats_snapshot()
    return {
        "uploads": s["stage"]["uploads"],
        "upload_bytes": s["stage"]["bytes"],
        "filebuffer": s["requests"].get("filebuffer", 0),
        "rows_requests": s["requests"].get("rows", 0),
        "rows_received": s["rows_received"],
        "file_bytes_raw": s["file_bytes_raw"],
        "bytes_raw": s["bytes_raw"],
    }


def total(windows: list[dict[str, Any]], *path: str) -> int:
    out = 0
    for w in windows:
        value: Any = w["sdk"]
        for key in path:
            value = (value or {}).get(key)
        out += int(value or 0)
    return out


def test_a_runs_windows_carry_the_sdk_figures_the_emulator_agrees_with(emu, profile, tmp_path):
    before = seen(emu)
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.cli", "run", "--profile", str(profile),
         "--target-bps", "5e6", "--duration-seconds", "4", "--window-seconds", "1",
         "--channels", "2", "--run-id", "sdk-e2e", "--no-monitor", "--json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env(), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = seen(emu)
    got = {k: after[k] - before[k] for k in after}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    windows = result["windows"]
    totals = result["totals"]
    # every window read the SDK (one worker: one process, one endpoint for both clients)
    assert windows and all(w["sdk"] is not None and w["sdk_workers"] == 1 for w in windows)
    assert got["uploads"] > 0, "the run did not send in file mode"
    # files and their bytes: what the stage received
    assert total(windows, "files", "durable") == got["uploads"]
    assert total(windows, "files", "transient") == 0
    assert total(windows, "files", "compressed_bytes") == got["upload_bytes"]
    # registrations (insert_files, the filebuffer calls) and inline requests
    assert total(windows, "api", "insert_files", "calls") == got["filebuffer"]
    assert total(windows, "inline", "requests") == got["rows_requests"]
    # rows, by file or inline: every row the emulator received, every row sent
    rows = total(windows, "files", "rows") + total(windows, "inline", "rows")
    assert rows == got["rows_received"] == totals["rows_sent"]
    # bytes: inline, exactly what the emulator got; a file's uncompressed size is counted
    # by the SDK (1.9.1) as its NDJSON plus one byte per row, by the emulator plus one
    # byte per appended chunk (the SDK's newline after each), and chunks are fewer
    assert total(windows, "inline", "uncompressed_bytes") == got["bytes_raw"]
    file_rows = total(windows, "files", "rows")
    file_bytes = total(windows, "files", "uncompressed_bytes")
    assert file_bytes - file_rows <= got["file_bytes_raw"] < file_bytes
    # where an ack's time goes: the figures the windows that moved files carry
    moved = [w["sdk"] for w in windows if w["sdk"]["files"]["durable"]]
    for sdk in moved:
        for key in ("input_buffer", "processing_files", "file_upload"):
            figure = sdk["ms"][key]
            assert figure["n"] > 0 and 0 <= figure["mean"] <= figure["max"], (key, figure)
        assert sdk["compression_ratio"]["mean"] > 1
        assert sdk["api"]["insert_files"]["ms"]["n"] > 0
    assert all(not w.get("sdk_throttled") for w in windows)
    # the run's summary: the workers' figures merged, throttled windows counted
    assert totals["sdk"]["files"]["durable"] == got["uploads"]
    assert totals["sdk_throttled_windows"] == 0
    (summary,) = result["worker_summaries"]
    assert summary["sdk_failed_scrapes"] == 0 and summary["sdk_scrape_cpu_s"] > 0


def test_no_sdk_metrics_leaves_them_out(profile, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.worker", "--profile", str(profile),
         "--target-bps", "2e6", "--duration-seconds", "1.5", "--window-seconds", "1",
         "--run-id", "sdk-off", "--no-sdk-metrics"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**env(), "SS_ENABLE_METRICS": "true", "SS_METRICS_PORT": "80"},
    )  # fmt: skip
    # an inherited SS_ENABLE_METRICS=true would bind port 80 and fail the SDK's import
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    assert lines[-1]["type"] == "summary" and lines[-1]["rows_acked"] > 0
    assert all("sdk" not in x and "sdk_throttled_windows" not in x for x in lines)


def test_the_sdks_throttling_shows_in_the_windows_and_is_counted(profile, tmp_path):
    """The SDK's in-flight limit lowered to 2 MB (a client property) at 5 MB/s: the SDK
    refuses appends (ReceiverSaturated, which the worker waits out) and counts each
    refusal; the windows say so and the summary counts them, and every row lands."""
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels.worker", "--profile", str(profile),
         "--target-bps", "5e6", "--duration-seconds", "2", "--window-seconds", "1",
         "--run-id", "sdk-throttled", "--sdk-property", "max_inflight_megabytes_per_channel=2"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    windows, summary = lines[:-1], lines[-1]
    throttled = [w for w in windows if w.get("sdk_throttled")]
    assert throttled, [w["sdk"]["throttle"] for w in windows]
    for w in throttled:
        assert (
            w["sdk_throttled"]["inflight_byte_limit"]
            == w["sdk"]["throttle"]["inflight_byte_limit"]
            > 0
        )
    assert summary["sdk_throttled_windows"] == len(throttled)
    assert summary["sdk"]["throttle"]["inflight_byte_limit"] == sum(
        w["sdk"]["throttle"]["inflight_byte_limit"] for w in windows
    )
    assert summary["unacked_rows"] == 0 and summary["rows_acked"] == summary["rows_sent"] > 0
