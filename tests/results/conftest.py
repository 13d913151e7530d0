"""Synthetic run results, shaped as ``elastic-channels run --json`` prints them (with the
keys the scenario work adds to windows: ``stage``, ``warmup``, ``target_bps``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from elastic_channels.monitor import histogram
from elastic_channels.worker.meter import ack_fields

T0 = 1_800_000_000.0  # 2027-01-15 08:00:00 UTC


def hist(*ms: float) -> str:
    """An encoded histogram of these latencies (milliseconds)."""
    h = histogram.new_histogram()
    for x in ms:
        histogram.record_seconds(h, x / 1e3)
    return histogram.encode(h)


def window(
    start: float,
    *,
    rows: int = 1000,
    nbytes: int = 1_000_000,
    acks_ms: Sequence[float] = (10.0,),
    behind_ms: Sequence[float] = (0.0,),
    stage: int | None = None,
    warmup: bool | None = None,
    target_bps: float | None = None,
    seconds: float = 1.0,
) -> dict[str, Any]:
    """One fleet window (as ``fleet.report.aggregate_window`` makes it)."""
    w: dict[str, Any] = {
        "window_start": start, "window_seconds": seconds, "partial": False, "start": start,
        "end": start + seconds, "workers": 2, "worker_ids": [0, 1], "rows": rows,
        "bytes": nbytes, "acked_rows": rows, "acked_bytes": nbytes, "acks": len(acks_ms),
        "in_flight_batches": 0, "in_flight_bytes": 0, "resent_batches": 0, "sdk_retries": 0,
        "errors": 0, "mb_per_s": round(nbytes / seconds / 1e6, 3),
        "rows_per_s": rows / seconds, **ack_fields(histogram.decode(hist(*acks_ms))),
        "behind_hist_us": hist(*behind_ms), "cpu_pct": 50.0, "rss_mib": 120.0,
        "t": start - T0 + seconds,
    }  # fmt: skip
    if stage is not None:
        w["stage"] = stage
    if warmup is not None:
        w["warmup"] = warmup
    if target_bps is not None:
        w["target_bps"] = target_bps
    return w


def summary(worker_id: int, *, send_start: float, send_end: float, nbytes: int, rss: float) -> dict:
    """A worker's summary line (the keys the result's figures read, and a few more)."""
    return {
        "type": "summary", "run_id": "x", "worker_id": worker_id, "append_mode": "ffi",
        "rows_sent": nbytes // 100, "rows_acked": nbytes // 100, "bytes_sent": nbytes,
        "bytes_acked": nbytes, "send_start": send_start, "send_end": send_end,
        "ack_hist_us": hist(10.0), "resent_batches": 1, "sdk_retries": 2, "errors": 0,
        "unacked_rows": 0, "cpu_s": 1.0, "peak_rss_mib": rss, "target_bps": 1e6,
    }  # fmt: skip


def staged_result(run_id: str = "run-a", **extra: Any) -> dict[str, Any]:
    """Two workers, 11 s of sending (60 MB acked: 5.455 MB/s); one warmup window whose acks
    are slow (5 s), then stage 0 (two windows at 4 MB/s target, 100 acks of 10 ms) and
    stage 1 (one window at 8 MB/s target, one ack of 500 ms): the run's ack p99 is 10 ms
    (the 100th of 101), stage 1's 500 ms."""
    windows = [
        window(T0, acks_ms=[5000.0], behind_ms=[900.0], stage=-1, warmup=True, target_bps=4e6),
        window(T0 + 1, acks_ms=[10.0] * 50, stage=0, warmup=False, target_bps=4e6),
        window(T0 + 2, acks_ms=[10.0] * 50, stage=0, warmup=False, target_bps=4e6),
        window(T0 + 3, nbytes=2_000_000, acks_ms=[500.0], behind_ms=[20.0], stage=1,
               warmup=False, target_bps=8e6),
    ]  # fmt: skip
    summaries = [
        summary(0, send_start=T0 + 1, send_end=T0 + 11, nbytes=30_000_000, rss=50.0),
        summary(1, send_start=T0 + 2, send_end=T0 + 12, nbytes=30_000_000, rss=70.0),
    ]
    # Visible p99 per window: 9000 ms in warmup (left out), then 300, 400, 500 ms.
    metrics = [
        {**w, "visible_p50_ms": 100.0 + i, "visible_p99_ms": 200.0 + 100 * i}
        for i, w in enumerate(windows)
    ]
    metrics[0]["visible_p99_ms"] = 9000.0
    result: dict[str, Any] = {
        "run_id": run_id,
        "workers": 2,
        "target_bps": 4e6,
        "totals": {
            "worker_id": "total",
            "rows_sent": 600_000,
            "rows_acked": 600_000,
            "bytes_sent": 60_000_000,
            "bytes_acked": 60_000_000,
            "cpu_s_per_gb": 33.333,
            "peak_rss_mib": 70.0,
        },
        "landed": {
            "rows_landed": 600_000,
            "duplicates": 0,
            "lost": 0,
            "visible_p50_ms": 1.0,
            "visible_p99_ms": 2.0,
        },
        "windows": windows,
        "metrics_windows": metrics,
        "worker_summaries": summaries,
        "failed_workers": [],
        "chart": None,
    }
    result.update(extra)
    return result


@pytest.fixture
def make_result() -> Callable[..., dict[str, Any]]:
    return staged_result


@pytest.fixture
def parts() -> SimpleNamespace:
    """The builders above, for tests that shape their own result."""
    return SimpleNamespace(T0=T0, hist=hist, window=window, summary=summary)
