"""The load shape: a schedule's math, and the pacer following it on a fake clock.

The pacer must book, over each stage, exactly the integral of the stage's rate (a
ramp's too), send each batch at its slot on the schedule, and after a stall skip all
but ``burst_seconds`` of it, the skipped bytes accounted for exactly."""

from __future__ import annotations

import itertools
import math

import pytest

from elastic_channels.worker.pacing import Pacer
from elastic_channels.worker.schedule import WARMUP, Schedule, Stage, parse_stages, stages_json
from elastic_channels.worker.settings import ConfigError

#: 1 s warmup at 10 kB/s, 2 s at 10 kB/s, a 3 s ramp up to 40 kB/s, a 2 s ramp down to
#: 5 kB/s, 1 s at 20 kB/s: every stage's integral a whole number of 500-byte batches.
STAGES = [Stage(2, 1e4, 1e4), Stage(3, 1e4, 4e4), Stage(2, 4e4, 5e3), Stage(1, 2e4, 2e4)]
INTEGRALS = [10_000, 20_000, 75_000, 45_000, 20_000]  # warmup first
BATCH = 500


def schedule() -> Schedule:
    return Schedule(STAGES, warmup_s=1.0)


# --- the schedule's math ----------------------------------------------------------------


def test_the_integral_at_each_boundary_is_the_sum_of_the_stages_before() -> None:
    s = schedule()
    assert s.end == 9.0 and s.total_bytes == sum(INTEGRALS)
    boundaries = [0.0, 1.0, 3.0, 6.0, 8.0, 9.0]
    for i, t in enumerate(boundaries):
        assert s.bytes_until(t) == pytest.approx(sum(INTEGRALS[:i]), abs=1e-6)
    # inside a ramp: 1e4 * 1.5 + (3e4 / 3) * 1.5**2 / 2
    assert s.bytes_until(4.5) == pytest.approx(30_000 + 15_000 + 11_250)
    assert s.rate_at(4.5) == pytest.approx(2.5e4)
    assert s.rate_at(7.0) == pytest.approx(2.25e4)  # halfway down from 40k to 5k


def test_time_for_inverts_bytes_until_on_ramps_up_and_down() -> None:
    s = schedule()
    for t in [0.0, 0.3, 1.0, 2.2, 3.0, 3.7, 5.9, 6.0, 6.5, 7.99, 8.5, 9.0, 11.0]:
        assert s.time_for(s.bytes_until(t)) == pytest.approx(t, abs=1e-9)


def test_stages_warmup_and_window_ends() -> None:
    s = schedule()
    assert [s.stage_at(t) for t in (0.0, 0.99, 1.0, 2.99, 3.0, 8.5, 100.0)] == [
        WARMUP, WARMUP, 0, 0, 1, 3, 3,
    ]  # fmt: skip
    # A window ending on a boundary belongs to the stage before it.
    assert [s.stage_ending_at(t) for t in (1.0, 3.0, 3.5, 9.0)] == [WARMUP, 0, 1, 3]
    assert s.in_warmup(1.0) and not s.in_warmup(1.5)
    assert not Schedule(STAGES).in_warmup(0.5)  # no warmup, nothing is warmup
    assert [s.stage_start(i) for i in range(4)] == [1.0, 3.0, 6.0, 8.0]


def test_mean_rate_over_a_stretch_counts_nothing_outside_the_schedule() -> None:
    s = schedule()
    assert s.mean_bps(3.0, 6.0) == pytest.approx(2.5e4)  # the ramp's mean
    assert s.mean_bps(3.0, 4.0) == pytest.approx(1.5e4)
    assert s.mean_bps(8.5, 9.5) == pytest.approx(1e4)  # half of it past the end
    assert s.mean_bps(10.0, 11.0) == 0.0


def test_warmup_is_stretched_to_end_on_a_window_boundary() -> None:
    s = schedule()
    assert s.aligned(1_700_000_000.0, 5.0).warmup_s == 5.0  # from a boundary: whole windows
    assert s.aligned(1_700_000_000.0, 1.0).warmup_s == 1.0  # already whole
    assert s.aligned(1_700_000_000.3, 1.0).warmup_s == pytest.approx(1.7)
    assert Schedule(STAGES).aligned(1_700_000_000.3, 1.0).warmup_s == 0.0  # none stays none
    assert s.aligned(1_700_000_000.0, 5.0).stages == s.stages


