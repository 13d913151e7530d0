"""The search for the highest rate held, on synthetic fleet windows: the plan and its
stages, the judge step by step, and the report. No worker, no emulator: windows are made
here as ``fleet/report.aggregate_window`` makes them, from a schedule and a model of
what the service lets through."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from elastic_channels.fleet.find_max import (
    Judge,
    OnlineSearch,
    SearchPlan,
    plan_from,
    run_search,
    stages_for,
)
from elastic_channels.fleet.find_max_report import describe
from elastic_channels.scenario.model import Search, SearchBounds

MB = 1e6


def plan(start=2.0, step=1.0, top=8.0, seconds=4.0, **bounds) -> SearchPlan:
    return plan_from(
        {"start_mbps": start, "step_mbps": step, "max_mbps": top, "step_seconds": seconds,
         "bounds": {"behind_p99_ms": 1000, "errors": 0, **bounds}}
    )  # fmt: skip


def windows(
    p: SearchPlan,
    *,
    window_s: float = 1.0,
    offset: float = 0.3,
    workers: int = 2,
    acked: Callable[[float], float] = lambda target: target,
    extra: Callable[[int, float], dict] = lambda i, t: {},
    warmup_s: float = 0.0,
    until: float | None = None,
    lag_s: float = 0.0,
    ack_p50_ms: Callable[[float], float] | None = None,
) -> list[dict]:
    """Fleet windows of a run of ``p``: the schedule starts ``offset`` s into a window
    (after ``warmup_s`` of warmup); ``acked(target MB/s a worker)`` is the MB/s a worker
    gets acked, ``lag_s`` after the bytes were asked for; ``ack_p50_ms(target)`` the
    median ack latency a window reports (default: the lag); ``extra(index, t)``
    overrides figures of a window."""
    rates = p.steps_mbps
    t0 = 1000.0 + offset  # the schedule's start (warmup before it)
    end = t0 + p.seconds if until is None else t0 + until
    first = t0 - warmup_s

    def rate_at(t: float) -> float:
        k = min(int((t - t0) // p.step_seconds), len(rates) - 1)
        return rates[0] if t < t0 else rates[k]

    def sent_at(t: float) -> float:  # nothing before the run's first window
        return 0.0 if t < first else rate_at(t)

    def mean(f: Callable[[float], float], a: float, b: float, n: int = 200) -> float:
        return sum(f(a + (j + 0.5) * (b - a) / n) for j in range(n)) / n

    out = []
    ws = math.floor(first / window_s) * window_s
    i = 0
    while ws < end:
        start, stop = max(ws, first), min(ws + window_s, end)
        target = mean(rate_at, start, stop)  # over the part covered
        got = mean(lambda t: acked(sent_at(t)) if sent_at(t) else 0.0, start - lag_s, stop - lag_s)
        p50 = lag_s * 1000 if ack_p50_ms is None else ack_p50_ms(target)
        stage = -1 if stop <= t0 else min(int((stop - t0) // p.step_seconds), len(rates) - 1)
        secs = stop - start
        w = {
            "window_start": ws, "start": start, "end": stop,
            "partial": start > ws or stop < ws + window_s, "warmup": stop <= t0,
            "stage": stage, "workers": workers,
            "target_bps": target * MB * workers, "bytes": int(target * MB * workers * secs),
            "acked_bytes": int(got * MB * workers * secs),
            "mb_per_s": target * workers, "behind_p99_ms": 2.0, "ack_p99_ms": 700.0,
            "ack_p50_ms": p50,
            "errors": 0, "sdk_retries": 0, "cpu_pct": 30.0 * workers,
            "rss_mib": 90.0 * workers,
        }  # fmt: skip
        w.update(extra(i, ws))
        out.append(w)
        ws += window_s
        i += 1
    return out


def judge_all(p: SearchPlan, ws: list[dict], *, ran_to_end=True, workers=None) -> dict:
    judge = Judge(p, workers=workers)
    for w in ws:
        judge.feed(w)
    return judge.report(ran_to_end=ran_to_end)


def capped(limit: float) -> Callable[[float], float]:
    return lambda target: min(target, limit)


# --- the plan ----------------------------------------------------------------------------


def test_the_staircase_and_its_stages():
    p = plan(2, 1, 6, 3)
    assert p.steps_mbps == [2, 3, 4, 5, 6] and p.seconds == 15
    assert stages_for(p)[0] == {"seconds": 3, "from_bps": 2e6, "to_bps": 2e6}
    assert [s["to_bps"] for s in stages_for(p)] == [2e6, 3e6, 4e6, 5e6, 6e6]
    assert plan(0.1, 0.1, 0.3).steps_mbps == [0.1, 0.2, 0.3]  # no float drift drops the top
    assert plan(5, 5, 12).steps_mbps == [5, 10]  # the top only when on a step


def test_a_scenario_search_block_and_its_defaults():
    p = plan_from(Search(start_mbps=3, bounds=SearchBounds(ack_p99_ms=2000, errors=None)))
    assert (p.start_mbps, p.step_mbps, p.max_mbps, p.step_seconds) == (3, 5, 200, 10)
    assert dict(p.bounds) == {"behind_p99_ms": 1000, "ack_p99_ms": 2000}
    assert dict(plan_from({}).bounds) == {"behind_p99_ms": 1000, "errors": 0}
    assert dict(plan_from({"bounds": {"errors": None}}).bounds) == {"behind_p99_ms": 1000}


@pytest.mark.parametrize(
    ("search", "window", "message"),
    [
        ({"step_mbps": 0}, None, r"search\.step_mbps: expected a number > 0, got 0"),
        ({"start_mbps": "fast"}, None, r"search\.start_mbps: expected a number > 0"),
        ({"start_mbps": float("nan")}, None, r"search\.start_mbps"),
        ({"start_mbps": 10, "max_mbps": 5}, None, r"search\.max_mbps: 5 is below"),
        ({"start_mbps": 1, "step_mbps": 0.001}, None, r"search\.max_mbps: .* at most 1000"),
        ({"speed": 1}, None, r"search: unknown key\(s\) speed"),
        ({"bounds": {"lag": 1}}, None, r"search\.bounds: unknown bound 'lag'"),
        ({"bounds": {"errors": -1}}, None, r"search\.bounds\.errors: expected a number >= 0"),
        ({"step_seconds": 9}, 5.0, r"search\.step_seconds: 9 s is under two windows of 5 s"),
    ],
)
def test_a_bad_search_is_refused_naming_the_key(search, window, message):
    with pytest.raises(ValueError, match=message):
        plan_from(search, window_seconds=window)


# --- the judge -----------------------------------------------------------------------------


def test_a_limit_is_found_within_a_step_and_named():
    p = plan()
    report = judge_all(p, windows(p, acked=capped(4.5)), workers=2)
    assert report["held_mbps"] == 4
    stop = report["stopped_by"]
    assert (stop["step"], stop["target_mbps"], stop["bound"]) == (3, 5, "mb_per_s")
    assert stop["figure"] == pytest.approx(4.5, abs=0.01) and stop["limit"] == 4.75
    assert [s["held"] for s in report["steps"]] == [True, True, True, False]
    assert report["held_achieved_mbps"] == pytest.approx(4, abs=0.01)
    assert report["cpu_s_per_gb"] == pytest.approx(0.3 / 0.004, rel=0.01)
    assert report["rss_mib"] == 90
    assert "step 3 (5 MB/s a worker): acked 4.5 MB/s a worker" in report["ended"]


def test_a_rate_only_asked_for_is_not_held_omb_pull_329():
    """The workers send at every step's rate without falling behind (their in-flight
    allowance absorbs it) and nothing errs, but the service acks at most 4.2 MB/s: the
    search must not settle on a rate the acks never reached."""
    p = plan()
    report = judge_all(p, windows(p, acked=capped(4.2)))
    assert report["held_mbps"] == 4
    assert report["stopped_by"]["bound"] == "mb_per_s"
    assert all(s["sent_mbps"] == pytest.approx(s["target_mbps"]) for s in report["steps"])


def test_acks_a_latency_behind_the_sends_do_not_fail_a_step_that_holds():
    """Right after a step up, the acks that come in are of bytes sent before it, at the
    lower rate: judged against the schedule one ack latency earlier, every step holds.
    (Against the schedule itself, 3 -> 4 MB/s would come out at 93%.)"""
    p = plan(top=6)
    report = judge_all(p, windows(p, lag_s=1.5))
    assert report["held_mbps"] == 6 and report["stopped_by"] is None
    step = report["steps"][2]
    assert step["ack_lag_ms"] == 1500 and step["achieved_mbps"] == pytest.approx(4, rel=0.01)
    assert step["acked_mbps"] < 0.95 * 4  # as counted, before the lag is taken into account


def test_a_throttled_steps_own_long_latency_does_not_excuse_it():
    """Over the limit the acks fall ever further behind (a median of 3 s): the step is
    judged with the latency of the step before, which held, and still breaks."""
    p = plan()
    report = judge_all(
        p,
        windows(p, acked=capped(4.5), lag_s=0.5,
                ack_p50_ms=lambda target: 3000.0 if target > 4.5 else 500.0),
    )  # fmt: skip
    assert report["held_mbps"] == 4 and report["stopped_by"]["step"] == 3
    assert report["steps"][3]["ack_lag_ms"] == 500


def test_no_step_after_the_first_break_counts():
    """Fed every window (the workers were not stopped), a step above the break that
    happens to be acked in full (7 MB/s) does not lift the answer."""
    p = plan()

    def acked(target):
        return target if target in (2, 3, 4, 7) else 3.0

    judge = Judge(p)
    for w in windows(p, acked=acked):
        judge.feed(w)
    assert judge.done
    report = judge.report(ran_to_end=True)
    assert report["held_mbps"] == 4 and report["stopped_by"]["step"] == 3
    assert [s["step"] for s in report["steps"]] == [0, 1, 2, 3]  # nothing judged after


def test_one_noisy_window_where_the_step_changes_or_at_the_end_is_not_judged():
    p = plan(top=4)

    def spike(i, ws):  # the first window of each step, and the run's last (partial)
        starts = [1000.0 + 4 * k for k in range(3)]
        return {"behind_p99_ms": 5000.0} if ws in starts or ws == 1012.0 else {}

    report = judge_all(p, windows(p, extra=spike))
    assert report["held_mbps"] == 4 and report["stopped_by"] is None


def test_one_noisy_window_inside_a_step_breaks_it_and_is_named():
    p = plan(top=4)
    noisy = 1005.0  # a full window inside step 1

    def spike(i, ws):
        return {"behind_p99_ms": 1500.0} if ws == noisy else {}

    report = judge_all(p, windows(p, extra=spike))
    assert report["held_mbps"] == 2
    stop = report["stopped_by"]
    assert (stop["bound"], stop["figure"], stop["limit"]) == ("behind_p99_ms", 1500, 1000)
    assert stop["window_start"] == noisy
    assert "in the window at 1005" in report["ended"]


def test_one_window_of_bunched_acks_does_not_lift_a_throttled_step():
    p = plan(start=6, top=6, seconds=7)
    burst = 1003.0

    def acks(i, ws):  # 4 MB/s a worker acked, one window acking 2 s worth at once
        target = 6 * 2 * MB
        return {"acked_bytes": int(target * (4 / 6) * (3 if ws == burst else 1))}

    report = judge_all(p, windows(p, extra=acks))
    assert report["held_mbps"] is None and report["stopped_by"]["bound"] == "mb_per_s"


def test_the_top_reached_without_a_break():
    p = plan(top=5)
    report = judge_all(p, windows(p))
    assert report["held_mbps"] == 5 and report["stopped_by"] is None
    assert report["ended"].startswith("max_mbps reached without a break")
    cut = judge_all(p, windows(p), ran_to_end=False)  # the run did not finish its last step
    assert cut["held_mbps"] == 4 and cut["stopped_by"] is None
    assert cut["ended"].startswith("the run ended before")


def test_windows_that_end_on_a_step_boundary_count_for_their_own_step():
    """Windows lined up with the steps (offset 0): the one ending on a boundary is
    labelled with the next stage but its target is this step's."""
    p = plan(top=5, seconds=2.0)  # two windows a step: one judged
    report = judge_all(p, windows(p, offset=0.0))
    assert report["held_mbps"] == 5
    assert [s["windows"] for s in report["steps"]] == [1, 1, 1, 1]


