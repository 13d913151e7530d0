"""Feeding a monitor: lines from stdin or files, and the loop that ticks it.

Every source puts ``(line, pod_name, node_name)`` on one queue; :func:`pump` feeds the
monitor from it on one thread and ticks it at least every ``tick_s``, so windows are
written while lines keep coming and also while none do.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import IO

from .monitor import Monitor

__all__ = ["END", "pump", "read_streams"]

#: Put on the queue by a source that has ended.
END = object()


def read_streams(
    names: Iterable[str], lines: queue.Queue, stdin: IO[str] | None = None
) -> list[threading.Thread]:
    """One reader thread per file (``-`` is stdin); each puts END when done."""
    threads = []
    for name in names:

        def read(name: str = name) -> None:
            try:
                if name == "-":
                    for raw in stdin or sys.stdin:
                        lines.put((raw, None, None))
                else:
                    with open(name, encoding="utf-8", errors="replace") as f:
                        for raw in f:
                            lines.put((raw, None, None))
            except OSError as e:
                print(f"elastic-channels monitor: {name}: {e}", file=sys.stderr)
            finally:
                lines.put(END)

        t = threading.Thread(target=read, daemon=True, name=f"read {name}")
        t.start()
        threads.append(t)
    return threads


def pump(
    monitor: Monitor,
    lines: queue.Queue,
    sources: int,
    *,
    tick_s: float = 1.0,
    stop: Callable[[], bool] = lambda: False,
    visible_wait_s: float = 120.0,
) -> None:
    """Feed lines until ``sources`` ENDs came (or ``stop()``), ticking as it goes; then
    wait (up to ``visible_wait_s``) for the acknowledged rows to be visible, and the
    final flush."""
    ended = 0
    next_tick = time.monotonic() + tick_s
    while ended < sources and not stop():
        try:
            item = lines.get(timeout=max(0.0, min(tick_s, next_tick - time.monotonic())))
        except queue.Empty:
            item = None
        if item is END:
            ended += 1
        elif item is not None:
            line, pod, node = item
            monitor.feed(line, pod_name=pod, node_name=node)
        if time.monotonic() >= next_tick:
            monitor.tick()
            next_tick = time.monotonic() + tick_s
    while True:  # what is left on the queue, then everything
        try:
            item = lines.get_nowait()
        except queue.Empty:
            break
        if item is not END:
            monitor.feed(item[0], pod_name=item[1], node_name=item[2])
    monitor.flush()  # what is due now, before waiting for the last commits
    if not stop() and not monitor.wait_visible(visible_wait_s):
        print(
            f"elastic-channels monitor: not every acknowledged row of {monitor.run_id} was "
            f"visible after {visible_wait_s:g} s; ingest-to-visible covers what was",
            file=sys.stderr,
        )
    monitor.flush(final=True)