def test_a_channels_share_scales_every_rate() -> None:
    half = schedule().scaled(0.5)
    assert half.end == 9.0 and half.warmup_s == 1.0
    assert half.total_bytes == pytest.approx(sum(INTEGRALS) / 2)
    assert half.stages[1] == Stage(3, 5e3, 2e4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "must be a non-empty JSON list"),
        ("{}", "must be a non-empty JSON list"),
        ("not json", "is not JSON"),
        ('[{"seconds": 1, "from_bps": 1}]', r"stages\[0\]\.to_bps is missing"),
        ('[{"seconds": 1, "from_bps": 1, "to_bps": 1}, 5]', r"stages\[1\] must be an object"),
        ('[{"seconds": 0, "from_bps": 1, "to_bps": 1}]', r"stages\[0\]\.seconds must be a finite"),
        ('[{"seconds": 1, "from_bps": -1, "to_bps": 1}]', r"from_bps must be a finite number > 0"),
        ('[{"seconds": 1, "from_bps": 1, "to_bps": Infinity}]', r"to_bps must be a finite"),
        ('[{"seconds": 1, "from_bps": 1, "to_bps": true}]', r"to_bps must be a finite"),
        ('[{"seconds": 1, "from_bps": 1, "to_bps": 1, "mbps": 2}]', "unknown key 'mbps'"),
    ],
)
def test_bad_stages_are_refused_naming_the_stage_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        parse_stages(text)
    assert str(e.value).startswith("--stages (STAGES)")


def test_stages_round_trip_through_their_json() -> None:
    assert parse_stages(stages_json(STAGES)) == tuple(STAGES)
    as_dicts = [{"seconds": 2, "from_bps": 5, "to_bps": 6}]
    assert parse_stages(stages_json(as_dicts)) == (Stage(2, 5, 6),)


# --- the pacer along it --------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += seconds


def drive(stall_at: float | None = None, stall_s: float = 1.0):
    """Send 500-byte batches along ``schedule()`` until its end; the caller stalls
    ``stall_s`` once, right after the send at ``stall_at`` (schedule seconds). Returns
    the pacer, and each send's (schedule time, byte position it starts at)."""
    clock = FakeClock()
    sched = schedule()
    pacer = Pacer(sched, origin=clock.now, burst_seconds=0.25, clock=clock, sleep=clock.sleep)
    sends: list[tuple[float, float]] = []
    for _ in range(10_000):
        pacer.acquire(BATCH)
        t = clock.now - pacer.origin
        if t >= sched.end - 1e-9:
            return pacer, sends
        sends.append((t, pacer.position - BATCH))
        if stall_at is not None and abs(t - stall_at) < 1e-9:
            clock.now += stall_s
    raise AssertionError("the schedule never ended")


def sent_per_stage(sends: list[tuple[float, float]]) -> list[int]:
    """Bytes sent in each segment (warmup, then the stages) by the time they went."""
    edges = [0.0, 1.0, 3.0, 6.0, 8.0, 9.0]
    out = [0] * 5
    for t, _ in sends:
        seg = max(i for i in range(5) if t + 1e-6 >= edges[i])
        out[seg] += BATCH
    return out


def test_bytes_sent_over_each_stage_are_its_integral_exactly() -> None:
    pacer, sends = drive()
    assert sent_per_stage(sends) == INTEGRALS
    assert pacer.skipped_bytes == 0
    sched = schedule()
    for t, position in sends:  # each batch goes at its own slot: on time, never early
        assert t == pytest.approx(sched.time_for(position), abs=1e-9)


def test_a_stall_is_caught_up_by_the_burst_only_and_the_rest_is_skipped_exactly() -> None:
    # Stalled 1 s after the send at 1.5 s (10 kB/s): the next slot was 1.55 s, the
    # caller is back at 2.5 s, and the pacer catches up from 2.25 s on. Skipped: the
    # schedule from 1.55 s to 2.25 s, 7000 bytes; the stage after it is untouched.
    pacer, sends = drive(stall_at=1.5)
    assert pacer.skipped_bytes == pytest.approx(7_000)
    per_stage = sent_per_stage(sends)
    assert per_stage == [10_000, 20_000 - 7_000, *INTEGRALS[2:]]
    burst = [t for t, _ in sends if abs(t - 2.5) < 1e-9]
    # 0.25 s at 10 kB/s (5 batches) at once, and the one due at 2.5 s itself; no more
    assert len(burst) == 6
    # Once caught up, sends follow the schedule's slots again, skipped bytes and all.
    sched = schedule()
    for t, position in sends:
        if t > 2.5 + 1e-9:
            assert t == pytest.approx(sched.time_for(position), abs=1e-9)


