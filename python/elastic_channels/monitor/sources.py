"""Feeding a monitor: lines from stdin or files, and the loop that ticks it.

Every source puts ``(line, pod_name, node_name)`` on one queue; :func:`pump` feeds the
monitor from it on one thread and ticks it at least every ``tick_s``, so windows are
written while lines keep coming and also while none do. Files and stdin are read in
chunks and split under a length cap (:mod:`.line_splitter`): a line without a newline
never takes more memory than the cap.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import IO

from .line_splitter import LineSplitter
from .monitor import Monitor

__all__ = ["END", "pump", "read_streams"]

#: Put on the queue by a source that has ended.
END = object()
#: Bytes read from a file at a time.
READ_BYTES = 64 * 1024


def _chunks(stream: IO[str] | IO[bytes]) -> Iterable[bytes]:
    """A stream's bytes, a chunk at a time, as soon as they come (``read1``: a pipe's
    line is not held back until a whole chunk is in); a text stream without a byte
    buffer, such as a test's StringIO, encoded as UTF-8."""
    raw = getattr(stream, "buffer", stream)
    read = getattr(raw, "read1", raw.read)
    while chunk := read(READ_BYTES):
        yield chunk if isinstance(chunk, bytes) else chunk.encode("utf-8", "replace")


def _put_lines(stream: IO[str] | IO[bytes], lines: queue.Queue) -> None:
    splitter = LineSplitter()
    for chunk in _chunks(stream):
        for line in splitter.feed(chunk):
            lines.put((line, None, None))
    for line in splitter.end():
        lines.put((line, None, None))


def read_streams(
    names: Iterable[str], lines: queue.Queue, stdin: IO[str] | None = None
) -> list[threading.Thread]:
    """One reader thread per file (``-`` is stdin); each puts END when done."""
    threads = []
    for name in names:

        def read(name: str = name) -> None:
            try:
                if name == "-":
                    _put_lines(stdin or sys.stdin, lines)
                else:
                    with open(name, "rb") as f:
                        _put_lines(f, lines)
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
