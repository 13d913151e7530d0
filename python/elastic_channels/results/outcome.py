"""A run's one outcome: what happened, decided in one place, with its exit code.

Every place that says how a run went (the summary's first line, the result file, ``runs``,
``compare``, the chart's title) reads the :class:`Outcome` this module decides; none of
them judges a run on its own. The outcomes, from the worst down (the first that applies
wins), and the exit code of each (docs/RESULTS.md; the two highest as k6 numbers them):

==================  ====  =======================================================
outcome             exit  when
==================  ====  =======================================================
could_not_start        2  bad settings, or the target could not be reached
interrupted          105  SIGINT or SIGTERM stopped the run before its end
workers_failed         1  a worker exited non-zero or without its summary
rows_lost              3  the landed rows disagree with what was acked
thresholds_failed     99  a threshold of the scenario did not hold (or could not
                          be checked)
passed                 0  none of the above
==================  ====  =======================================================

A run is ``passed`` only when everything it reports is whole: an interrupted run is never
``passed``, whatever its thresholds say of the part that ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXIT_CODES", "OUTCOMES", "WORDS", "Interrupt", "Outcome", "decide", "outcome_of"]

#: Outcome -> exit code, from the worst down.
EXIT_CODES = {
    "could_not_start": 2,
    "interrupted": 105,
    "workers_failed": 1,
    "rows_lost": 3,
    "thresholds_failed": 99,
    "passed": 0,
}
OUTCOMES = tuple(EXIT_CODES)
#: How each outcome is said at the head of the summary.
WORDS = {
    "could_not_start": "COULD NOT START",
    "interrupted": "INTERRUPTED",
    "workers_failed": "WORKERS FAILED",
    "rows_lost": "ROWS LOST",
    "thresholds_failed": "THRESHOLDS FAILED",
    "passed": "PASSED",
}


@dataclass(frozen=True)
class Interrupt:
    """A signal that stopped the run: its name, and when (seconds after the agreed start
    of sending, and of how many planned; None before sending started)."""

    signal: str
    at_s: float | None
    planned_s: float | None

    def text(self) -> str:
        if self.at_s is None:
            return f"{self.signal} before sending started"
        if self.at_s < 0:
            return f"{self.signal} {-self.at_s:.1f} s before sending started"
        if self.planned_s:
            share = min(self.at_s / self.planned_s, 1.0) * 100
            return f"{self.signal} at {self.at_s:.1f} s of {self.planned_s:.0f} s ({share:.0f}%)"
        return f"{self.signal} at {self.at_s:.1f} s"

    def as_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "at_s": self.at_s, "planned_s": self.planned_s}


@dataclass(frozen=True)
class Outcome:
    """The outcome, its exit code, and every reason found (the worst first)."""

    name: str
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.name]

    @property
    def passed(self) -> bool:
        return self.name == "passed"

    def headline(self, run_id: str) -> str:
        """The summary's first line."""
        why = f": {'; '.join(self.reasons)}" if self.reasons else ""
        return f"run {run_id}: {WORDS[self.name]}{why} (exit {self.exit_code})"

    def as_dict(self) -> dict[str, Any]:
        return {"outcome": self.name, "exit_code": self.exit_code, "reasons": list(self.reasons)}


def decide(
    *,
    interrupt: Interrupt | None = None,
    failed_workers: Sequence[Mapping[str, Any]] = (),
    loss: Sequence[str] = (),
    thresholds: Sequence[Mapping[str, Any]] = (),
    thresholds_error: str | None = None,
    not_started: str | None = None,
    rows_sent: int | None = None,
) -> Outcome:
    """The run's outcome from what happened to it.

    ``failed_workers``: one mapping per worker that failed (``worker_id``, ``how``: how
    it ended, ``at_s``: when, seconds after the start, ``loss``: what is known of its
    unacked rows). ``loss``: what the landed check found wrong, one sentence each.
    ``thresholds``: the scenario's thresholds as evaluated (``held``, ``text``).
    ``rows_sent``: the rows the workers sent after warmup (0 fails the run; None: not
    known)."""
    found: list[tuple[str, str]] = []
    if not_started:
        found.append(("could_not_start", not_started))
    if interrupt is not None:
        found.append(("interrupted", f"stopped by {interrupt.text()}"))
    for w in failed_workers:
        found.append(("workers_failed", _worker_text(w)))
    if rows_sent == 0:  # a run that measured nothing has not passed anything
        found.append(("workers_failed", "no worker sent a row after warmup"))
    found += [("rows_lost", text) for text in loss]
    if thresholds_error:
        found.append(("thresholds_failed", f"thresholds cannot be checked: {thresholds_error}"))
    found += [
        ("thresholds_failed", f"threshold not held: {t.get('text')}")
        for t in thresholds
        if not t.get("held")
    ]
    if not found:
        return Outcome("passed")
    found.sort(key=lambda x: OUTCOMES.index(x[0]))
    return Outcome(found[0][0], tuple(text for _, text in found))


def _worker_text(w: Mapping[str, Any]) -> str:
    text = f"worker {w.get('worker_id')} {w.get('how') or 'failed'}"
    at = w.get("at_s")
    if isinstance(at, (int, float)) and not isinstance(at, bool):
        text += f" at {at:.1f} s"
    if w.get("loss"):
        text += f" ({w['loss']})"
    return text


def outcome_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A result document's outcome (``{outcome, exit_code, reasons}``); a file written
    before outcomes were recorded says ``unknown``: nothing in it tells an interrupted
    run from a whole one."""
    recorded = doc.get("outcome")
    if isinstance(recorded, Mapping) and recorded.get("outcome") in EXIT_CODES:
        reasons = recorded.get("reasons")
        return {
            "outcome": recorded["outcome"],
            "exit_code": EXIT_CODES[recorded["outcome"]],
            "reasons": [str(r) for r in reasons] if isinstance(reasons, list) else [],
        }
    return {"outcome": "unknown", "exit_code": None, "reasons": ["recorded before outcomes"]}
