"""The run's chart draws the fleet's target beside the achieved rate and shades warmup."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from elastic_channels.fleet.chart import draw, write_chart


def window(k: int, target: float | None, warmup: bool, mb: float) -> dict:
    return {
        "window_start": 100.0 + k, "start": 100.0 + k, "end": 101.0 + k, "t": k + 1.0,
        "workers": 2, "partial": False, "rows": 1000, "mb_per_s": mb, "rows_per_s": 1000.0,
        "ack_p50_ms": 10.0, "ack_p99_ms": 20.0, "target_bps": target, "warmup": warmup,
        "stage": -1 if warmup else 0,
    }  # fmt: skip


def test_the_target_is_drawn_beside_the_achieved_rate_and_warmup_is_shaded() -> None:
    windows = [window(0, 2e6, True, 1.9), window(1, 2e6, False, 2.0), window(2, 4e6, False, 3.9)]
    fig = draw(windows, "run", {"mb_per_s": 3.0})
    top = fig.axes[0]
    lines = {ln.get_label(): ln for ln in top.get_lines()}
    # the schedule's steps: each window's target from its start, to the last window's end
    assert list(lines["target MB/s"].get_xdata()) == [0.0, 1.0, 2.0, 3.0]
    assert list(lines["target MB/s"].get_ydata()) == [2.0, 2.0, 4.0, 4.0]
    assert lines["target MB/s"].get_drawstyle() == "steps-post"
    assert list(lines["MB/s"].get_ydata()) == [1.9, 2.0, 3.9]
    spans = [p for p in top.patches if p.get_label() == "warmup (outside the run's figures)"]
    assert len(spans) == 1
    x0, x1 = spans[0].get_x(), spans[0].get_x() + spans[0].get_width()
    assert (x0, x1) == (0.0, 1.0)  # the warmup window's start and end, in run seconds


def test_windows_without_a_target_draw_none(tmp_path: Path) -> None:
    windows = [window(k, None, False, 2.0) for k in range(3)]
    fig = draw(windows, "run")
    assert "target MB/s" not in [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert not fig.axes[0].patches
    write_chart(tmp_path / "c.png", windows, "run")
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_sliver_of_a_window_is_not_drawn_and_a_longer_partial_one_is() -> None:
    full = [window(k, None, False, 2.0) for k in range(2)]
    part = {**window(2, None, False, 1.9), "partial": True, "end": 102.6, "window_seconds": 1.0}
    sliver = {**window(3, None, False, 900.0), "partial": True, "window_seconds": 1.0}
    sliver["end"] = sliver["start"] + 0.001  # one batch in 1 ms reads 900 MB/s
    fig = draw([*full, part, sliver], "run")
    drawn = [y for ln in fig.axes[0].get_lines() for y in ln.get_ydata()]
    assert 1.9 in drawn and 900.0 not in drawn