def test_a_sleep_quantum_keeps_each_stages_bytes() -> None:
    clock = FakeClock()
    sched = schedule()
    pacer = Pacer(sched, origin=clock.now, sleep_quantum=0.1, clock=clock, sleep=clock.sleep)
    booked = 0
    while pacer.booked_until - pacer.origin < sched.stage_start(2) - 1e-9:
        pacer.acquire(BATCH)
        booked += BATCH
    # Sends run up to a quantum ahead, but what is booked by the end of stage 1 is the
    # integral of warmup and stages 0 and 1.
    assert booked == sum(INTEGRALS[:3])
    assert clock.now - pacer.origin <= sched.stage_start(2)


def test_a_late_start_joins_the_schedule_where_it_stands() -> None:
    clock = FakeClock()
    origin = clock.now
    clock.now += 4.5  # the channel opened 4.5 s after the agreed start: mid-ramp
    pacer = Pacer(schedule(), origin=origin, burst_seconds=0.0, clock=clock, sleep=clock.sleep)
    pacer.acquire(BATCH)
    start = pacer.position - BATCH
    assert start == pytest.approx(schedule().bytes_until(4.5))  # not from the beginning
    sent = 0
    while clock.now - origin < 5.5:
        pacer.acquire(BATCH)
        sent += BATCH
    # a second of the ramp around 5 s: 1e4 + 1e4 * (t - 3), so 2.5e4 .. 3.5e4 B/s
    assert sent == pytest.approx(schedule().bytes_between(4.5, 5.5), abs=BATCH)


def test_a_constant_rate_is_a_one_stage_schedule() -> None:
    clock = FakeClock()
    pacer = Pacer(1e6, clock=clock, sleep=clock.sleep)
    for _ in range(1000):
        pacer.acquire(10_000)
    assert clock.now - 1000.0 == pytest.approx(9.99)
    assert math.isclose(pacer.position, 10_000_000)


def send_like_the_worker(window_phase: float | None) -> tuple[Schedule, list[float]]:
    """Send 1000-byte batches as the worker's loop does (send, then book the batch and
    sleep what the pacer asks) with a 0.25 s sleep quantum, over a schedule whose last
    stage starts between window boundaries; returns each send's schedule time."""
    sched = Schedule([Stage(2, 1e5, 1e5), Stage(2, 1e5, 3e5), Stage(1.5, 2e5, 2e5)], warmup_s=1.0)
    clock = FakeClock()
    pacer = Pacer(
        sched, origin=clock.now, sleep_quantum=0.25, clock=clock, sleep=clock.sleep,
        window_s=None if window_phase is None else 1.0,
        window_phase=clock.now + (window_phase or 0.0),
    )  # fmt: skip
    sent: list[float] = []
    while clock.now - pacer.origin < sched.end - 1e-9:
        sent.append(clock.now - pacer.origin)
        wait = pacer.delay(1000)
        if wait > 0:
            clock.sleep(wait)
    return sched, sent


def test_a_sleep_quantum_never_runs_ahead_into_the_next_window_or_stage() -> None:
    sched, sent = send_like_the_worker(window_phase=0.0)

    def sent_in(a: float, b: float) -> int:
        return 1000 * sum(1 for t in sent if a - 1e-9 <= t < b - 1e-9)

    # Each 1 s window sends what the schedule gives it, to a batch: not up to a quarter
    # second of the next window's (25 to 75 kB here).
    for k in range(7):
        due = sched.bytes_between(k, k + 1)
        assert abs(sent_in(k, k + 1) - due) <= 1000, (k, sent_in(k, k + 1), due)
    # And each stage (6.5 s is no window boundary) gets its own integral, to a batch.
    edges = [0.0, *sched.boundaries, sched.end]
    for a, b in itertools.pairwise(edges):
        assert abs(sent_in(a, b) - sched.bytes_between(a, b)) <= 1000, (a, b)
