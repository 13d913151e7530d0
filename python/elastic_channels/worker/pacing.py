"""Pacing: hold a byte rate steady over long runs without drift.

``Pacer`` is a virtual-schedule token bucket (GCRA): each ``acquire(n)`` books ``n``
bytes at ``rate`` bytes/s after the previous booking and sleeps until that slot
comes. Because the schedule, not the time of the last wake-up, advances, oversleeping
is paid back by the next bookings and the long-run rate is exact. If the caller falls
behind (a slow batch, a GC pause) it may catch up by at most ``burst_seconds`` of
traffic, so a stall is never followed by an unbounded burst.

``behind()`` says how late a send is against the schedule, before any catch-up is
forgiven: what a stalled caller's next batch reports as its delay.

With ``sleep_quantum`` > 0 the pacer asks for a wait only once the schedule is at
least that far ahead, and then for all of it: bookings still follow the same
schedule, so the long-run rate is unchanged, but the caller sends in short bursts
and sleeps less often. A worker wants that: each wake-up starts on cold caches.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Pacer:
    def __init__(
        self,
        rate: float,
        *,
        burst_seconds: float = 0.25,
        sleep_quantum: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be > 0 bytes/s, got {rate!r}")
        if burst_seconds < 0:
            raise ValueError(f"burst_seconds must be >= 0, got {burst_seconds!r}")
        if sleep_quantum < 0:
            raise ValueError(f"sleep_quantum must be >= 0, got {sleep_quantum!r}")
        self.rate = float(rate)
        self.burst_seconds = float(burst_seconds)
        self.sleep_quantum = float(sleep_quantum)
        self._clock = clock
        self._sleep = sleep
        self._next = clock()

    @property
    def booked_until(self) -> float:
        """When the bytes booked so far are due to have gone, on ``clock``."""
        return self._next

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
        if self._next < earliest:
            self._next = earliest
        wait = self._next - now
        self._next += nbytes / self.rate
        return wait if wait > 0 and wait >= self.sleep_quantum else 0.0

    def acquire(self, nbytes: int) -> float:
        """Waits until ``nbytes`` may go; returns the time slept."""
        wait = self.delay(nbytes)
        if wait > 0:
            self._sleep(wait)
        return wait
