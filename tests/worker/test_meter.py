"""The meter on fake clocks: windows on the wall clock, partial ends, histograms."""

from __future__ import annotations

import pytest

from elastic_channels.monitor import histogram
from elastic_channels.worker.meter import Meter


class Clocks:
    """Monotonic time starts at 100; the wall clock is 1_700_000_002.5 then."""

    def __init__(self) -> None:
        self.mono = 100.0
        self.cpu_s = 0.0

    def clock(self) -> float:
        return self.mono

    def wall(self) -> float:
        return self.mono + 1_699_999_902.5

    def cpu(self) -> float:
        return self.cpu_s


def make(window_s: float = 5.0) -> tuple[Meter, Clocks]:
    c = Clocks()
    return Meter(window_s, clock=c.clock, wall=c.wall, cpu=c.cpu), c


def test_windows_start_on_multiples_of_the_window_since_the_epoch() -> None:
    meter, c = make(5.0)
    meter.record_sent(10, 1000)  # wall 1_700_000_002.5: in [..000, ..005)
    c.mono += 3.0  # wall ..005.5: the first window ended at ..005
    meter.record_sent(20, 2000)
    c.mono += 11.0  # wall ..016.5: windows [..005, ..010) and [..010, ..015) ended
    assert meter.window_due()
    lines = []
    while meter.window_due():
        lines.append(meter.close_window(0, 0, run_id="r", worker_id=1))
    lines.append(meter.close_window(0, 0, run_id="r", worker_id=1))  # the last: cut short
    starts = [w["window_start"] for w in lines]
    assert starts == [1_700_000_000.0, 1_700_000_005.0, 1_700_000_010.0, 1_700_000_015.0]
    assert [w["partial"] for w in lines] == [True, False, False, True]
    assert (lines[0]["start"], lines[0]["end"]) == (1_700_000_002.5, 1_700_000_005.0)
    assert (lines[1]["start"], lines[1]["end"]) == (1_700_000_005.0, 1_700_000_010.0)
    assert (lines[3]["start"], lines[3]["end"]) == (1_700_000_015.0, 1_700_000_016.5)
    assert [w["rows"] for w in lines] == [10, 20, 0, 0]  # an empty window is still reported
    assert lines[0]["rows_per_s"] == 4.0  # over the 2.5 s the partial window covered
    assert all(w["run_id"] == "r" and w["worker_id"] == 1 for w in lines)


def test_an_ack_counts_in_the_window_it_arrived_in() -> None:
    meter, c = make(5.0)
    c.mono += 2.0  # wall ..004.5
    arrived = c.mono
    c.mono += 1.0  # wall ..005.5, nothing rolled the window yet
    meter.record_acked(5, 500, 0.25, at=arrived)
    meter.record_acked(7, 700, 0.5)  # now: the next window
    first = meter.close_window(0, 0)
    second = meter.close_window(0, 0)
    assert (first["acked_rows"], first["acks"]) == (5, 1)
    assert (second["acked_rows"], second["acks"]) == (7, 1)
    assert second["partial"] is True


