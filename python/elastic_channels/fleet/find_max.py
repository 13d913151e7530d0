"""The highest rate held: a staircase of rates, judged window by window, until a bound
breaks (``run --find-max``, or a scenario's ``search`` block; docs/FIND_MAX.md).

The search is pure: :func:`plan_from` checks a search block, :func:`stages_for` turns it
into the workers' ``--stages`` (per worker, bytes/s), :class:`~.find_max_judge.Judge`
reads the run's fleet windows as they come (``fleet/report.aggregate_window``) and says
when a step broke so the runner can stop the workers, and its ``report`` is the result:
the highest step held for a full step, the bound that stopped the search with its
figure, and every step's figures. :func:`run_search` is all of that around one run.

A step holds when every full window of it after its first keeps every bound, and the
workers' acked bytes over those windows are at least 95% of what the step asked: a rate
only asked for is not a rate held (OpenMessaging Benchmark's pull #329 fixed a search
that settled on a rate its producers never reached). The search stops at the first step
that does not hold; no later step counts.

:class:`OnlineSearch` is the same for a runner that pushes windows (``on_window``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .find_max_judge import Break, Judge, StepTally
from .find_max_plan import (
    BOUND_KEYS,
    HOLD_FRACTION,
    MAX_STEPS,
    SearchPlan,
    plan_from,
    stages_for,
)

__all__ = [
    "BOUND_KEYS", "HOLD_FRACTION", "MAX_STEPS", "Break", "Judge", "OnlineSearch", "SearchPlan",
    "StepTally", "plan_from", "run_search", "stages_for",
]  # fmt: skip


class OnlineSearch:
    """The search around a run that pushes its fleet windows (``fleet/watch.watch``
    emits one when every live worker has reported it): ``on_window`` each, in time order;
    ``stop()`` is called once, at the first break (the runner SIGTERMs its workers: they
    drain); ``report`` at the end."""

    def __init__(
        self, plan: SearchPlan, stop: Callable[[], None], *, workers: int | None = None
    ) -> None:
        self.judge = Judge(plan, workers=workers)
        self._stop = stop
        self.stopped = False

    def on_window(self, window: Mapping[str, Any]) -> None:
        self.judge.feed(window)
        if self.judge.done and not self.stopped:
            self.stopped = True
            self._stop()

    def report(
        self, *, ran_to_end: bool, context: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The result (``find_max_report``). ``ran_to_end``: every worker completed its
        schedule (then the last step was held for a full step); False once stopped."""
        return self.judge.report(ran_to_end=ran_to_end and not self.stopped, context=context)


def run_search(
    plan: SearchPlan,
    windows: Iterable[Mapping[str, Any]],
    stop: Callable[[], None],
    *,
    workers: int | None = None,
    ran_to_end: Callable[[], bool] = lambda: True,
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Judge a run's fleet windows as they come (in time order; the iterable ends when
    the run does), call ``stop()`` once when a step breaks (the runner SIGTERMs its
    workers: they drain), and return the report. ``workers``: how many should report in
    every window (fewer breaks the step); ``ran_to_end()``: asked at the end, whether the
    run completed its schedule (then its last step was held for a full step);
    ``context``: what the report says about the run (see ``find_max_report``)."""
    search = OnlineSearch(plan, stop, workers=workers)
    for window in windows:
        search.on_window(window)
    return search.report(ran_to_end=not search.stopped and ran_to_end(), context=context)
