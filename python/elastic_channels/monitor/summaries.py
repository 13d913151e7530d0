"""The workers' summary lines as the monitor holds them, and their ``IS_SUMMARY`` rows.

A worker prints one summary line when it ends: its whole-run totals. The monitor keeps
the latest per reporter (worker id and pod: see :mod:`.windows`), and writes it as the
worker's summary row (keyed by run, worker, pod and ``IS_SUMMARY``, so a line seen
again or a restarted monitor never adds a second); the row is due again when a late
window line of the worker widens its span.
"""

from __future__ import annotations

from typing import Any

from . import rows
from .windows import Reporter, WindowBook, reporter, reporter_order

__all__ = ["Summaries", "ended"]


def ended(summary: dict[str, Any]) -> str:
    """How a worker ended: ``failed`` if its summary has an error or rows that were never
    acknowledged, else ``done``."""
    failed = "error" in summary or int(summary.get("unacked_rows") or 0) > 0
    return "failed" if failed else "done"


class Summaries:
    def __init__(self) -> None:
        self.lines: dict[Reporter, dict[str, Any]] = {}
        #: Reporters whose summary row is to be written.
        self.due: set[Reporter] = set()

    def __contains__(self, who: object) -> bool:
        return who in self.lines

    def take(self, summary: dict[str, Any], *, held: bool = False) -> bool:
        """Hold a summary line (``held``: read back from the table, already written);
        True if it is new or differs from the one held."""
        who = reporter(summary)
        if self.lines.get(who) == summary:
            return False
        self.lines[who] = summary
        if not held:
            self.due.add(who)
        return True

    def touch(self, who: Reporter) -> None:
        """A line of the reporter came after its summary: its row's span may change."""
        if who in self.lines:
            self.due.add(who)

    def ended(self, who: Reporter) -> str | None:
        """``done``/``failed`` for a finished reporter, None for one still running."""
        s = self.lines.get(who)
        return None if s is None else ended(s)

    def acked_rows(self) -> int:
        """Rows the finished workers had acknowledged in all, warmup's too."""
        return sum(
            int(s.get("rows_acked") or 0) + int(s.get("warmup_rows_acked") or 0)
            for s in self.lines.values()
        )

    def due_rows(self, book: WindowBook) -> tuple[list[Reporter], list[dict[str, Any]]]:
        """The reporters whose rows are due, and those rows."""
        done = sorted(self.due, key=reporter_order)
        return done, [
            rows.summary_row(self.lines[w], book.span(w), ended(self.lines[w])) for w in done
        ]
