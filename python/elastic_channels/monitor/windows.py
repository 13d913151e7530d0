"""The monitor's book of a run: each worker's latest line per window, who is expected.

Windows are keyed by their wall-clock ``window_start`` and each holds at most one line
per *reporter*: a worker id and the pod it came from, or, on a stream that names no pod
(a file, stdin), the ``host`` the worker stamps on its lines (its pod's name on
Kubernetes; lines without one key on the worker id alone). A line seen again after a
reconnect or a restart replaces the one held, so nothing is ever counted twice; two
pods (or hosts) that claim one worker id are two reporters, both kept. A window is *complete*
once every worker id expected in it has reported it: a reporter is expected from its
first window on, up to its last window if it has ended (its summary line came), and
``expected_workers`` (when known) says how many worker ids there should be at least.

Windows written long enough ago are pruned to a stub (:mod:`.pruning`): the book holds
in full only the windows that may still change, and each worker's latest line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .pruning import WindowArchive

__all__ = ["Reporter", "Window", "WindowBook", "reporter", "reporter_order"]

#: Who sent a line: its worker id and its pod's name, else the host the worker stamped
#: (None: neither is known).
Reporter = tuple[int, "str | None"]


def reporter(line: dict[str, Any]) -> Reporter:
    return int(line["worker_id"]), line.get("pod_name") or line.get("host")


def reporter_order(r: Reporter) -> tuple[int, str]:
    """A sort key (a pod name is never empty)."""
    return r[0], r[1] or ""


@dataclass
class Window:
    window_start: float
    window_seconds: float
    lines: dict[Reporter, dict[str, Any]] = field(default_factory=dict)
    #: The fleet row is in the table; ``fleet_dirty``: a line came since it was written.
    fleet_written: bool = False
    fleet_dirty: bool = False
    #: Ingest-to-visible was read once every commit of the window was surely visible.
    visible_final: bool = False
    visible: dict[str, Any] = field(default_factory=dict)
    #: The fleet figures read back for a pruned window (its lines are not held).
    held_fleet: dict[str, Any] | None = None
    #: The workers the run started (its target is the schedule's for all of them).
    fleet_workers: int | None = None

    @property
    def end(self) -> float:
        return self.window_start + self.window_seconds

    def fleet(self) -> dict[str, Any]:
        """The fleet window: the workers' lines aggregated, and ingest-to-visible."""
        from ..fleet.report import aggregate_window
        from .visible import empty_fleet

        if not self.lines:
            return {**(self.held_fleet or empty_fleet(self)), **self.visible}
        agg = aggregate_window(list(self.lines.values()), fleet_workers=self.fleet_workers)
        agg.pop("worker_ids", None)
        return {**agg, **self.visible}


@dataclass
class _Worker:
    first_window: float
    last_window: float
    finished: bool = False
    #: Its line of ``last_window`` (kept when that window is pruned).
    last: dict[str, Any] | None = None


