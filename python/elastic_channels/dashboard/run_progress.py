"""Whether the run a page shows is over, so the page stops reading it again.

A run is over once nothing more can land in it: no emulator serves the data dir any
more (its files cannot change), or the metrics table says every worker finished (each
sent its summary, or stopped reporting ``STALE_S`` ago), or, for a run without metrics
(``run --no-monitor``), nothing of it was committed for ``QUIET_S``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import pandas as pd

from ..model import METRICS_TABLE_NAME
from .common import load
from .refresh import RunState
from .source import DataSource, QueryError
from .statement import Binder, Statement

__all__ = ["QUIET_S", "STALE_S", "from_workers", "progress", "sales_run_state"]

#: A run without metrics is over once nothing of it was committed for this long.
QUIET_S = 60.0
#: A worker without a window for this long has stopped (as the Run page judges it).
STALE_S = 30.0
NOT_SERVED = "no emulator serves the data dir: nothing more can land"


def progress(run_id: str) -> Statement:
    """How many workers the metrics table knows for the run, how many finished (sent
    their summary), and when the last window ended (the setup DDL's columns)."""
    b = Binder()
    sql = (
        "SELECT count(DISTINCT WORKER_ID) AS WORKERS, count(DISTINCT CASE WHEN "
        "coalesce(IS_SUMMARY, FALSE) THEN WORKER_ID END) AS FINISHED, "
        f"max(WINDOW_END) AS LAST_WINDOW FROM {METRICS_TABLE_NAME} "
        f"WHERE RUN_ID = {b(run_id)} AND NOT coalesce(IS_FLEET, FALSE)"
    )
    return Statement(sql, b.params)


def from_workers(src: DataSource, states: Iterable[str]) -> RunState:
    """The Run page's answer, from its workers' states (``running``, ``done``, ...)."""
    if not src.is_live():
        return RunState(True, NOT_SERVED)
    states = list(states)
    if states and all(s != "running" for s in states):
        return RunState(True, "every worker has finished")
    return RunState(False)


def _age_s(t: object, now: dt.datetime) -> float | None:
    if t is None or pd.isna(t):
        return None
    return (now - pd.Timestamp(t).to_pydatetime()).total_seconds()


def sales_run_state(src: DataSource, run_id: str, totals: pd.Series) -> RunState:
    """The Resort sales page's answer for ``run_id``, whose headline figures (its last
    commit) are ``totals``."""
    if not src.is_live():
        return RunState(True, NOT_SERVED)
    now = dt.datetime.now(dt.timezone.utc)
    try:
        p = load(src, progress(run_id), times=("LAST_WINDOW",)).iloc[0]
    except (QueryError, IndexError):  # no metrics table, or not the setup DDL's
        p = None
    if p is not None and int(p["WORKERS"] or 0) > 0:
        if int(p["FINISHED"]) >= int(p["WORKERS"]):
            return RunState(True, "every worker has finished")
        age = _age_s(p["LAST_WINDOW"], now)
        if age is not None and age > STALE_S:
            return RunState(True, f"no worker has reported for {age:.0f} s")
        return RunState(False)
    age = _age_s(totals.get("LAST_COMMIT"), now)
    if age is not None and age > QUIET_S:
        return RunState(True, f"nothing of it was committed for {age:.0f} s")
    return RunState(False)
