"""The SDK's figures in fleet windows, progress lines and the run's totals."""

from __future__ import annotations

from typing import Any

from elastic_channels.fleet.report import aggregate_window, fleet_totals, format_window


def window(worker: int, sdk: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "window", "worker_id": worker, "window_start": 100.0, "window_seconds": 1.0,
        "partial": False, "start": 100.0, "end": 101.0, "rows": 10, "bytes": 1000,
        "target_bps": 1000.0, "stage": 0, "warmup": False, "sdk": sdk, **extra,
    }  # fmt: skip
    return line


def sdk(durable: int, memory: int, n: int, mean: float, p99: float) -> dict[str, Any]:
    return {
        "files": {"durable": durable},
        "throttle": {"memory_limit": memory, "output_buffer_full": 0},
        "ms": {"file_upload": {"n": n, "mean": mean, "p50": mean, "p99": p99, "max": p99}},
        "in_flight": {"bytes": 100},
    }


def test_a_fleet_window_merges_its_workers_sdk_figures() -> None:
    w = aggregate_window(
        [
            window(0, sdk(2, 0, 1, 10.0, 10.0)),
            window(1, sdk(3, 4, 3, 30.0, 70.0)),
            window(2, None),
        ]
    )
    assert w["sdk"]["files"]["durable"] == 5
    assert w["sdk"]["in_flight"]["bytes"] == 200
    assert w["sdk"]["ms"]["file_upload"] == {"n": 4, "mean": 25.0, "p50": 30.0, "p99": 70.0,
                                             "max": 70.0}  # fmt: skip
    assert w["sdk_workers"] == 2  # the third worker's scrape failed
    assert w["sdk_throttled"] == {"memory_limit": 4}
    line = format_window({**w, "t": 1.0, "ack_p50_ms": 5.0, "ack_p99_ms": 9.0})
    assert "SDK throttled: memory limit x4" in line


def test_no_sdk_figures_no_sdk_key_and_no_throttle_said() -> None:
    lines = [window(0, None), window(1, None)]
    for line in lines:
        del line["sdk"]
    w = aggregate_window(lines)
    assert "sdk" not in w and "sdk_throttled" not in w
    assert "throttled" not in format_window({**w, "t": 1.0, "ack_p50_ms": 1.0, "ack_p99_ms": 1.0})
    quiet = aggregate_window([window(0, sdk(1, 0, 1, 1.0, 1.0))])
    assert "sdk_throttled" not in quiet


def summary(worker: int, **extra: Any) -> dict[str, Any]:
    return {
        "worker_id": worker, "append_mode": "ffi", "rows_sent": 1, "rows_acked": 1,
        "bytes_sent": 10, "bytes_acked": 10, "resent_batches": 0, "sdk_retries": 0,
        "unacked_rows": 0, "cpu_s": 0.1, "peak_rss_mib": 50.0, "send_start": 1.0,
        "send_end": 2.0, **extra,
    }  # fmt: skip


def test_the_run_counts_throttled_windows_and_merges_the_sdk_figures() -> None:
    t = fleet_totals(
        [
            summary(0, sdk=sdk(2, 1, 1, 10.0, 10.0), sdk_throttled_windows=1),
            summary(1, sdk=sdk(3, 0, 1, 20.0, 20.0), sdk_throttled_windows=0),
        ]
    )
    assert t["sdk_throttled_windows"] == 1
    assert t["sdk"]["files"]["durable"] == 5
    assert "sdk" not in fleet_totals([summary(0)])