class WindowBook:
    def __init__(self, expected_workers: int | None = None) -> None:
        self.expected_workers = expected_workers
        self.windows: dict[float, Window] = {}
        self._workers: dict[Reporter, _Worker] = {}
        #: Windows pruned to a stub (written, past their grace period and a margin).
        self.archive = WindowArchive()

    def held(self, line: dict[str, Any]) -> dict[str, Any] | None:
        """The line held for ``line``'s reporter and window (None: none, or pruned)."""
        w = self.windows.get(round(float(line["window_start"]), 6))
        return None if w is None else w.lines.get(reporter(line))

    def add(self, line: dict[str, Any]) -> bool:
        """Hold a worker's window line; True if it is new or differs from the one held.
        A line of a pruned window must be the one written for it (else restore the
        window first: :meth:`restore`)."""
        ws = round(float(line["window_start"]), 6)
        who = reporter(line)
        if ws in self.archive:
            if not self.archive.holds(line):
                raise ValueError(f"window {ws} is pruned: restore it before adding a line")
            return False  # seen again: it was written, and its worker noted then
        w = self.windows.get(ws)
        if w is None:
            w = self.windows[ws] = Window(
                ws, float(line["window_seconds"]), fleet_workers=self.expected_workers
            )
        worker = self._workers.get(who)
        if worker is None or worker.first_window == math.inf:
            worker = self._workers[who] = _Worker(ws, ws, finished=worker is not None)
        else:
            worker.first_window = min(worker.first_window, ws)
            worker.last_window = max(worker.last_window, ws)
        if w.lines.get(who) == line:
            return False
        w.lines[who] = line
        if ws == worker.last_window:
            worker.last = line
        if w.fleet_written:
            w.fleet_dirty = True
        return True

    def prune(self, now: float, after_s: float, keep: set[float], visible: bool) -> int:
        """Prune the windows written, not changed since, ended ``after_s`` before ``now``,
        not in ``keep`` (lines of them wait to be written), and whose ingest-to-visible
        read is final (or not ``visible``: not read). The number pruned."""
        old = [
            w
            for ws, w in self.windows.items()
            if w.fleet_written and not w.fleet_dirty and now >= w.end + after_s
            and ws not in keep and (w.visible_final or not visible)
        ]  # fmt: skip
        for w in old:
            self.archive.drop(w)
            del self.windows[w.window_start]
        return len(old)

    def restore(self, sink: Any, run_id: str, starts: set[float]) -> None:
        """Hold the pruned windows at ``starts`` in full again, their lines read back
        from ``sink`` (a :class:`~.sink.MetricsSink`; SqlError: nothing changes)."""
        for w in self.archive.restore(sink, run_id, starts):
            self.windows[w.window_start] = w

    def finish(self, who: Reporter) -> None:
        """The reporter's summary came: it reports no window after its last."""
        worker = self._workers.get(who)
        if worker is None:  # ended without a window (it never connected): expect none
            self._workers[who] = _Worker(math.inf, -math.inf, finished=True)
        else:
            worker.finished = True

    def last_line(self, who: Reporter) -> dict[str, Any] | None:
        """The reporter's line of its latest window (None before its first)."""
        worker = self._workers.get(who)
        return None if worker is None else worker.last

    def span(self, who: Reporter) -> tuple[float, float] | None:
        """The reporter's first window start and last window end (None: no window yet)."""
        worker = self._workers.get(who)
        last = self.last_line(who)
        if worker is None or last is None:
            return None
        return worker.first_window, float(last["end"])

    def finished(self) -> bool:
        """Every reporter known has ended (its summary came), and at least as many
        worker ids as expected are known."""
        workers = self._workers
        if not workers or not all(w.finished for w in workers.values()):
            return False
        return self.expected_workers is None or len({w[0] for w in workers}) >= (
            self.expected_workers
        )

    def expected(self, ws: float) -> set[int]:
        """The worker ids expected to report the window at ``ws``."""
        return {
            who[0]
            for who, w in self._workers.items()
            if w.first_window <= ws and not (w.finished and w.last_window < ws)
        }

    def complete(self, w: Window) -> bool:
        """Every worker id expected has reported ``w`` (a pod that took over a worker id
        stands in for the one before it)."""
        reported = {who[0] for who in w.lines}
        if not self.expected(w.window_start) <= reported:
            return False
        return self.expected_workers is None or len(reported) >= self._expected_count(w)

    def _expected_count(self, w: Window) -> int:
        """At least ``expected_workers``, less the worker ids known to have ended before
        ``w``."""
        assert self.expected_workers is not None
        ws = w.window_start
        ended = {who[0] for who, x in self._workers.items() if x.finished and x.last_window < ws}
        return self.expected_workers - len(ended - self.expected(ws))

    def due(self, now: float, grace_s: float) -> list[Window]:
        """Windows whose fleet row should be written now: complete, or past their end by
        ``grace_s``, and not written yet (or changed since)."""
        return [
            w
            for ws, w in sorted(self.windows.items())
            if (not w.fleet_written or w.fleet_dirty)
            and (self.complete(w) or now >= w.end + grace_s)
        ]

    def load_held(self, held: list[dict[str, Any]]) -> None:
        """Take in the metrics rows a table already holds (a restarted monitor): the
        workers' lines (their RAW), and which fleet rows are written."""
        for row in held:
            if not row.get("IS_FLEET") and isinstance(row.get("RAW"), dict):
                self.add(row["RAW"])
        for row in held:
            if row.get("IS_FLEET") and row.get("WINDOW_START") is not None:
                ws = round(row["WINDOW_START"].timestamp(), 6)
                w = self.windows.get(ws)
                if w is None and row.get("WORKERS_REPORTING") == 0:  # a commits-only window
                    w = self.windows[ws] = Window(
                        ws, float(row["WINDOW_SECONDS"]), fleet_workers=self.expected_workers
                    )
                if w is not None:
                    w.fleet_written = True
                    w.visible_final = row.get("INGEST_TO_VISIBLE_ROWS") is not None
