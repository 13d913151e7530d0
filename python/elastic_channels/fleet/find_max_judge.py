"""The search's judge: fed the run's fleet windows one by one, it keeps each step's
tally and says when a step broke.

Which step a window is of: its ``stage`` (the stage its end falls in), unless its
``target_bps`` per worker is the rate of the step before (a window that ends on the
step's boundary). Judged: the windows of a step after its first, that are neither
partial (a run's first and last) nor warmup. A judged window breaks its step when one
of its figures is over a bound, or fewer workers reported than the run has; a step's
achieved rate (its judged windows' acked bytes over the bytes they asked for) is judged
once a later step's window arrives, or at the end.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..measures import MB
from ..monitor import histogram
from .find_max_plan import HOLD_FRACTION, SearchPlan
from .find_max_report import build_report

__all__ = ["Break", "Judge", "StepTally"]

#: A window's target per worker is a step's rate when within this share of it.
_SAME_RATE = 1e-3


@dataclass(frozen=True)
class Break:
    """What stopped a step: a figure over its bound (the achieved rate, ``mb_per_s``,
    under its floor; ``workers`` under the run's count)."""

    step: int
    target_mbps: float
    bound: str
    figure: float
    limit: float
    window_start: float | None = None

    def describe(self) -> str:
        where = "" if self.window_start is None else f" in the window at {self.window_start:.0f}"
        if self.bound == "mb_per_s":
            return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): acked "
                    f"{self.figure:.3g} MB/s a worker, under {self.limit:.3g} "
                    f"({HOLD_FRACTION:.0%} of the step)")  # fmt: skip
        if self.bound == "windows":
            return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): no full window "
                    "after its first (a step must last at least two windows)")  # fmt: skip
        if self.bound == "workers":
            return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): "
                    f"{self.figure:g} of {self.limit:g} workers reported{where}")  # fmt: skip
        return (f"step {self.step} ({self.target_mbps:g} MB/s a worker): {self.bound} "
                f"{self.figure:g} over its bound {self.limit:g}{where}")  # fmt: skip


@dataclass
class StepTally:
    """One step's judged windows, added up."""

    step: int
    target_mbps: float
    windows_seen: int = 0
    windows: int = 0
    seconds: float = 0.0
    asked_bytes: float = 0.0
    sent_bytes: int = 0
    acked_bytes: int = 0
    cpu_s: float = 0.0
    errors: int = 0
    sdk_retries: int = 0
    rss_mib: float | None = None  # the highest per-worker mean over its windows
    worst: dict[str, float] = field(default_factory=dict)  # bound -> highest window figure
    ack_hists: list[str] = field(default_factory=list)
    behind_hists: list[str] = field(default_factory=list)
    broke: Break | None = None
    complete: bool = False

    def add(self, w: Mapping[str, Any], bounds: Mapping[str, float]) -> None:
        secs = max(float(w["end"]) - float(w["start"]), 0.0)
        workers = max(int(w.get("workers") or 1), 1)
        target = w.get("target_bps")
        per_worker = self.target_mbps * MB if target is None else float(target) / workers
        self.windows += 1
        self.seconds += secs
        self.asked_bytes += per_worker * workers * secs
        self.sent_bytes += int(w.get("bytes") or 0)
        self.acked_bytes += int(w.get("acked_bytes") or 0)
        self.cpu_s += float(w.get("cpu_pct") or 0.0) / 100 * secs
        self.errors += int(w.get("errors") or 0)
        self.sdk_retries += int(w.get("sdk_retries") or 0)
        if w.get("rss_mib") is not None:
            rss = float(w["rss_mib"]) / workers
            self.rss_mib = rss if self.rss_mib is None else max(self.rss_mib, rss)
        for key in bounds:
            value = w.get(key)
            if value is not None:
                self.worst[key] = max(self.worst.get(key, -math.inf), float(value))
        for key, into in (("ack_hist_us", self.ack_hists), ("behind_hist_us", self.behind_hists)):
            if w.get(key):
                into.append(str(w[key]))

    @property
    def achieved_mbps(self) -> float | None:
        """Acked MB/s a worker: the step's rate scaled by acked over asked bytes."""
        if self.asked_bytes <= 0:
            return None
        return self.target_mbps * self.acked_bytes / self.asked_bytes

    @property
    def held(self) -> bool:
        return self.complete and self.windows > 0 and self.broke is None

    def percentile_ms(self, which: str, q: float) -> float | None:
        hists = self.ack_hists if which == "ack" else self.behind_hists
        if hists:
            return histogram.percentile_ms(histogram.merge(hists), q)
        return self.worst.get(f"{which}_p99_ms") if q == 99 else None

    def figures(self) -> dict[str, Any]:
        gb = self.sent_bytes / 1e9
        return {
            "step": self.step,
            "target_mbps": self.target_mbps,
            "achieved_mbps": _round(self.achieved_mbps),
            "sent_mbps": _round(self.target_mbps * self.sent_bytes / self.asked_bytes)
            if self.asked_bytes > 0 else None,
            "windows": self.windows,
            "seconds": round(self.seconds, 3),
            "ack_p99_ms": self.percentile_ms("ack", 99),
            "behind_p99_ms": self.percentile_ms("behind", 99),
            "errors": self.errors,
            "sdk_retries": self.sdk_retries,
            "cpu_s_per_gb": round(self.cpu_s / gb, 3) if gb > 0 and self.cpu_s > 0 else None,
            "rss_mib": _round(self.rss_mib),
            "complete": self.complete,
            "held": self.held,
            "broke": None if self.broke is None else {
                "bound": self.broke.bound, "figure": self.broke.figure,
                "limit": self.broke.limit, "window_start": self.broke.window_start,
                "why": self.broke.describe(),
            },
        }  # fmt: skip


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


