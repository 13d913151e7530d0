"""Ingest-to-visible per window: read off the landing table's commit times.

For the windows being written, one query gives, per window of commit time, the run's
rows committed in it and the p50/p99/average of commit time minus ``SALE_TIME``. At the
end of a run, rows still committing after the workers' last window get windows of their
own (no worker reports them: ``WORKERS_REPORTING`` 0), so every landed row of the run
is in exactly one window; :func:`wait_landed` first waits until the rows the workers
had acknowledged are all visible (commits trail acks by seconds on an account).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .sink import MetricsSink
from .windows import Window

__all__ = ["empty_fleet", "read_visible", "wait_landed"]

#: How far past the last window a final read looks for commits (a day).
FINAL_HORIZON_S = 86_400.0


def read_visible(
    sink: MetricsSink,
    run_id: str,
    windows: list[Window],
    *,
    now: float,
    settle_s: float,
    final: bool = False,
) -> list[Window]:
    """Fill in ``visible`` of ``windows``; with ``final``, also return new windows for
    commits after the last of them."""
    window_s = windows[0].window_seconds
    start = min(w.window_start for w in windows)
    end = max(w.end for w in windows) + (FINAL_HORIZON_S if final else 0.0)
    found = sink.visible_latency(run_id, window_s, start, end)
    for w in windows:
        w.visible = found.pop(w.window_start, {}) or {"visible_rows": 0}
        w.visible_final = final or now >= w.end + settle_s
    extra = []
    if final:
        last = max(w.window_start for w in windows)
        for ws, figures in sorted(found.items()):
            if ws > last:
                extra.append(Window(ws, window_s, visible=figures, visible_final=True))
    return extra


def empty_fleet(w: Window) -> dict[str, Any]:
    """The fleet figures of a window no worker reported (commits only)."""
    return {
        "window_start": w.window_start,
        "window_seconds": w.window_seconds,
        "partial": False,
        "start": w.window_start,
        "end": w.end,
        "workers": 0,
        "rows": 0,
        "bytes": 0,
        "acked_rows": 0,
        "acks": 0,
        "mb_per_s": 0.0,
        "rows_per_s": 0.0,
    }


def wait_landed(
    sink: MetricsSink,
    run_id: str,
    acked_rows: int,
    *,
    timeout_s: float,
    poll_s: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Wait until at least ``acked_rows`` rows of the run are visible; False on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        if sink.landed_rows(run_id) >= acked_rows:
            return True
        if time.monotonic() >= deadline:
            return False
        sleep(poll_s)
