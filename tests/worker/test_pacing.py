"""The pacer, driven by a fake clock: exact long-run rate, bounded catch-up."""

from __future__ import annotations

import pytest

from elastic_channels.worker.pacing import Pacer


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += seconds
        self.slept += seconds


def drive(pacer: Pacer, clock: FakeClock, batch: int, seconds: float, work_s: float = 0.0) -> int:
    """Send batches until `seconds` of fake time pass; returns bytes sent."""
    start, sent = clock.now, 0
    while True:
        pacer.acquire(batch)
        if clock.now - start >= seconds:
            return sent
        sent += batch
        clock.now += work_s  # time spent making the batch


@pytest.mark.parametrize("rate", [1e6, 92e6, 300e6])
@pytest.mark.parametrize("work_s", [0.0, 0.002])
def test_rate_holds_within_2_percent_over_60s(rate: float, work_s: float) -> None:
    clock = FakeClock()
    pacer = Pacer(rate, clock=clock, sleep=clock.sleep)
    sent = drive(pacer, clock, batch=1_000_000, seconds=60.0, work_s=work_s)
    assert sent / 60.0 == pytest.approx(rate, rel=0.02)


def test_oversleeping_is_paid_back() -> None:
    clock = FakeClock()

    def late_sleep(seconds: float) -> None:  # every sleep overshoots by 3 ms
        clock.sleep(seconds + 0.003)

    pacer = Pacer(50e6, clock=clock, sleep=late_sleep)
    sent = drive(pacer, clock, batch=500_000, seconds=60.0)
    assert sent / 60.0 == pytest.approx(50e6, rel=0.02)


def test_a_stall_allows_only_a_bounded_burst() -> None:
    clock = FakeClock()
    pacer = Pacer(10e6, burst_seconds=0.25, clock=clock, sleep=clock.sleep)
    pacer.acquire(1_000_000)
    clock.now += 30.0  # the caller stalled for 30 s
    free = 0
    while pacer.delay(100_000) == 0:
        free += 100_000
    # At most a quarter second of traffic (plus the booking in hand) goes unpaced.
    assert 2_500_000 <= free <= 2_600_000


def test_first_batch_goes_at_once_then_waits() -> None:
    clock = FakeClock()
    pacer = Pacer(1e6, clock=clock, sleep=clock.sleep)
    assert pacer.acquire(500_000) == 0
    assert pacer.acquire(500_000) == pytest.approx(0.5)
    assert pacer.acquire(1) == pytest.approx(0.5)


@pytest.mark.parametrize("rate", [0, -1.0, float("nan")])
def test_bad_rate_is_refused(rate: float) -> None:
    with pytest.raises(ValueError, match="rate"):
        Pacer(rate)


def test_bad_burst_is_refused() -> None:
    with pytest.raises(ValueError, match="burst_seconds"):
        Pacer(1.0, burst_seconds=-1)


@pytest.mark.parametrize("quantum", [0.0, 0.1])
def test_a_sleep_quantum_sends_in_bursts_at_the_same_rate(quantum: float) -> None:
    clock = FakeClock()
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.sleep(seconds)

    pacer = Pacer(92e6, sleep_quantum=quantum, clock=clock, sleep=sleep)
    sent = drive(pacer, clock, batch=1_000_000, seconds=60.0, work_s=0.0005)
    assert sent / 60.0 == pytest.approx(92e6, rel=0.02)
    slot = 1_000_000 / 92e6
    if quantum == 0:  # a sleep before every batch
        assert len(sleeps) > 0.9 * sent / 1_000_000 and max(sleeps) < 2 * slot
    else:  # ~9 batches a burst, sleeps of a quantum or more
        assert min(sleeps) >= quantum and len(sleeps) < sent / 1_000_000 / 8


def test_bad_sleep_quantum_is_refused() -> None:
    with pytest.raises(ValueError, match="sleep_quantum must be >= 0"):
        Pacer(1e6, sleep_quantum=-1)


def test_booked_until_is_when_the_booked_bytes_are_due() -> None:
    clock = FakeClock()
    pacer = Pacer(1000.0, sleep_quantum=0.25, clock=clock, sleep=clock.sleep)
    start = clock()
    assert pacer.booked_until == start
    pacer.delay(100)
    pacer.delay(150)
    assert pacer.booked_until == pytest.approx(start + 0.25)
    clock.sleep(5.0)  # idle: a stall may be caught up by burst_seconds only
    pacer.delay(100)
    assert pacer.booked_until == pytest.approx(clock() - 0.25 + 0.1)


def test_behind_counts_a_stall_once_then_follows_the_schedule() -> None:
    clock = FakeClock()
    pacer = Pacer(1e6, burst_seconds=0.25, clock=clock, sleep=clock.sleep)
    assert pacer.behind() == 0.0
    pacer.acquire(100_000)  # slot at 1000.0, the next at 1000.1
    assert pacer.behind() == 0.0  # sent on time
    clock.now += 3.0  # stalled: the next slot was 1000.1, now it is 1003.0
    assert pacer.behind() == pytest.approx(2.9)
    pacer.delay(100_000)  # the late batch books; the schedule forgives all but 0.25 s
    assert pacer.behind() == pytest.approx(0.15)
    for _ in range(5):  # the bounded catch-up burst goes out, then sends are on time
        pacer.delay(100_000)
    assert pacer.behind() == 0.0


def test_behind_is_zero_while_ahead_of_schedule() -> None:
    clock = FakeClock()
    pacer = Pacer(1e6, sleep_quantum=0.25, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        assert pacer.behind() == 0.0
        assert pacer.delay(100_000) == 0.0  # under the quantum ahead: no sleep asked
