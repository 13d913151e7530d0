"""What the monitor holds of a run's lines, and which of its rows are due.

:class:`Intake` keeps the :class:`~.windows.WindowBook` (each worker's line per window),
the workers' :class:`~.summaries.Summaries`, the worker lines whose rows are to be
written, and the late lines of pruned windows waiting for their windows to be read back
(:mod:`.pruning`). The :class:`~.monitor.Monitor` parses lines, writes, and reads back;
this is the bookkeeping between. Lines are held per reporter (worker id and pod, or the
host the worker stamps when the stream names no pod: see :mod:`.windows`); rows are
keyed on POD_NAME, so a second host of one worker id has its rows named after it
(:meth:`Intake._named`): two workers of one id have rows of their own on any source,
and a lone worker's rows key as they always did. A worker id claimed by a second pod
(or host) is told to the :class:`~.tally.Tally`, and so is a reporter that sends two
different lines of one window covering the same time (two workers nothing tells apart:
lines without a host); a restarted worker's lines follow its earlier ones in time, and
are no clash.
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


#: What a source adds to a worker's line (on ``--k8s``), not the worker.
_SOURCE_KEYS = ("pod_name", "node_name")


def _bare(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in _SOURCE_KEYS}


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two lines of one window cover some of the same time (two processes at once)."""
    return float(a["start"]) < float(b["end"]) and float(b["start"]) < float(a["end"])


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
        #: Worker id -> the host (None: no host) whose rows are written without a pod
        #: name, as before hosts were stamped: the first seen of that id on a stream that
        #: names no pod. Another host of the id has its rows named after it.
        self.unnamed: dict[int, str | None] = {}

    def _claim(self, record: dict[str, Any]) -> None:
        wid, pod = reporter(record)
        if not record.get("pod_name"):
            self.unnamed.setdefault(wid, pod)
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
        held = self.book.held(record)
        if held is not None and held != record:
            if _bare(held) == _bare(record):  # one line, named by a source or not
                if not any(record.get(k) for k in _SOURCE_KEYS):
                    return  # the held one says more
            elif _overlap(held, record):
                self.tally.doubled_line(who[0], who[1], _key(record)[1])
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
        record = self._bind(record)
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

    def _bind(self, summary: dict[str, Any]) -> dict[str, Any]:
        """The summary as its worker's windows key: a worker of several channels merges
        its window lines without the host its summary has, so a host whose worker id
        sent windows only without one is dropped from the summary."""
        if summary.get("pod_name") or not summary.get("host"):
            return summary
        wid, host = reporter(summary)
        book = self.book
        if book.last_line((wid, host)) is None and book.last_line((wid, None)) is not None:
            return {k: v for k, v in summary.items() if k != "host"}
        return summary

    def load_held(self, held: list[dict[str, Any]]) -> None:
        """The run's rows the table holds (a restarted monitor): its windows and the
        summaries, not due to be written again unless a line changes them. A row whose
        RAW is not a usable line (written by another hand) is counted as a bad line and
        not taken."""
        usable = [r for r in held if r.get("IS_FLEET") or self._usable(r)]
        for r in sorted(usable, key=lambda r: bool(r.get("IS_SUMMARY"))):
            if not r.get("IS_FLEET") and not r["RAW"].get("pod_name") and not r.get("POD_NAME"):
                self.unnamed.setdefault(*reporter(r["RAW"]))  # its rows have no pod name
        for r in usable:
            if not r.get("IS_FLEET") and not r.get("IS_SUMMARY"):  # summaries: take_summary
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
        out = [self._named(rows.worker_row(line, self._state_of(line)), line) for line in lines]
        done, summary_rows = self.summaries.due_rows(self.book)
        out += [
            self._named(row, self.summaries.lines[who])
            for row, who in zip(summary_rows, done, strict=True)
        ]
        return lines, done, out

    def _named(self, row: dict[str, Any], line: dict[str, Any]) -> dict[str, Any]:
        """A worker's row with its host as its POD_NAME when no pod named it and another
        host of its worker id came first (rows are keyed on POD_NAME: two hosts of one
        worker id keep rows of their own; a lone host's rows key as they always did)."""
        wid, host = reporter(line)
        if not line.get("pod_name") and host is not None and self.unnamed.get(wid, host) != host:
            row["POD_NAME"] = host
        return row

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
