"""A stage's figures cover its own time: no sliver makes a stage, no drain window dilutes
its rate (issue #29: a 60 s stage at 40 MB/s was recorded as 62.4 s at 38.46 MB/s)."""

from __future__ import annotations

from elastic_channels.monitor.stage_rows import stage_rows
from elastic_channels.results.derive import stage_figures

MB = 1e6


def _window(start: float, seconds: float, stage: int, mbps: float, *, partial: bool = False,
            length: float = 5.0) -> dict:  # fmt: skip
    sent = int(mbps * MB * seconds)
    return {
        "window_start": start, "window_seconds": length, "start": start, "end": start + seconds,
        "partial": partial, "stage": stage, "warmup": False, "rows": sent // 250, "bytes": sent,
        "acked_bytes": sent, "acked_rows": sent // 250, "target_bps": 40 * MB, "workers": 1,
    }  # fmt: skip


def test_the_drain_window_and_a_sliver_stay_out_of_the_stages() -> None:
    windows = [_window(100.0 + 5 * k, 5.0, 1, 40.0) for k in range(12)]  # 60 s at 40 MB/s
    drain = {**_window(160.0, 2.4, 1, 0.0, partial=True), "acked_bytes": 10_000_000}
    sliver = _window(162.4, 0.155, 2, 0.0, partial=True)  # a "stage 2" of 0.155 s
    stages = stage_figures({"windows": [*windows, drain, sliver]})
    assert [s["stage"] for s in stages] == [1]
    (stage,) = stages
    assert stage["seconds"] == 60.0 and stage["mb_per_s"] == 40.0
    rows = stage_rows("r", [*windows, drain, sliver])
    assert [r["STAGE"] for r in rows] == [1]
    assert rows[0]["SECONDS"] == 60.0 and rows[0]["MB_PER_SEC"] == 40.0
