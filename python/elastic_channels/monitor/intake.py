"""What the monitor holds of a run's lines, and which of its rows are due.

:class:`Intake` keeps the :class:`~.windows.WindowBook` (each worker's line per window),
the workers' :class:`~.summaries.Summaries`, the worker lines whose rows are to be
written, and the late lines of pruned windows waiting for their windows to be read back
(:mod:`.pruning`). The :class:`~.monitor.Monitor` parses lines, writes, and reads back;
this is the bookkeeping between.
"""

from __future__ import annotations

from typing import Any

from . import rows
from .sink import MetricsSink
from .summaries import Summaries
from .windows import WindowBook

__all__ = ["Intake"]


def _key(line: dict[str, Any]) -> tuple[int, float]:
    return int(line["worker_id"]), round(float(line["window_start"]), 6)


class Intake:
    def __init__(self, expected_workers: int | None = None) -> None:
        self.book = WindowBook(expected_workers)
        #: Each finished worker's summary line, and which summary rows are due.
        self.summaries = Summaries()
        #: Worker lines whose rows are to be written, by (worker, window start).
        self.pending: dict[tuple[int, float], dict[str, Any]] = {}
        #: Late lines of pruned windows, taken once their windows are read back.
        self.late: list[dict[str, Any]] = []

    def take_window(self, record: dict[str, Any]) -> None:
        """A worker's window line (checked by :func:`.records.parse`)."""
        if self.book.archive.changes(record):
            self.late.append(record)  # its window is read back first: take_late
        else:
            self._add(record)

    def _add(self, record: dict[str, Any]) -> None:
        wid = int(record["worker_id"])
        last = self.book.last_line(wid)
        if not self.book.add(record):
            return
        self.pending[_key(record)] = record
        if wid in self.summaries:  # a late line of a finished worker: its span, and the
            self.summaries.touch(wid)  # state of the row of what was its last window
            now_last = self.book.last_line(wid)
            if last is not None and now_last is not last and _key(last) != _key(record):
                self.pending[_key(last)] = last

    def take_late(self, sink: MetricsSink, run_id: str) -> None:
        """Read back the pruned windows the late lines belong to, then take the lines
        (SqlError: nothing changes, they wait for the next try)."""
        if not self.late:
            return
        self.book.restore(sink, run_id, {_key(r)[1] for r in self.late})
        late, self.late = self.late, []
        for record in late:
            self._add(record)

    def take_summary(self, record: dict[str, Any], *, held: bool = False) -> None:
        """A worker's summary line (``held``: read back from the table on a restart)."""
        wid = int(record["worker_id"])
        if not self.summaries.take(record, held=held):
            return  # seen again: nothing changes
        self.book.finish(wid)
        if held:
            return
        last = self.book.last_line(wid)
        if last is not None:  # its last window's row again, with the end state
            self.pending[_key(last)] = last

    def load_held(self, held: list[dict[str, Any]]) -> None:
        """The run's rows the table holds (a restarted monitor): its windows and the
        summaries, not due to be written again unless a line changes them."""
        self.book.load_held([r for r in held if not r.get("IS_SUMMARY")])
        for r in held:
            if r.get("IS_SUMMARY") and isinstance(r.get("RAW"), dict):
                self.take_summary(r["RAW"], held=True)

    def due_rows(self) -> tuple[list[dict[str, Any]], list[int], list[dict[str, Any]]]:
        """The worker lines and the workers whose summary rows are due, and the rows of
        both; :meth:`written` once they are in the table."""
        lines = list(self.pending.values())
        out = [rows.worker_row(line, self._state_of(line)) for line in lines]
        done, summary_rows = self.summaries.due_rows(self.book)
        return lines, done, out + summary_rows

    def written(self, lines: list[dict[str, Any]], done: list[int]) -> None:
        for line in lines:
            self.pending.pop(_key(line), None)
        self.summaries.due.difference_update(done)

    def _state_of(self, line: dict[str, Any]) -> str:
        """``running``, or how the worker ended on the row of its last window."""
        wid = int(line["worker_id"])
        ended = self.summaries.ended(wid)
        if ended is None or self.book.last_line(wid) != line:
            return "running"
        return ended

    def waiting(self) -> int:
        """Lines, late lines and summary rows not written yet."""
        return len(self.pending) + len(self.late) + len(self.summaries.due)
