"""What the monitor holds of a run's lines, and which of its rows are due.

:class:`Intake` keeps the :class:`~.windows.WindowBook` (each worker's line per window),
the workers' :class:`~.summaries.Summaries`, the worker lines whose rows are to be
written, and the late lines of pruned windows waiting for their windows to be read back
(:mod:`.pruning`). The :class:`~.monitor.Monitor` parses lines, writes, and reads back;
this is the bookkeeping between. Lines are held per reporter (worker id and pod, see
:mod:`.windows`); a worker id claimed by a second pod is told to the :class:`~.tally.Tally`.
"""

from __future__ import annotations

from typing import Any

from . import rows
from .records import LineError, parse
from .sink import MetricsSink
from .summaries import Summaries
from .tally import Tally
from .windows import Reporter, WindowBook, reporter

__all__ = ["Intake"]


def _key(line: dict[str, Any]) -> tuple[Reporter, float]:
    return reporter(line), round(float(line["window_start"]), 6)


class Intake:
    def __init__(self, expected_workers: int | None = None, tally: Tally | None = None) -> None:
        self.book = WindowBook(expected_workers)
        #: Each finished worker's summary line, and which summary rows are due.
        self.summaries = Summaries()
        #: Worker lines whose rows are to be written, by (reporter, window start).
        self.pending: dict[tuple[Reporter, float], dict[str, Any]] = {}
        #: Late lines of pruned windows, taken once their windows are read back.
        self.late: list[dict[str, Any]] = []
        self.tally = tally if tally is not None else Tally()
        #: The pods seen to claim each worker id.
        self.pods: dict[int, set[str | None]] = {}

    def _claim(self, record: dict[str, Any]) -> None:
        wid, pod = reporter(record)
        pods = self.pods.setdefault(wid, set())
        if pod not in pods:
            pods.add(pod)
            self.tally.claimed(wid, pods)

    def take_window(self, record: dict[str, Any]) -> None:
        """A worker's window line (checked by :func:`.records.parse`)."""
        self._claim(record)
        if self.book.archive.changes(record):
            self.late.append(record)  # its window is read back first: take_late
        else:
            self._add(record)

    def _add(self, record: dict[str, Any]) -> None:
        who = reporter(record)
        last = self.book.last_line(who)
        if not self.book.add(record):
            return
        self.pending[_key(record)] = record
        if who in self.summaries:  # a late line of a finished worker: its span, and the
            self.summaries.touch(who)  # state of the row of what was its last window
            now_last = self.book.last_line(who)
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

    def take_summary(self, record: dict[str, Any], *, held: bool = False) -> bool:
        """A worker's summary line (``held``: read back from the table on a restart);
        True if it is new or changed, and not ``held``."""
        self._claim(record)
        who = reporter(record)
        if not self.summaries.take(record, held=held):
            return False  # seen again: nothing changes
        self.book.finish(who)
        if held:
            return False
        last = self.book.last_line(who)
        if last is not None:  # its last window's row again, with the end state
            self.pending[_key(last)] = last
        return True

    def load_held(self, held: list[dict[str, Any]]) -> None:
        """The run's rows the table holds (a restarted monitor): its windows and the
        summaries, not due to be written again unless a line changes them. A row whose
        RAW is not a usable line (written by another hand) is counted as a bad line and
        not taken."""
        usable = [r for r in held if r.get("IS_FLEET") or self._usable(r)]
        for r in usable:
            if not r.get("IS_FLEET"):
                self._claim(r["RAW"])
        self.book.load_held([r for r in usable if not r.get("IS_SUMMARY")])
        for r in usable:
            if r.get("IS_SUMMARY"):
                self.take_summary(r["RAW"], held=True)

    def _usable(self, row: dict[str, Any]) -> bool:
        raw = row.get("RAW")
        if not isinstance(raw, dict):
            return False
        try:
            parse(raw, held=True)
        except LineError as e:
            self.tally.bad_line(e.worker_id, f"a row the table holds: {e}")
            return False
        return True

    def due_rows(self) -> tuple[list[dict[str, Any]], list[Reporter], list[dict[str, Any]]]:
        """The worker lines and the workers whose summary rows are due, and the rows of
        both; :meth:`written` once they are in the table."""
        lines = list(self.pending.values())
        out = [rows.worker_row(line, self._state_of(line)) for line in lines]
        done, summary_rows = self.summaries.due_rows(self.book)
        return lines, done, out + summary_rows

    def written(self, lines: list[dict[str, Any]], done: list[Reporter]) -> None:
        for line in lines:
            self.pending.pop(_key(line), None)
        self.summaries.due.difference_update(done)

    def _state_of(self, line: dict[str, Any]) -> str:
        """``running``, or how the worker ended on the row of its last window."""
        who = reporter(line)
        ended = self.summaries.ended(who)
        if ended is None or self.book.last_line(who) != line:
            return "running"
        return ended

    def waiting(self) -> int:
        """Lines, late lines and summary rows not written yet."""
        return len(self.pending) + len(self.late) + len(self.summaries.due)
