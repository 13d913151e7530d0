"""The search's judge: fed the run's fleet windows one by one, it keeps each step's
tally and says when a step broke.

Which step a window is of: its ``stage`` (the stage its end falls in), unless its
``target_bps`` per worker is the rate of the step before (a window that ends on the
step's boundary). Judged: the windows of a step after its first, that are neither
partial (a run's first and last) nor warmup. A judged window breaks its step when one
of its figures is over a bound, or fewer workers reported than the run has; a step's
achieved rate (its judged windows' acked bytes over the bytes asked for one ack latency
earlier: ``find_max_step.py``) is judged once a later step's window arrives, or at the
end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..measures import MB
from .find_max_plan import HOLD_FRACTION, SearchPlan
from .find_max_report import build_report
from .find_max_step import Break, StepTally

__all__ = ["Break", "Judge", "StepTally"]

#: A window's target per worker is a step's rate when within this share of it.
_SAME_RATE = 1e-3


class Judge:
    """Feed it the fleet windows in time order; ``done`` once a step broke."""

    def __init__(self, plan: SearchPlan, *, workers: int | None = None) -> None:
        self.plan = plan
        self.workers = workers
        self.rates = plan.steps_mbps
        self.steps = [
            StepTally(i, r, prev_mbps=self.rates[i - 1] if i else 0.0)
            for i, r in enumerate(self.rates)
        ]
        self.first_break: Break | None = None
        self._current = -1  # the latest step a window was seen of

    @property
    def done(self) -> bool:
        return self.first_break is not None

    def _step_of(self, w: Mapping[str, Any]) -> int | None:
        stage = w.get("stage")
        if not isinstance(stage, int) or isinstance(stage, bool) or stage < 0:
            return None
        # a window's target is the schedule's for every worker started (fleet/report.py)
        target, workers = w.get("target_bps"), self.workers or max(int(w.get("workers") or 1), 1)
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
        if self.done:
            return None
        if w.get("warmup"):  # sent at the first step's rate: what came before step 0
            self.steps[0].prev_mbps = self.rates[0]
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
        if tally.windows_seen == 1:  # it straddles the change: it only places the boundary
            tally.first_window(w, self.workers)
            return None
        if w.get("partial"):  # the run's last: too short to judge
            return None
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
        tally.lag_s = self._lag_s(tally)
        achieved = tally.achieved_mbps
        floor = HOLD_FRACTION * tally.target_mbps
        if achieved is not None and achieved < floor:
            return self._broke(tally, "mb_per_s", round(achieved, 3), round(floor, 3), None)
        return None

    def _lag_s(self, tally: StepTally) -> float:
        """The ack latency a step is judged with: the step before's median (its own for
        the first step), at most a step long."""
        before = self.steps[tally.step - 1].median_ack_s() if tally.step else None
        lag = before if before is not None else tally.median_ack_s()
        return min(lag or 0.0, self.plan.step_seconds)

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
