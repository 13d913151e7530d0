"""Whether the run a page shows is over, so the page stops reading it again: one rule
for every page (:func:`run_state`).

A run is over once nothing more can come of it:

- no emulator serves the data dir any more (its files cannot change): the workers
  are gone, whatever they sent;
- or every worker the metrics table knows has sent its summary (the monitor writes
  one ``IS_SUMMARY`` row per worker that ended with one);
- or, for a run without metrics (``run --no-monitor``), nothing of it was committed
  for ``QUIET_S``: the landed rows are all there is to go by.

Metrics that stop coming never end a run: a monitor held back under load, or a worker
killed before its summary, look the same from here (the monitor writes no row for a
worker that ended without a summary). Once the latest window is older than
:func:`stale_after` the page says how far behind the metrics are instead, and keeps
reading.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd

from ..model import METRICS_TABLE_NAME
from .common import load
from .refresh import RunState
from .source import DataSource, QueryError
from .statement import Binder, Statement

__all__ = [
    "QUIET_S",
    "STALE_MIN_S",
    "Progress",
    "from_workers",
    "progress",
    "run_state",
    "sales_run_state",
    "stale_after",
]

#: A run without metrics is over once nothing of it was committed for this long.
QUIET_S = 60.0
#: The metrics are behind once no window came for three windows, and at least this long.
STALE_MIN_S = 10.0
NOT_SERVED = "no emulator serves the data dir: nothing more can land"
ALL_ENDED = "every worker has finished"


def stale_after(window_s: float | None) -> float:
    """Seconds without a window after which the metrics are behind (a worker missing,
    on the Run page): three windows, and at least ``STALE_MIN_S``."""
    return max(STALE_MIN_S, 3 * window_s) if window_s else STALE_MIN_S


@dataclass(frozen=True)
class Progress:
    """What the metrics table says of a run's workers."""

    #: Workers the metrics table knows (a window or a summary of theirs is in it).
    workers: int
    #: Of them, those whose summary is in.
    ended: int
    #: When the latest window of any of them ended (None: no window).
    last_window: dt.datetime | None
    #: Their typical window length in seconds (None: unknown).
    window_s: float | None = None


def run_state(
    live: bool,
    p: Progress | None,
    now: dt.datetime,
    last_commit: dt.datetime | None = None,
) -> RunState:
    """The one rule (see the module's doc): ``live``, whether data may still arrive (an
    emulator serves the data dir, or an account); ``p``, the metrics table's word (None
    or no worker: the run has no metrics); ``last_commit``, when its latest row was
    committed (for a run without metrics)."""
    if not live:
        return RunState(True, NOT_SERVED)
    if p is None or p.workers == 0:
        age = _age_s(last_commit, now)
        if age is not None and age > QUIET_S:
            return RunState(True, f"no metrics, and nothing of it was committed for {age:.0f} s")
        return RunState(False)
    if p.ended >= p.workers:
        return RunState(True, ALL_ENDED)
    age = _age_s(p.last_window, now)
    if age is None or age <= stale_after(p.window_s):
        return RunState(False)
    waiting = p.workers - p.ended
    return RunState(
        False,
        f"no window since {p.last_window:%H:%M:%S} UTC, and {waiting} of {p.workers} "
        "worker(s) have sent no summary: still sending, or ended without one",
        behind_s=age,
    )


def _age_s(t: object, now: dt.datetime) -> float | None:
    if t is None or pd.isna(t):
        return None
    return (now - pd.Timestamp(t).to_pydatetime()).total_seconds()


def _when(t: object) -> dt.datetime | None:
    return None if t is None or pd.isna(t) else pd.Timestamp(t).to_pydatetime()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def from_workers(src: DataSource, workers: pd.DataFrame, window_s: float | None) -> RunState:
    """The Run page's answer, from its per-worker rows (``HAS_SUMMARY``,
    ``LAST_WINDOW_END``) and their window length."""
    p = Progress(
        workers=len(workers),
        ended=int(workers["HAS_SUMMARY"].fillna(False).astype(bool).sum()),
        last_window=_when(workers["LAST_WINDOW_END"].max()),
        window_s=window_s,
    )
    return run_state(src.is_live(), p, _now())


def progress(run_id: str) -> Statement:
    """How many workers the metrics table knows for the run, how many sent their summary,
    when the last window ended and how long a window is (the setup DDL's columns)."""
    b = Binder()
    window = "NOT coalesce(IS_SUMMARY, FALSE)"
    sql = (
        "SELECT count(DISTINCT WORKER_ID) AS WORKERS, count(DISTINCT CASE WHEN "
        "coalesce(IS_SUMMARY, FALSE) THEN WORKER_ID END) AS FINISHED, "
        f"max(CASE WHEN {window} THEN WINDOW_END END) AS LAST_WINDOW, "
        f"avg(CASE WHEN {window} THEN WINDOW_SECONDS END) AS WINDOW_S "
        f"FROM {METRICS_TABLE_NAME} "
        f"WHERE RUN_ID = {b(run_id)} AND NOT coalesce(IS_FLEET, FALSE)"
    )
    return Statement(sql, b.params)


def sales_run_state(src: DataSource, run_id: str, totals: pd.Series) -> RunState:
    """The Resort sales (and Latest rows) page's answer for ``run_id``, whose headline
    figures (its last commit) are ``totals``."""
    if not src.is_live():
        return RunState(True, NOT_SERVED)
    p: Progress | None = None
    try:
        got = load(src, progress(run_id), times=("LAST_WINDOW",)).iloc[0]
    except (QueryError, IndexError):  # no metrics table, or not the setup DDL's
        got = None
    if got is not None:
        window = got["WINDOW_S"]
        p = Progress(
            workers=int(got["WORKERS"] or 0),
            ended=int(got["FINISHED"] or 0),
            last_window=_when(got["LAST_WINDOW"]),
            window_s=float(window) if pd.notna(window) else None,
        )
    return run_state(True, p, _now(), _when(totals.get("LAST_COMMIT")))
