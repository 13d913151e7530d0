"""``run --find-max`` (or a scenario's ``search`` block): the run's stages become the
search's staircase, its fleet windows are judged as they come, the workers are stopped
at the first step that breaks a bound, and the report goes into the run's result
(``find_max``), which ``plan --figures`` takes. The search itself is
:mod:`.find_max` (docs/FIND_MAX.md)."""

from __future__ import annotations

import argparse
import datetime as dt
import signal
import sys
from collections.abc import Sequence
from typing import Any

import msgspec

from ..scenario import Scenario, from_data, resolved
from ..scenario.model import Search
from .find_max import OnlineSearch, SearchPlan, plan_from, stages_for
from .find_max_report import describe

__all__ = ["SearchRun", "add_argument", "searched"]

#: How errors name a search that came from the command line.
_WHERE = "the search (--find-max, or the scenario's search block)"


def add_argument(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--find-max",
        action="store_true",
        help="search for the highest rate a worker holds: the stages become a staircase "
        "(the scenario's search block, else 5 MB/s up by 5 to 200, 10 s a step), the run "
        "stops at the first step that breaks a bound (behind schedule, ack p99, errors, "
        "SDK retries, or acked under 95%% of the step's rate), and reports the highest "
        "step held for a full step and what stopped it (docs/FIND_MAX.md); plan --figures "
        "takes the result",
    )


def searched(s: Scenario, find_max: bool) -> tuple[Scenario, SearchPlan | None]:
    """``s`` with its stages replaced by the search's staircase (warmup kept), and the
    plan; ``s`` and None when there is no search. ValueError naming the key."""
    block = s.search if s.search is not None else (Search() if find_max else None)
    if block is None:
        return s, None
    plan = plan_from(block, window_seconds=s.window_seconds)
    data = resolved(s)
    data["stages"] = [
        {"seconds": st["seconds"], "mbps": st["from_bps"] / 1e6} for st in stages_for(plan)
    ]
    data["search"] = msgspec.to_builtins(block)  # with the defaults filled in
    return from_data(data, _WHERE), plan


class SearchRun:
    """The search around one run: ``on_window`` for ``watch.watch``, ``bind`` the
    workers once started (the search SIGTERMs the live ones at a break: they drain and
    report), ``finish`` for the report."""

    def __init__(self, plan: SearchPlan, s: Scenario) -> None:
        self.s = s
        self.workers: Sequence[Any] = ()
        self.search = OnlineSearch(plan, self._stop, workers=s.workers)

    def bind(self, workers: Sequence[Any]) -> None:
        self.workers = workers

    def on_window(self, window: dict[str, Any]) -> None:
        self.search.on_window(window)

    def _stop(self) -> None:
        print("find-max: a step broke its bounds; stopping the workers (they drain)",
              file=sys.stderr, flush=True)  # fmt: skip
        for wp in self.workers:
            if wp.proc.poll() is None:
                wp.proc.send_signal(signal.SIGTERM)

    def finish(self, ran_to_end: bool, target: str) -> dict[str, Any]:
        """The report (printed on stderr too): ``ran_to_end``, every worker finished its
        schedule; ``target``, ``emulator`` or ``account``."""
        s = self.s
        context: dict[str, Any] = {
            "date": dt.datetime.now(dt.timezone.utc).date().isoformat(),
            "target": target,
            "channel_limit_mbps": s.destination.channel_limit_mbps,
            "channels": s.channels,
            "command": " ".join(["elastic-channels", *sys.argv[1:]]),
            "sdk_mode": "the SDK's defaults"
            if not s.sdk_properties
            else f"SDK properties {dict(s.sdk_properties)}",
        }
        try:
            from ..results.environment import machine

            context["machine"] = machine()
        except Exception:  # the figures say 'not recorded' rather than fail the run
            pass
        report = self.search.report(ran_to_end=ran_to_end, context=context)
        print(describe(report), file=sys.stderr)
        return report
