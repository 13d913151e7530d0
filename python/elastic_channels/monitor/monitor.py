"""The monitor: a run's worker lines in, rows of the metrics table out, while it runs.

``feed`` takes one line (text or a parsed dict) at a time from any source; ``tick``
writes what is due: every new or changed worker window at once, each worker's summary
row (``IS_SUMMARY``: its whole-run totals) once its summary line came, and a window's
fleet row once every expected worker reported it or ``grace_s`` passed after its end (a
late line rewrites it). Rows are upserted by (run, fleet/worker, window start), so lines
seen twice, a monitor restarted from the start of the logs, or one that picks up
where another left off (:meth:`Monitor.resume`), never count anything twice. A write
that fails is kept and tried again on the next tick: faults lose nothing. A line that
cannot be used (a field mistyped or out of range, too long, too deep: see
:mod:`.records`) is skipped, and a row the target refuses on its own is set aside
(:mod:`.sink`): each is counted per worker and logged (:class:`~.tally.Tally`), and
neither holds back any other row. Windows
written ``prune_after_s`` ago are pruned to a stub, so memory does not grow with the
run; a late line of one reads its lines back and updates its rows (see :mod:`.pruning`).

Ingest-to-visible per window is read off the landing table's commit times when the
fleet row is written, and read again once ``settle_s`` has passed after the window's
end (commit times are the target's clock) and at the final flush, which counts the
rows committed after the workers' last window in that window (see :mod:`.visible`);
:meth:`Monitor.wait_visible` before it waits for the acknowledged rows to be visible.
That read fails on its own: on a landing table without row timestamps the rows are
written with the visible columns NULL (unknown), and a warning says what to do.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from . import rows
from .intake import Intake
from .pruning import LATE_MARGIN_S
from .records import LineError, parse
from .sink import MetricsSink
from .sql_client import SqlError
from .stage_rows import StageBook
from .tally import Tally
from .visible import VisibleReader, wait_landed
from .windows import Window

__all__ = ["Monitor"]

log = logging.getLogger("elastic_channels.monitor")


class Monitor:
    def __init__(
        self,
        run_id: str | None,
        sink: MetricsSink,
        *,
        grace_s: float = 10.0,
        settle_s: float | None = None,
        expected_workers: int | None = None,
        visible: bool = True,
        prune_after_s: float | None = None,
        clock: Callable[[], float] = time.time,
        on_fleet: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.sink = sink
        self.grace_s = grace_s
        self.settle_s = grace_s if settle_s is None else settle_s
        #: A written window is pruned this long after its end (grace period + a margin).
        self.prune_after_s = grace_s + LATE_MARGIN_S if prune_after_s is None else prune_after_s
        #: Ingest-to-visible reads (off with ``visible=False``, or once the table refuses).
        self.reader = VisibleReader(sink, on=visible, settle_s=self.settle_s)
        #: What was set aside: bad lines, refused rows, worker ids claimed twice.
        self.tally = Tally()
        #: The run's lines held: windows, summaries, what is due (see :mod:`.intake`).
        self.intake = Intake(expected_workers, self.tally)
        self.book = self.intake.book
        self.summaries = self.intake.summaries
        self._clock = clock
        #: Called with each fleet window when first written or changed by a line (e.g. to
        #: print it as the run goes); not again when only ingest-to-visible is re-read.
        self.on_fleet = on_fleet
        self._lock = threading.RLock()
        #: Lines skipped (not worker records, or bad ones), and records of another run.
        self.garbage_lines = 0
        self.other_run_lines = 0
        self.rows_written = 0
        self.last_error: str | None = None
        #: The run's per-stage fleet summary rows (see :mod:`.stage_rows`).
        self.stages = StageBook()

    # --- input --------------------------------------------------------------------------

    def feed(
        self,
        line: str | bytes | dict[str, Any],
        *,
        pod_name: str | None = None,
        node_name: str | None = None,
    ) -> bool:
        """Take one line; True if it was a record of this run."""
        try:
            record = parse(line)
        except LineError as e:
            if e.run_id is not None and self.run_id is not None and e.run_id != self.run_id:
                self.other_run_lines += 1
                return False
            self.garbage_lines += 1
            if e.noise:
                log.debug("skipped a line: %s", e)
            else:
                self.tally.bad_line(e.worker_id, str(e))
            return False
        if self.run_id is None:  # follow the run of the first record
            self.run_id = record["run_id"]
            try:
                self.resume()
            except SqlError as e:
                self.last_error = f"reading what the table holds: {e}"
        if record["run_id"] != self.run_id:
            self.other_run_lines += 1
            return False
        if pod_name or node_name:
            record = {**record, "pod_name": pod_name, "node_name": node_name}
        with self._lock:
            if record["type"] == "summary":
                if self.intake.take_summary(record):
                    self.stages.due = True
            else:
                self.intake.take_window(record)
        return True

    def resume(self) -> int:
        """Take in what the table already holds for this run (a restarted monitor):
        those windows are not written again unless a line changes them."""
        if self.run_id is None:
            return 0
        with self._lock:
            held = self.sink.read_rows(self.run_id, summary=None)
            self.intake.load_held(held)
            return len(held)

    def _take_late(self) -> None:
        if self.intake.late and self.run_id is not None:
            try:
                self.intake.take_late(self.sink, self.run_id)
            except SqlError as e:
                self.last_error = f"reading back pruned windows for late lines: {e}"

    # --- output -------------------------------------------------------------------------

    def tick(self, now: float | None = None) -> int:
        """Write what is due; the number of rows written (0 if the target failed: the
        rows stay pending, and ``last_error`` says why)."""
        now = self._clock() if now is None else now
        with self._lock:
            self._take_late()
            fleet = self.book.due(now, self.grace_s)
            fleet += [
                w
                for w in self.book.windows.values()
                if w.fleet_written and not w.fleet_dirty and not w.visible_final
                and now >= w.end + self.settle_s and self.reader.due(now)
            ]  # fmt: skip
            written = self._write(fleet, now)
            written += self._write_stages(final=False)
            keep = {ws for _, ws in self.intake.pending}
            self.book.prune(now, self.prune_after_s, keep, self.reader.on)
            return written

    def flush(self, final: bool = False) -> int:
        """Write everything due; with ``final`` (the run is over), every window's fleet
        row too, whoever reported, with ingest-to-visible read again for every window
        (a commit time is when a landing transaction began: a large one can become
        visible well after its window ended, so earlier reads may have missed rows)."""
        if not final:
            return self.tick()
        now = self._clock()
        with self._lock:
            self._take_late()
            windows = [
                w for w in self.book.windows.values()
                if self.reader.on or not w.fleet_written or w.fleet_dirty
            ]  # fmt: skip
            if self.reader.on and self.run_id is not None:  # pruned ones: visible again
                try:
                    windows += self.book.archive.for_final(self.sink, self.run_id)
                except SqlError as e:
                    self.last_error = f"reading back pruned windows: {e}"
            written = self._write(sorted(windows, key=lambda w: w.window_start), now, final=True)
            return written + self._write_stages(final=True)

    def _write(self, fleet: list[Window], now: float, final: bool = False) -> int:
        if not fleet and not self.intake.waiting():
            return 0
        news = {w.window_start for w in fleet if not w.fleet_written or w.fleet_dirty}
        assert self.run_id is not None
        # Never raises: on failure the windows keep their visible figures unknown.
        self.reader.read(self.run_id, fleet, now=now, final=final)
        lines, done, worker_rows = self.intake.due_rows()
        fleet_dicts = [self._fleet(w) for w in fleet]
        fleet_rows = [rows.fleet_row(self.run_id, f) for f in fleet_dicts if f is not None]
        refused = []
        try:
            if worker_rows or fleet_rows:
                refused = self.sink.upsert(worker_rows + fleet_rows) or []
        except SqlError as e:
            self.last_error = str(e)
            log.warning("monitor: writing to the metrics table failed, will retry: %s", e)
            return 0
        for r in refused:  # set aside: counted and logged, not tried again
            self.tally.refused_row(r.row.get("WORKER_ID"), _what(r.row), r.reason)
        self.intake.written(lines, done)
        for w in fleet:
            w.fleet_written, w.fleet_dirty = True, False
        self.stages.due = self.stages.due or bool(fleet_rows)
        if self.on_fleet is not None:  # new and changed windows (not visible re-reads)
            for w, f in zip(fleet, fleet_dicts, strict=True):
                if w.window_start in news and f is not None:
                    self.on_fleet(f)
        n = len(worker_rows) + len(fleet_rows) - len(refused)
        self.rows_written += n
        return n

    def _write_stages(self, final: bool) -> int:
        """The per-stage rows, when due: at the final flush, or once every worker has
        ended and no line, summary or window waits to be written."""
        ready = final or (
            self.book.finished() and not self.intake.waiting()
            and not self.book.due(float("inf"), 0)
        )  # fmt: skip
        assert self.run_id is not None or not self.stages.due
        try:
            n = self.stages.write(self.sink, self.run_id or "", ready=ready)
        except SqlError as e:
            self.last_error = f"writing the per-stage rows: {e}"
            log.warning("monitor: %s, will retry", self.last_error)
            return 0
        self.rows_written += n
        return n

    def _fleet(self, w: Window) -> dict[str, Any] | None:
        """The window's fleet figures; None (counted and logged as a row set aside) if
        its lines cannot be added up, which their checks should make impossible."""
        try:
            return w.fleet()
        except (ArithmeticError, LookupError, TypeError, ValueError) as e:
            log.exception("monitor: cannot add up the lines of window %s", w.window_start)
            self.tally.refused_row(None, _what({"WINDOW_START": w.window_start}), repr(e))
            return None

    def wait_visible(self, timeout_s: float = 120.0, poll_s: float = 2.0) -> bool:
        """Wait (at most ``timeout_s``) until every row the finished workers had
        acknowledged is visible in the landing table: then the final flush sees every
        commit. True if they all are."""
        if not self.reader.on or self.run_id is None or not self.summaries.lines:
            return True
        acked = self.summaries.acked_rows()
        try:
            return wait_landed(
                self.sink, self.run_id, acked,
                timeout_s=timeout_s, poll_s=poll_s,
            )  # fmt: skip
        except SqlError as e:
            self.last_error = str(e)
            return False

    # --- reading back -------------------------------------------------------------------

    def fleet_windows(self) -> list[dict[str, Any]]:
        """The run's fleet windows as the metrics table holds them, in time order."""
        return fleet_windows(self.sink, self.run_id) if self.run_id else []

    def pending(self) -> int:
        return self.intake.waiting() + len(self.book.due(float("inf"), 0)) + self.stages.failed


def _what(row: dict[str, Any]) -> str:
    """Which row, for a message."""
    if row.get("IS_SUMMARY"):
        return f"the summary of pod {row.get('POD_NAME')}" if row.get("POD_NAME") else "summary"
    start: Any = row.get("WINDOW_START")
    stamp = start.isoformat() if hasattr(start, "isoformat") else start
    pod = f", pod {row['POD_NAME']}" if row.get("POD_NAME") else ""
    return f"window {stamp}{pod}"


def fleet_windows(sink: MetricsSink, run_id: str) -> list[dict[str, Any]]:
    """A run's fleet windows read back from the metrics table (what a user's query sees)."""
    return [rows.from_row(r) for r in sink.read_rows(run_id, fleet=True)]