def test_warmup_windows_and_bounds_set_to_none_are_left_out():
    p = plan(top=3, errors=None)
    ws = windows(p, warmup_s=3, extra=lambda i, t: {"errors": 1, "ack_p99_ms": 9e9})
    report = judge_all(p, ws)
    assert report["held_mbps"] == 3 and report["steps"][0]["errors"] > 0


def test_a_worker_missing_from_a_window_breaks_the_step():
    p = plan(top=4)
    ws = windows(p, extra=lambda i, t: {"workers": 1} if t == 1006.0 else {})
    report = judge_all(p, ws, workers=2)
    assert report["held_mbps"] == 2
    assert report["stopped_by"]["bound"] == "workers"


def test_run_search_stops_the_workers_once_and_reports():
    p = plan()
    stops = []
    report = run_search(p, iter(windows(p, acked=capped(4.5))), lambda: stops.append(1))
    assert stops == [1]
    assert report["held_mbps"] == 4 and report["ran_to_end"] is False
    text = describe(report)
    assert "highest rate held: 4 MB/s a worker" in text
    assert "acked 4.5 MB/s a worker, under 4.75" in text
    assert len(text.splitlines()) == 3 + len(report["steps"])


def test_an_online_search_stops_once_and_its_last_step_needs_the_run_to_end():
    p = plan(top=6)
    stops = []
    search = OnlineSearch(p, lambda: stops.append(1), workers=2)
    for w in windows(p, acked=capped(4.5)):
        search.on_window(w)
    assert stops == [1] and search.stopped
    assert search.report(ran_to_end=True)["ran_to_end"] is False  # stopped: not to the end
    clean = OnlineSearch(p, lambda: stops.append(2))
    for w in windows(p):
        clean.on_window(w)
    assert stops == [1] and not clean.stopped
    assert clean.report(ran_to_end=False)["held_mbps"] == 5  # the last step not seen out
    assert clean.report(ran_to_end=True)["held_mbps"] == 6


def test_nothing_held_when_the_first_step_breaks():
    p = plan()
    report = judge_all(p, windows(p, acked=capped(1.0)))
    assert report["held_mbps"] is None and report["cpu_s_per_gb"] is None
    assert "none (the first step did not hold)" in describe(report)


def test_a_window_missing_a_dead_worker_is_still_of_its_step() -> None:
    # the fleet window's target is the schedule's for both workers started (report.py):
    # with one of two reporting, the step is read off the run's workers, not those left
    p = plan(start=2.0, step=1.0, top=4.0)
    judge = Judge(p, workers=2)
    # a window that ends on step 2's boundary, at step 1's rate (3 MB/s a worker, 6 for two)
    edge = {**windows(p, workers=2)[9], "stage": 2, "target_bps": 6e6}
    assert judge._step_of(edge) == 1
    assert judge._step_of({**edge, "workers": 1}) == 1  # one died: still step 1's window
