"""Pacing: follow a byte-rate schedule over long runs without drift.

``Pacer`` is a virtual-schedule token bucket (GCRA) along a :class:`.schedule.Schedule`
(a constant rate is a schedule of one stage): each ``acquire(n)`` books the next ``n``
bytes of the schedule and sleeps until their slot comes, the time at which the
schedule's integral reaches them. Because the schedule, not the time of the last
wake-up, advances, oversleeping is paid back by the next bookings, the long-run rate
is exact, and the bytes booked over any stretch of the schedule are its integral:
through ramps and steps alike. The schedule runs from ``origin`` on the caller's clock
(the run's agreed start), so every worker given the same origin ramps together. If
the caller falls behind (a slow batch, a GC pause) it may catch up by at most
``burst_seconds`` of the schedule; the rest of the stall is skipped (``skipped_bytes``),
so a stall is never followed by an unbounded burst.

``behind()`` says how late a send is against the schedule, before any catch-up is
forgiven: what a stalled caller's next batch reports as its delay.

With ``sleep_quantum`` > 0 the pacer asks for a wait only once the schedule is at
least that far ahead, and then for all of it: bookings still follow the same
schedule, so the long-run rate is unchanged, but the caller sends in short bursts
and sleeps less often. A worker wants that: each wake-up starts on cold caches. It
never runs ahead across a barrier, though: a window boundary (every ``window_s`` from
``window_phase``) or the start of a stage. A booking whose slot lies past the next
barrier is waited for however short the wait, so what goes out in a window, or a
stage, is what the schedule gives it (to a batch), not up to a quantum of the next.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable

from .schedule import Schedule


class Pacer:
    def __init__(
        self,
        rate: float | Schedule,
        *,
        origin: float | None = None,
        burst_seconds: float = 0.25,
        sleep_quantum: float = 0.0,
        window_s: float | None = None,
        window_phase: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``rate``: bytes/s, or a schedule; ``origin``: when the schedule starts, on
        ``clock`` (default: now); ``window_s``/``window_phase``: the metrics windows'
        length and one of their boundaries on ``clock`` (None: no window barriers)."""
        if not isinstance(rate, Schedule):
            if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
                raise ValueError(f"rate must be a finite number > 0 bytes/s, got {rate!r}")
            rate = Schedule.constant(float(rate), 1.0)  # goes on at its rate past the end
        if not burst_seconds >= 0:
            raise ValueError(f"burst_seconds must be >= 0, got {burst_seconds!r}")
        if not sleep_quantum >= 0:
            raise ValueError(f"sleep_quantum must be >= 0, got {sleep_quantum!r}")
        if window_s is not None and not window_s > 0:
            raise ValueError(f"window_s must be > 0, got {window_s!r}")
        self.window_s = window_s
        self.window_phase = float(window_phase)
        self.schedule = rate
        self.burst_seconds = float(burst_seconds)
        self.sleep_quantum = float(sleep_quantum)
        self._clock = clock
        self._sleep = sleep
        self.origin = clock() if origin is None else float(origin)
        #: Bytes of the schedule booked or skipped so far (its integral up to _next).
        self._position = 0.0
        self._next = self.origin
        #: Bytes of the schedule a stall skipped (beyond the bounded catch-up).
        self.skipped_bytes = 0.0

    @property
    def booked_until(self) -> float:
        """When the bytes booked so far are due to have gone, on ``clock``."""
        return self._next

    @property
    def position(self) -> float:
        """How far along the schedule the bookings are, in bytes: those booked plus
        those skipped."""
        return self._position

    def behind(self) -> float:
        """How far past its slot in the schedule a send now is (0 when ahead): the
        coordinated-omission measure, as OpenMessaging Benchmark's publish delay. After
        a stall the first send counts the whole stall, even though the catch-up burst is
        bounded and the schedule then moves on."""
        return max(0.0, self._clock() - self._next)

    def delay(self, nbytes: int) -> float:
        """Books ``nbytes`` and returns how long to wait before sending them: 0 while
        the schedule is less than ``sleep_quantum`` ahead."""
        now = self._clock()
        earliest = now - self.burst_seconds
        if self._next < earliest:  # a stall: skip all of it but the catch-up allowed
            caught_up = self.schedule.bytes_until(earliest - self.origin)
            self.skipped_bytes += max(0.0, caught_up - self._position)
            self._position = max(self._position, caught_up)
            self._next = earliest
        slot = self._next
        wait = slot - now
        self._position += nbytes
        self._next = self.origin + self.schedule.time_for(self._position)
        if wait <= 0:
            return 0.0
        return wait if wait >= self.sleep_quantum or self._barrier_before(now, slot) else 0.0

    def _barrier_before(self, now: float, slot: float) -> bool:
        """Whether a window boundary or a stage's start lies in ``(now, slot]``."""
        if self.window_s is not None:
            k = math.floor((now - self.window_phase) / self.window_s + 1e-9) + 1
            if self.window_phase + k * self.window_s <= slot:
                return True
        starts = self.schedule.boundaries
        i = bisect.bisect_right(starts, now - self.origin)
        return i < len(starts) and self.origin + starts[i] <= slot

    def acquire(self, nbytes: int) -> float:
        """Waits until ``nbytes`` may go; returns the time slept."""
        wait = self.delay(nbytes)
        if wait > 0:
            self._sleep(wait)
        return wait
