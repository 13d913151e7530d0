"""The workers' summary lines as the monitor holds them, and their ``IS_SUMMARY`` rows.

A worker prints one summary line when it ends: its whole-run totals. The monitor keeps
the latest per worker, and writes it as the worker's summary row (keyed by run, worker
and ``IS_SUMMARY``, so a line seen again or a restarted monitor never adds a second);
the row is due again when a late window line of the worker widens its span.
"""

from __future__ import annotations

from typing import Any

from . import rows
from .windows import WindowBook

__all__ = ["Summaries", "ended"]


def ended(summary: dict[str, Any]) -> str:
    """How a worker ended: ``failed`` if its summary has an error or rows that were never
    acknowledged, else ``done``."""
    failed = "error" in summary or int(summary.get("unacked_rows") or 0) > 0
    return "failed" if failed else "done"


class Summaries:
    def __init__(self) -> None:
        self.lines: dict[int, dict[str, Any]] = {}
        #: Workers whose summary row is to be written.
        self.due: set[int] = set()

    def __contains__(self, worker_id: object) -> bool:
        return worker_id in self.lines

    def take(self, summary: dict[str, Any], *, held: bool = False) -> bool:
        """Hold a summary line (``held``: read back from the table, already written);
        True if it is new or differs from the one held."""
        wid = int(summary["worker_id"])
        if self.lines.get(wid) == summary:
            return False
        self.lines[wid] = summary
        if not held:
            self.due.add(wid)
        return True

    def touch(self, worker_id: int) -> None:
        """A line of the worker came after its summary: its row's span may change."""
        if worker_id in self.lines:
            self.due.add(worker_id)

    def ended(self, worker_id: int) -> str | None:
        """``done``/``failed`` for a finished worker, None for one still running."""
        s = self.lines.get(worker_id)
        return None if s is None else ended(s)

    def acked_rows(self) -> int:
        """Rows the finished workers had acknowledged in all."""
        return sum(int(s.get("rows_acked") or 0) for s in self.lines.values())

    def due_rows(self, book: WindowBook) -> tuple[list[int], list[dict[str, Any]]]:
        """The workers whose rows are due, and those rows."""
        done = sorted(self.due)
        return done, [
            rows.summary_row(self.lines[w], book.span(w), ended(self.lines[w])) for w in done
        ]
