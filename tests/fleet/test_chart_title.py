"""The run chart's title names the fleet's workers and the run's MB/s, and a window that
not every worker reported is drawn apart (hollow), not on the fleet's MB/s line."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure

from elastic_channels.fleet.chart import draw

PARTIAL = "partial window (not every worker, or not the whole window)"


def window(k: int, workers: int, mb: float, partial: bool = False) -> dict:
    return {
        "window_start": 100.0 + k, "start": 100.0 + k, "end": 101.0 + k, "t": k + 1.0,
        "workers": workers, "partial": partial, "rows": 1000, "mb_per_s": mb,
        "rows_per_s": 1000.0 * mb, "ack_p50_ms": 10.0, "ack_p99_ms": 20.0,
        "target_bps": None, "warmup": False, "stage": 0,
    }  # fmt: skip


#: A 2-worker run of five windows: the first and last have one worker reporting (one
#: started late, one done early), the middle three both.
WINDOWS = [
    window(0, 1, 0.9),
    window(1, 2, 2.0),
    window(2, 2, 2.1),
    window(3, 2, 2.2),
    window(4, 1, 1.1),
]


def suptitle(fig: Figure) -> str:
    title = fig._suptitle  # Figure.get_suptitle() is matplotlib >= 3.8; the floor is 3.7
    assert title is not None, "no title"
    return title.get_text()


def test_the_title_names_the_workers_and_the_runs_mb_per_s() -> None:
    fig = draw(WINDOWS, "run-7", {"mb_per_s": 123.456})
    title = suptitle(fig)
    assert title.startswith("run-7: ")
    assert "2 worker(s)" in title  # the most that reported a window, not the last window's 1
    assert "5 worker(s)" not in title and "1 worker(s)" not in title
    assert "123.5 MB/s" in title  # the run's, from `run`, not a window's


def test_without_the_runs_totals_the_title_has_no_rate() -> None:
    title = suptitle(draw(WINDOWS, "run-7"))
    assert title == "run-7: 2 worker(s)"


def test_a_window_with_fewer_workers_is_drawn_hollow_apart_from_the_line() -> None:
    top = draw(WINDOWS, "run-7", {"mb_per_s": 2.0}).axes[0]
    lines = {ln.get_label(): ln for ln in top.get_lines()}
    main, part = lines["MB/s"], lines[PARTIAL]
    assert list(main.get_xdata()) == [2.0, 3.0, 4.0]
    assert list(main.get_ydata()) == [2.0, 2.1, 2.2]
    assert list(part.get_xdata()) == [1.0, 5.0]
    assert list(part.get_ydata()) == [0.9, 1.1]
    assert part.get_linestyle() == "None"  # points, not joined
    assert part.get_markerfacecolor() == "none"  # hollow
    assert main.get_markerfacecolor() != "none"


def test_a_flagged_partial_window_with_every_worker_is_drawn_hollow_too() -> None:
    windows = [*WINDOWS[1:4], window(5, 2, 1.5, partial=True)]
    top = draw(windows, "run-7").axes[0]
    lines = {ln.get_label(): ln for ln in top.get_lines()}
    assert list(lines["MB/s"].get_ydata()) == [2.0, 2.1, 2.2]
    assert list(lines[PARTIAL].get_ydata()) == [1.5]
