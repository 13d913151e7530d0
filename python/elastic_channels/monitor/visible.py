"""Ingest-to-visible per window: read off the landing table's commit times.

For the windows being written, one query gives, per window of commit time, the run's
rows committed in it and the p50/p99/average of commit time minus ``SALE_TIME``. At the
end of a run, rows still committing after the workers' last window are counted in that
last window (no window is written after the last worker's: such a window would read
0 workers and 0 MB/s), so every landed row of the run is in exactly one window;
:func:`wait_landed` first waits until the rows the workers had acknowledged are all
visible (commits trail acks by seconds on an account). Tables written by an earlier
version may hold commits-only windows (``WORKERS_REPORTING`` 0): they are read back as
they are.

The read fails on its own (:class:`VisibleReader`): a landing table without row
timestamps (a Snowflake-managed Iceberg table has none; a native table made before
``setup`` turned ``ROW_TIMESTAMP`` on) refuses ``METADATA$ROW_LAST_COMMIT_TIME``, and then
the visible columns of the run's rows stay NULL (unknown) while the worker and fleet
rows are written as ever.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from .sink import MetricsSink
from .sql_client import SqlError
from .windows import Window

__all__ = ["VisibleReader", "empty_fleet", "read_visible", "wait_landed"]

log = logging.getLogger("elastic_channels.monitor")

#: How far past the last window a final read looks for commits (a day).
FINAL_HORIZON_S = 86_400.0
#: After a read failed for another reason (the target busy, a network fault), the next
#: try waits this long, so a failing read does not rewrite the fleet rows every tick.
RETRY_S = 30.0
ADVICE = (
    "`elastic-channels setup` turns ROW_TIMESTAMP on for a native RESORT_SALES; a "
    "Snowflake-managed Iceberg table has no row timestamps; `--no-visible` skips this read"
)


class VisibleReader:
    """Reads ingest-to-visible for a run's windows, and never fails the monitor's write.

    ``on`` is False with ``--no-visible``, and becomes False for the rest of the run
    when the landing table refuses the query (an SQL compilation error: no
    ``METADATA$ROW_LAST_COMMIT_TIME`` on it). Any other failure is tried again after
    ``retry_s``. Either way the windows keep their visible figures unknown (NULL), and
    the warning is logged once; ``error`` says why."""

    def __init__(
        self, sink: MetricsSink, *, on: bool = True, settle_s: float, retry_s: float = RETRY_S
    ) -> None:
        self.sink = sink
        self.on = on
        self.settle_s = settle_s
        self.retry_s = retry_s
        self.error: str | None = None
        self._retry_at = 0.0

    def due(self, now: float) -> bool:
        """Whether a read may be tried now."""
        return self.on and now >= self._retry_at

    def read(self, run_id: str, windows: list[Window], *, now: float, final: bool = False) -> None:
        """:func:`read_visible` for ``windows``; if it fails, their figures are left as
        they were."""
        if not windows or not self.on or (now < self._retry_at and not final):
            return
        try:
            read_visible(self.sink, run_id, windows, now=now, settle_s=self.settle_s, final=final)
        except SqlError as e:
            self._failed(e, now)

    def _failed(self, e: SqlError, now: float) -> None:
        first = self.error is None
        self.error = str(e)
        table = getattr(self.sink, "landing_table", "the landing table")
        if _refused(self.error):  # the query itself: the table has no row timestamps
            self.on = False
            log.warning(
                "monitor: ingest-to-visible is unknown for this run (its columns stay "
                "NULL; the metrics rows are written): %s refuses METADATA$ROW_LAST_COMMIT_TIME "
                "(%s). %s",
                table, e, ADVICE,
            )  # fmt: skip
            return
        self._retry_at = now + self.retry_s
        if first:
            log.warning(
                "monitor: reading ingest-to-visible from %s failed (%s); the metrics rows "
                "are written with it unknown, and the read is tried again in %g s. %s",
                table, e, self.retry_s, ADVICE,
            )  # fmt: skip


def read_visible(
    sink: MetricsSink,
    run_id: str,
    windows: list[Window],
    *,
    now: float,
    settle_s: float,
    final: bool = False,
) -> None:
    """Fill in ``visible`` of ``windows``; with ``final``, the last of them also counts
    the commits after it."""
    window_s = windows[0].window_seconds
    start = min(w.window_start for w in windows)
    end = max(w.end for w in windows) + (FINAL_HORIZON_S if final else 0.0)
    last = max(w.window_start for w in windows) if final else None
    found = sink.visible_latency(run_id, window_s, start, end, last=last)
    for w in windows:
        w.visible = found.pop(w.window_start, {}) or {"visible_rows": 0}
        w.visible_final = final or now >= w.end + settle_s


def _refused(message: str) -> bool:
    """Whether the target refused the statement itself (it would refuse it again): the
    SQL API answers HTTP 422 to a statement that cannot run (Snowflake: "SQL compilation
    error ... invalid identifier"; the emulator: DuckDB's binder error)."""
    text = message.lower()
    return message.startswith("HTTP 422") or any(
        words in text for words in ("compilation error", "invalid identifier", "binder error")
    )


def empty_fleet(w: Window) -> dict[str, Any]:
    """The fleet figures of a window no worker reported (commits only)."""
    return {
        "window_start": w.window_start,
        "window_seconds": w.window_seconds,
        "partial": False,
        "start": w.window_start,
        "end": w.end,
        "workers": 0,
        "rows": 0,
        "bytes": 0,
        "acked_rows": 0,
        "acks": 0,
        "mb_per_s": 0.0,
        "rows_per_s": 0.0,
    }


def wait_landed(
    sink: MetricsSink,
    run_id: str,
    acked_rows: int,
    *,
    timeout_s: float,
    poll_s: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Wait until at least ``acked_rows`` rows of the run are visible; False on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        if sink.landed_rows(run_id) >= acked_rows:
            return True
        if time.monotonic() >= deadline:
            return False
        sleep(poll_s)