def test_each_window_carries_its_latencies_as_a_mergeable_histogram() -> None:
    meter, c = make(1.0)
    lat_a = [0.010, 0.020, 0.030, 0.400]
    lat_b = [0.050, 0.060, 1.500]
    for lat in lat_a:
        meter.record_acked(1, 10, lat)
    c.mono += 1.0
    for lat in lat_b:
        meter.record_acked(1, 10, lat)
    a, b = meter.close_window(0, 0), meter.close_window(0, 0)
    ha, hb = histogram.decode(a["ack_hist_us"]), histogram.decode(b["ack_hist_us"])
    assert ha.get_total_count() == 4 and hb.get_total_count() == 3
    assert histogram.percentile_ms(ha, 100) == pytest.approx(400, rel=1e-3)
    merged = histogram.merge([a["ack_hist_us"], b["ack_hist_us"]])
    everything = sorted(lat_a + lat_b)
    assert merged.get_total_count() == 7
    for q in (50, 99):  # nearest rank on all 7 latencies, to the histogram's 3 digits
        rank = max(1, -(-q * 7 // 100))
        exact_ms = everything[rank - 1] * 1e3
        assert histogram.percentile_ms(merged, q) == pytest.approx(exact_ms, rel=1e-3)
    # today's fields stay, exact for the worker alone
    assert (a["ack_p50_ms"], a["ack_max_ms"]) == (20.0, 400.0)


def test_behind_schedule_max_and_p99() -> None:
    meter, _ = make(5.0)
    for behind in [0.0] * 98 + [0.120, 2.0]:
        meter.record_sent(1, 100, behind)
    w = meter.close_window(0, 0)
    assert w["behind_max_ms"] == 2000.0
    assert w["behind_p99_ms"] == 120.0
    h = histogram.decode(w["behind_hist_us"])
    assert h.get_total_count() == 100
    summary = meter.summary(0)
    assert summary["behind_max_ms"] == 2000.0


def test_cpu_and_totals_follow_every_window() -> None:
    meter, c = make(2.0)
    meter.record_sent(3, 300)
    c.cpu_s += 0.5
    c.mono += 2.0
    meter.record_sent(4, 400)
    meter.record_resent(4)
    meter.record_sdk_retries(2)
    meter.record_error()
    lines = [meter.close_window(1, 10), meter.close_window(0, 0)]
    assert sum(w["rows"] for w in lines) == meter.totals.rows == 7
    assert [w["resent_batches"] for w in lines] == [0, 1]
    assert [w["sdk_retries"] for w in lines] == [0, 2]
    assert [w["errors"] for w in lines] == [0, 1]
    assert lines[0]["in_flight_bytes"] == 10
    # wall ..002.5 to ..004: 0.5 s of CPU in the 1.5 s the first window covered
    assert lines[0]["cpu_pct"] == pytest.approx(round(100 * 0.5 / 1.5, 1))


@pytest.mark.parametrize("window_s", [0, -1.0])
def test_bad_window_is_refused(window_s: float) -> None:
    with pytest.raises(ValueError, match="window_s"):
        Meter(window_s)


# --- on a schedule: targets, stages, warmup kept apart ------------------------------------


def scheduled(warmup_s: float = 1.0) -> tuple[Meter, Clocks, float]:
    """A meter whose schedule starts now, at wall ..005.0 (a window boundary): warmup
    (at 2 MB/s), 2 s at 2 MB/s, a 2 s ramp 2 -> 4 MB/s; 1 s windows."""
    from elastic_channels.worker.schedule import Schedule, Stage

    c = Clocks()
    c.mono += 2.5  # wall 1_700_000_005.0
    sched = Schedule([Stage(2, 2e6, 2e6), Stage(2, 2e6, 4e6)], warmup_s)
    meter = Meter(1.0, schedule=sched, clock=c.clock, wall=c.wall, cpu=c.cpu)
    return meter, c, c.wall()


def test_windows_carry_their_target_stage_and_warmup() -> None:
    meter, c, origin = scheduled()
    assert meter.origin == origin
    c.mono += 5.0
    lines = []
    while meter.window_due():
        lines.append(meter.close_window(0, 0, run_id="r", worker_id=0))
    assert [w["window_start"] - origin for w in lines] == [0, 1, 2, 3, 4]
    assert [w["warmup"] for w in lines] == [True, False, False, False, False]
    assert [w["stage"] for w in lines] == [-1, 0, 0, 1, 1]
    # a ramp's window: the schedule's mean over it
    assert [w["target_bps"] for w in lines] == [2e6, 2e6, 2e6, 2.5e6, 3.5e6]


def test_a_partial_windows_target_is_the_mean_over_the_part_it_covers() -> None:
    meter, c, origin = scheduled(warmup_s=0.0)
    c.mono += 2.5  # into the ramp by 0.5 s
    meter.close_window(0, 0)
    meter.close_window(0, 0)
    w = meter.close_window(0, 0)  # [..007, ..007.5): the first half second of the ramp
    assert (w["start"] - origin, w["end"] - origin, w["partial"]) == (2.0, 2.5, True)
    assert w["target_bps"] == 2.25e6 and w["stage"] == 1 and w["warmup"] is False


def test_the_summary_leaves_warmup_out_and_totals_each_stage() -> None:
    meter, c, origin = scheduled()
    meter.record_sent(10, 1000, stage=meter.stage_now())  # warmup
    assert meter.stage_now() == -1
    c.mono += 1.0
    c.cpu_s = 0.75  # CPU spent in warmup: not the run's
    meter.record_acked(10, 1000, 0.2, stage=-1)  # warmup's batch, acked after it
    meter.record_sent(20, 2000, stage=meter.stage_now())
    meter.record_error()
    c.mono += 2.0
    meter.record_sent(30, 3000, stage=meter.stage_now())
    meter.record_acked(20, 2000, 0.4, stage=0)
    c.mono += 2.0
    meter.end_mono = c.mono
    c.cpu_s = 1.75
    s = meter.summary(0)
    assert (s["rows_sent"], s["bytes_sent"], s["rows_acked"], s["bytes_acked"]) == (
        50, 5000, 20, 2000,
    )  # fmt: skip
    assert (s["warmup_rows_sent"], s["warmup_bytes_sent"]) == (10, 1000)
    assert (s["warmup_rows_acked"], s["warmup_bytes_acked"]) == (10, 1000)
    assert s["warmup_seconds"] == 1.0
    assert (s["send_start"], s["send_end"], s["seconds"]) == (origin + 1.0, origin + 5.0, 4.0)
    assert s["mb_per_s"] == round(2000 / 4.0 / 1e6, 3)
    assert s["ack_max_ms"] == 400.0  # the warmup batch's ack is not among the run's
    assert s["cpu_s"] == 1.0
    assert s["errors"] == 1  # counts are the whole run's
    assert s["target_bps"] == 2.5e6  # 2 s at 2 MB/s, then a ramp averaging 3 MB/s
    assert s["stages"] == [
        {"stage": 0, "seconds": 2, "target_bps": 2e6, "rows": 20, "bytes": 2000,
         "acked_rows": 20, "acked_bytes": 2000},
        {"stage": 1, "seconds": 2, "target_bps": 3e6, "rows": 30, "bytes": 3000,
         "acked_rows": 0, "acked_bytes": 0},
    ]  # fmt: skip


def test_a_run_stopped_in_warmup_has_no_sending_window() -> None:
    meter, c, _ = scheduled()
    meter.record_sent(10, 1000, stage=-1)
    c.mono += 0.5
    meter.end_mono = c.mono
    s = meter.summary(10)
    assert (s["send_start"], s["send_end"], s["seconds"]) == (None, None, 0.0)
    assert s["rows_sent"] == 0 and s["warmup_rows_sent"] == 10 and s["stages"][0]["rows"] == 0
    assert s["target_bps"] == 2e6  # the rate the run was to start at


def test_without_a_schedule_windows_say_no_target() -> None:
    meter, _ = make(5.0)
    w = meter.close_window(0, 0)
    assert (w["target_bps"], w["stage"], w["warmup"]) == (None, None, False)
    assert "stages" not in meter.summary(0)


def test_a_run_ending_on_a_boundary_leaves_no_empty_window_to_cut_short() -> None:
    meter, c = make(5.0)
    c.mono += 2.5  # wall ..005.0: a boundary
    meter.record_sent(10, 1000)
    c.mono += 5.0  # wall ..010.0: the run ends on the next boundary
    assert meter.nothing_left() is False  # the window [..005, ..010) waits
    lines = []
    while meter.window_due():
        lines.append(meter.close_window(0, 0))
    assert lines[-1]["rows"] == 10 and lines[-1]["end"] == 1_700_000_010.0
    c.mono += 0.001  # the drain: nothing happened in the new window
    assert meter.nothing_left() is True
    meter.record_acked(10, 1000, 0.2)  # an ack in it: it has something to say
    assert meter.nothing_left() is False


def test_a_window_begun_a_few_ms_late_is_whole_and_one_begun_later_partial() -> None:
    for late, partial in ((0.002, False), (0.04, False), (0.2, True)):
        c = Clocks()
        c.mono += 2.5 + late  # the meter starts at wall ..005 + late
        meter = Meter(5.0, clock=c.clock, wall=c.wall, cpu=c.cpu)
        meter.record_sent(10, 1000)
        c.mono += 5.0 - late  # wall ..010
        line = meter.close_window(0, 0)
        assert (line["window_start"], line["rows"]) == (1_700_000_005.0, 10)
        assert line["partial"] is partial, late


def test_billable_bytes_count_as_acked_in_windows_the_run_and_warmup() -> None:
    meter, c, _ = scheduled()
    meter.record_sent(10, 1000, stage=-1)
    c.mono += 1.0  # warmup over
    meter.record_acked(10, 1000, 0.2, stage=-1, billable=300)
    meter.record_sent(20, 2000, stage=0)
    meter.record_acked(20, 2000, 0.1, stage=0, billable=700)
    meter.record_acked(5, 500, 0.1, stage=0)  # a batch that knows no billable bytes: 0
    lines = []
    c.mono += 1.0
    while meter.window_due():
        lines.append(meter.close_window(0, 0))
    assert [w["billable_bytes"] for w in lines] == [0, 1000]  # as acked, not as sent
    meter.end_mono = c.mono
    s = meter.summary(0)
    assert (s["billable_bytes"], s["warmup_billable_bytes"]) == (700, 300)
