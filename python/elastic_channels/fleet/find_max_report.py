"""The search's result: one JSON-ready dict (``"kind": "find-max"``), and its text.

What it holds (docs/FIND_MAX.md):

- ``held_mbps``: the highest step held for a full step, MB/s a worker: the steps are
  read from the first, and the first that did not hold (broke, or never ran its full
  length) ends the reading, so a later step that happened to pass never counts;
  ``held_achieved_mbps``, ``cpu_s_per_gb`` and ``rss_mib`` are that step's (acked MB/s
  a worker; the workers' CPU-seconds per GB sent; resident MiB a worker, the highest of
  its windows), None when no step held.
- ``stopped_by``: the bound that stopped the search, with its figure and limit (None
  when it reached ``max_mbps`` without a break, or the run ended first); ``ended`` says
  which, in words.
- ``steps``: every step that ran, with its figures (``StepTally.figures``).
- ``search``, ``workers`` and ``context`` (what the runner says of the run: date,
  target, channel limit, channels a worker, machine, command ...), for a reader and for
  ``plan --figures``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .find_max_judge import Judge

__all__ = ["KIND", "build_report", "describe"]

KIND = "find-max"
VERSION = 1


def build_report(
    judge: Judge, *, ran_to_end: bool, context: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    held = None
    for tally in judge.steps:
        if not tally.held:
            break
        held = tally
    brk = judge.first_break
    if brk is not None:
        ended = f"a bound broke: {brk.describe()}"
    elif held is not None and held.step == len(judge.steps) - 1:
        ended = (f"max_mbps reached without a break: at least {held.target_mbps:g} MB/s a "
                 "worker holds")  # fmt: skip
    else:
        ended = "the run ended before a bound broke or the staircase was climbed"
    seen = [t for t in judge.steps if t.windows_seen > 0 or t.complete]
    return {
        "kind": KIND,
        "version": VERSION,
        "search": judge.plan.as_dict(),
        "workers": judge.workers,
        "held_mbps": None if held is None else held.target_mbps,
        "held_step": None if held is None else held.step,
        "held_achieved_mbps": None if held is None else held.figures()["achieved_mbps"],
        "cpu_s_per_gb": None if held is None else held.figures()["cpu_s_per_gb"],
        "rss_mib": None if held is None else held.figures()["rss_mib"],
        "stopped_by": None if brk is None else _break_dict(brk),
        "ended": ended,
        "ran_to_end": ran_to_end,
        "steps": [t.figures() for t in seen],
        "context": dict(context or {}),
    }


def _break_dict(brk: Any) -> dict[str, Any]:
    keys = ("step", "target_mbps", "bound", "figure", "limit", "window_start")
    return {k: getattr(brk, k) for k in keys}


def _num(v: Any, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def describe(report: Mapping[str, Any]) -> str:
    """The result in a few lines: the answer, what stopped it, a line per step."""
    held = report.get("held_mbps")
    lines = [
        "highest rate held: "
        + ("none (the first step did not hold)" if held is None
           else f"{held:g} MB/s a worker (acked {_num(report.get('held_achieved_mbps'))})"),
        f"ended: {report['ended']}",
        "step  asked MB/s  acked MB/s  ack p99 ms  behind p99 ms  errors  SDK retries  held",
    ]  # fmt: skip
    for s in report.get("steps", []):
        lines.append(
            f"{s['step']:>4}  {s['target_mbps']:>10g}  {_num(s['achieved_mbps'], '{:>10.2f}')}  "
            f"{_num(s['ack_p99_ms'], '{:>10.0f}')}  {_num(s['behind_p99_ms'], '{:>13.0f}')}  "
            f"{s['errors']:>6}  {s['sdk_retries']:>11}  {'yes' if s['held'] else 'no'}"
        )
    return "\n".join(lines)