class Judge:
    """Feed it the fleet windows in time order; ``done`` once a step broke."""

    def __init__(self, plan: SearchPlan, *, workers: int | None = None) -> None:
        self.plan = plan
        self.workers = workers
        self.rates = plan.steps_mbps
        self.steps = [StepTally(i, r) for i, r in enumerate(self.rates)]
        self.first_break: Break | None = None
        self._current = -1  # the latest step a window was seen of

    @property
    def done(self) -> bool:
        return self.first_break is not None

    def _step_of(self, w: Mapping[str, Any]) -> int | None:
        stage = w.get("stage")
        if not isinstance(stage, int) or isinstance(stage, bool) or stage < 0:
            return None
        target, workers = w.get("target_bps"), max(int(w.get("workers") or 1), 1)
        if target is not None:
            per = float(target) / workers / MB
            for j in (stage, stage - 1):
                if (
                    0 <= j < len(self.rates)
                    and abs(per - self.rates[j]) <= _SAME_RATE * self.rates[j]
                ):
                    return j
        return stage if stage < len(self.rates) else None

    def feed(self, w: Mapping[str, Any]) -> Break | None:
        """Take one fleet window; the break it made known, if any (a bound over in it,
        or the achieved rate of a step it closed)."""
        if self.done or w.get("warmup"):
            return None
        step = self._step_of(w)
        if step is None or step < self._current:
            return None  # warmup, past the staircase, or late for a closed step
        found = None
        while self._current < step:  # every step before this one is over
            if self._current >= 0:
                found = found or self._close(self.steps[self._current])
            self._current += 1
        if found is not None:
            return found
        tally = self.steps[step]
        tally.windows_seen += 1
        if tally.windows_seen == 1 or w.get("partial"):
            return None  # a step's first window straddles the change; partial: too short
        tally.add(w, self.plan.bounds)
        return self._check_window(tally, w)

    def _check_window(self, tally: StepTally, w: Mapping[str, Any]) -> Break | None:
        start = w.get("window_start")
        at = None if start is None else float(start)
        reported = int(w.get("workers") or 0)
        if self.workers is not None and reported < self.workers:
            return self._broke(tally, "workers", reported, self.workers, at)
        for key, limit in self.plan.bounds.items():
            value = w.get(key)
            if value is not None and float(value) > limit:
                return self._broke(tally, key, float(value), limit, at)
        return None

    def _close(self, tally: StepTally) -> Break | None:
        """The step is over: judge its achieved rate."""
        tally.complete = True
        if tally.broke is not None:
            return None
        if tally.windows == 0:  # steps shorter than two windows (plan_from refuses them)
            return self._broke(tally, "windows", 0, 1, None)
        achieved = tally.achieved_mbps
        floor = HOLD_FRACTION * tally.target_mbps
        if achieved is not None and achieved < floor:
            return self._broke(tally, "mb_per_s", round(achieved, 3), round(floor, 3), None)
        return None

    def _broke(self, tally: StepTally, bound: str, figure: float, limit: float,
               at: float | None) -> Break:  # fmt: skip
        tally.broke = Break(tally.step, tally.target_mbps, bound, figure, limit, at)
        if self.first_break is None:
            self.first_break = tally.broke
        return tally.broke

    def report(
        self, *, ran_to_end: bool, context: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The result: see :func:`~.find_max_report.build_report`. ``ran_to_end``: the
        run completed its schedule, so its last step was held for a full step."""
        last = len(self.steps) - 1
        if ran_to_end and not self.done and self._current == last:
            self._close(self.steps[last])
        return build_report(self, ran_to_end=ran_to_end, context=context)
