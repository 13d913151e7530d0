"""Follow local workers' JSON lines until all exit: fleet windows as they complete, and
a line whenever nothing else has been said for a window (starting, draining).

A fleet window is printed once every worker still reporting has reported it or gone past
it; a worker that exited is waited for until every line it wrote has been handled, so the
last windows count every worker that sent in them. Each line says the run's elapsed and
planned seconds, counted from the agreed start of sending.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..measures import MB
from .interrupt import Interruption
from .local import WorkerProc, _pump, _tail_stderr
from .report import aggregate_window, format_window, window_key

__all__ = ["Schedule", "watch"]


@dataclass(frozen=True)
class Schedule:
    """When sending starts (epoch seconds) and how long the run is planned to last
    (warmup and every stage), and the length of a window."""

    start_at: float
    total_s: float
    window_s: float

    def clock(self, now: float) -> str:
        return f"[{now - self.start_at:6.1f}/{self.total_s:.0f}s]"


def watch(
    workers: list[WorkerProc],
    progress: TextIO | None,
    deadline: float,
    on_record: Callable[[dict[str, Any]], Any] | None = None,
    on_idle: Callable[[], Any] | None = None,
    on_window: Callable[[dict[str, Any]], Any] | None = None,
    *,
    schedule: Schedule | None = None,
    interruption: Interruption | None = None,
) -> list[dict[str, Any]]:
    """Collect every worker's output until all exit; print fleet-wide windows.

    ``on_record`` gets every worker line as it comes (a monitor writing the metrics
    table), ``on_idle`` is called while no line comes (about 5 times a second), and
    ``on_window`` each fleet window once every live worker has reported it, in time
    order (the search for the highest rate held judges them). A window's target is the
    schedule's for the whole fleet (every worker started), whoever is still alive.
    SIGINT/SIGTERM go to ``interruption`` (one of its own when None): the workers are
    asked to drain, then killed on a second signal."""
    own = interruption is None
    intr = interruption if interruption is not None else Interruption(progress)
    intr.processes = [wp.proc for wp in workers]
    lines: queue.Queue = queue.Queue()
    threads = []
    for wp in workers:
        for fn, args in ((_pump, (wp, lines)), (_tail_stderr, (wp, progress))):
            t = threading.Thread(target=fn, args=args, daemon=True)
            t.start()
            threads.append(t)
    state = _Fleet(workers, progress, schedule, on_window)
    ctx = intr.installed() if own else None
    if ctx is not None:
        ctx.__enter__()
    intr.watching = True
    try:
        while not all([wp.seen_exited() for wp in workers]) or not lines.empty():
            try:
                worker_id, record = lines.get(timeout=0.2)
            except queue.Empty:
                if on_idle is not None:
                    on_idle()
                if time.monotonic() > deadline:
                    for wp in workers:
                        if wp.proc.poll() is None:
                            wp.proc.kill()
                state.emit_ready()
                state.heartbeat()
                continue
            wp = next(w for w in workers if w.worker_id == worker_id)
            wp.handled += 1
            if on_record is not None:
                on_record(record)
            if record.get("type") == "summary":
                wp.summary = record
            elif record.get("type") == "window":
                wp.windows.append(record)
                state.add(record)
            state.emit_ready()
        for wp in workers:
            wp.handled = wp.queued  # every line is off the queue now
        state.emit_ready()
    finally:
        intr.watching = False
        if ctx is not None:
            ctx.__exit__(None, None, None)
    for t in threads:
        t.join(timeout=5)
    for wp in workers:
        wp.proc.wait(timeout=30)
        wp.seen_exited()
    return state.fleet


class _Fleet:
    """The fleet windows: pending until complete, printed once, late lines folded in."""

    def __init__(
        self,
        workers: list[WorkerProc],
        progress: TextIO | None,
        schedule: Schedule | None,
        on_window: Callable[[dict[str, Any]], Any] | None,
    ) -> None:
        self.workers, self.progress, self.schedule = workers, progress, schedule
        self.on_window = on_window
        self.pending: dict[float, list[dict[str, Any]]] = {}
        self.fleet: list[dict[str, Any]] = []
        self.emitted: dict[float, int] = {}  # window key -> its index in fleet
        self.lines_of: dict[float, list[dict[str, Any]]] = {}
        self.t0 = time.time() if schedule is None else schedule.start_at
        self.last_said = time.monotonic()

    def _aggregate(self, key: float) -> dict[str, Any]:
        agg = aggregate_window(self.lines_of[key], fleet_workers=len(self.workers))
        agg["t"] = round(agg["end"] - self.t0, 1)
        return agg

    def add(self, record: dict[str, Any]) -> None:
        """A worker's window line: pending, or folded into a window already printed (a
        worker that finished early let it go)."""
        key = window_key(record)
        if key in self.emitted:
            self.lines_of[key].append(record)
            t = self.fleet[self.emitted[key]]["t"]
            self.fleet[self.emitted[key]] = {**self._aggregate(key), "t": t}
            return
        self.pending.setdefault(key, []).append(record)

    def emit_ready(self) -> None:
        """Print every pending fleet window that each worker still reporting has reported
        or gone past (windows line up on the wall clock)."""
        live = [w for w in self.workers if not w.done()]
        for key in sorted(self.pending):
            if any(not w.windows or window_key(w.windows[-1]) < key for w in live):
                break
            self.lines_of[key] = self.pending.pop(key)
            agg = self._aggregate(key)
            self.emitted[key] = len(self.fleet)
            self.fleet.append(agg)
            self._say(self._clock(agg["end"]) + " " + format_window(agg, clock=False))
            if self.on_window is not None:
                self.on_window(agg)

    def heartbeat(self) -> None:
        """A line when nothing was said for a window's length: what the run is doing."""
        every = self.schedule.window_s if self.schedule is not None else 10.0
        if self.progress is None or time.monotonic() - self.last_said < max(every, 1.0):
            return
        now = time.time()
        running = [w for w in self.workers if w.proc.poll() is None]
        if self.schedule is not None and now < self.schedule.start_at:
            wait = self.schedule.start_at - now
            text = (f"starting: {len(self.workers)} worker(s) opening their clients and "
                    f"channels; sending starts in {wait:.0f} s")  # fmt: skip
        elif not self.fleet:
            text = f"waiting for the first window from {len(running)} worker(s)"
        elif self.schedule is not None and now > self.schedule.start_at + self.schedule.total_s:
            flight = sum(int((w.windows or [{}])[-1].get("in_flight_bytes") or 0)
                         for w in running)  # fmt: skip
            text = (f"draining: {len(running)} worker(s) waiting for the acks of "
                    f"{flight / MB:.1f} MB in flight (as of their last window)")  # fmt: skip
        else:
            text = f"{len(running)} worker(s) running; waiting for their next window"
        self._say(f"{self._clock(now)} {text}")

    def _clock(self, at: float) -> str:
        if self.schedule is not None:
            return self.schedule.clock(at)
        return f"[{at - self.t0:7.1f}s]"

    def _say(self, text: str) -> None:
        self.last_said = time.monotonic()
        if self.progress is not None:
            print(text, file=self.progress, flush=True)
