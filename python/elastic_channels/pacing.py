"""Pacing: hold a byte rate steady over long runs without drift.

``Pacer`` is a virtual-schedule token bucket (GCRA): each ``acquire(n)`` books ``n``
bytes at ``rate`` bytes/s after the previous booking and sleeps until that slot
comes. Because the schedule, not the time of the last wake-up, advances, oversleeping
is paid back by the next bookings and the long-run rate is exact. If the caller falls
behind (a slow batch, a GC pause) it may catch up by at most ``burst_seconds`` of
traffic, so a stall is never followed by an unbounded burst.
"""

from __future__ import annotations

import time
from typing import Callable


class Pacer:
    def __init__(
        self,
        rate: float,
        *,
        burst_seconds: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be > 0 bytes/s, got {rate!r}")
        if burst_seconds < 0:
            raise ValueError(f"burst_seconds must be >= 0, got {burst_seconds!r}")
        self.rate = float(rate)
        self.burst_seconds = float(burst_seconds)
        self._clock = clock
        self._sleep = sleep
        self._next = clock()

    def delay(self, nbytes: int) -> float:
        """Books ``nbytes`` and returns how long to wait before sending them."""
        now = self._clock()
        earliest = now - self.burst_seconds
        if self._next < earliest:
            self._next = earliest
        wait = self._next - now
        self._next += nbytes / self.rate
        return max(wait, 0.0)

    def acquire(self, nbytes: int) -> float:
        """Waits until ``nbytes`` may go; returns the time slept."""
        wait = self.delay(nbytes)
        if wait > 0:
            self._sleep(wait)
        return wait
