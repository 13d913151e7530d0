"""A run's SDK figures in its result, from its workers' summaries (issue #32): files
summed, means weighted by their counts, throttled windows summed; unknown without any."""

from __future__ import annotations

from elastic_channels.results.derive import figures_of
from elastic_channels.results.sdk_figures import sdk_figures, sdk_line


def _summary(worker: int, files: int, upload_n: int, upload_mean: float, throttled: int) -> dict:
    return {
        "type": "summary", "worker_id": worker, "sdk_throttled_windows": throttled,
        "sdk": {
            "files": {"durable": files, "transient": 0},
            "ms": {"file_upload": {"n": upload_n, "mean": upload_mean, "p50": 1, "p99": 2,
                                   "max": 3},
                   "input_buffer": {"n": 4, "mean": 900.0, "p50": 1, "p99": 2, "max": 3}},
            "api": {"insert_files": {"calls": files, "ms": {"n": files, "mean": 40.0,
                                                            "p50": 1, "p99": 2, "max": 3}}},
            "compression_ratio": {"n": files, "mean": 14.0, "p50": 1, "p99": 2, "max": 3},
        },
    }  # fmt: skip


def test_the_run_figures_merge_the_workers() -> None:
    got = sdk_figures([_summary(0, 3, 3, 100.0, 0), _summary(1, 1, 1, 300.0, 2)])
    assert got["sdk_files"] == 4
    assert got["sdk_upload_ms"] == 150.0  # (3 x 100 + 1 x 300) / 4: weighted by count
    assert got["sdk_input_buffer_ms"] == 900.0 and got["sdk_register_ms"] == 40.0
    assert got["sdk_compression_ratio"] == 14.0 and got["sdk_throttled_windows"] == 2
    assert got["sdk_output_buffer_ms"] is None  # no value in any window: unknown, not 0
    line = sdk_line(got)
    assert line is not None and "4 files compressed 14.0x" in line and "upload 150 ms" in line


def test_without_sdk_figures_every_one_is_unknown() -> None:
    got = sdk_figures([{"type": "summary", "worker_id": 0}])
    assert set(got.values()) == {None} and sdk_line(got) is None
    figures, _ = figures_of({"run_id": "r", "worker_summaries": [_summary(0, 2, 2, 50.0, 0)]})
    assert figures["sdk_files"] == 2 and figures["sdk_upload_ms"] == 50.0
