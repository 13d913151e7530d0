"""Aggregates of the landing table kept across refreshes, so that while a run goes on a
refresh reads only the rows committed since the last one, not the whole run again.

The table only grows, and every row carries its commit time. A read asks for the rows
committed after the kept boundary (``since``), grouped by the aggregate's keys and by
whether they are *settled*: committed no later than ``settle_at``, :data:`SETTLE_S`
before the latest commit seen so far (any row that much older than a visible one is
visible too: the emulator takes a batch's commit time a moment before it commits it,
Snowflake at its commit). Settled groups are added to what is kept and ``since`` moves
up to ``settle_at``, the one bound value both comparisons use (so no row is counted
twice or missed, whatever the target's timestamp precision); the rest are added for
this refresh only and read again next time. The target skips the older rows by their
commit-time statistics (Parquet row groups, DuckDB zonemaps), so a refresh costs the
rows of the last ``SETTLE_S`` seconds and the refresh period, whatever the run's length.

What is kept is read again in full every :data:`FULL_EVERY_S` and whenever the target
changes identity (another emulator serves the data dir). A target that cannot change
(an emulator's files with no server) is read in full, cached by its files' version.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from .aggregate import Aggregate
from .query_cache import load
from .source import DataSource

__all__ = ["FULL_EVERY_S", "SETTLE_S", "forget", "read"]

#: A row committed this long before the latest visible commit is visible too (the
#: emulator lands one batch at a time, its commit time taken a moment before it commits;
#: Snowflake's is the commit's).
SETTLE_S = 10
#: What is kept is read again from scratch this often.
FULL_EVERY_S = 300.0
#: A result younger than this is reused (several viewers, one read).
FRESH_S = 2.0


@dataclass
class _Kept:
    """What is kept of one aggregate on one target for one scope."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    settled: pd.DataFrame | None = None
    #: Every row committed no later than this is in ``settled``.
    since: pd.Timestamp | None = None
    #: The latest commit any read has seen.
    last_commit: pd.Timestamp | None = None
    full_at: float = 0.0
    result: pd.DataFrame | None = None
    result_at: float = 0.0

    def forget(self, now: float) -> None:
        self.settled, self.since, self.last_commit, self.full_at = None, None, None, now


@st.cache_resource(show_spinner=False)
def _registry() -> dict[tuple[str, ...], _Kept]:
    return {}


_REGISTRY_LOCK = threading.Lock()


def _kept(key: tuple[str, ...]) -> _Kept:
    with _REGISTRY_LOCK:
        return _registry().setdefault(key, _Kept())


def read(src: DataSource, agg: Aggregate, run_id: str | None) -> pd.DataFrame:
    """``agg`` of ``run_id``'s rows (every run's with None) on ``src``, as of now."""
    times = (*agg.times, "LAST_COMMIT_SEEN")
    if src.version() is not None:  # nothing can land: one full read, cached
        got = load(src, agg.statement(src.dialect, run_id, None, None), times=times)
        return agg.merge([got])
    key = (src.description.split(" (")[0], src.generation() or "", agg.name, run_id or "")
    kept = _kept(key)
    with kept.lock:
        now = time.monotonic()
        if kept.result is not None and now - kept.result_at < FRESH_S:
            return kept.result
        if kept.settled is None or now - kept.full_at > FULL_EVERY_S:
            kept.forget(now)
        settle = None
        if kept.last_commit is not None:
            settle = kept.last_commit - pd.Timedelta(seconds=SETTLE_S)
            if kept.since is not None and settle <= kept.since:
                settle = kept.since  # nothing new has settled
        since_iso = None if kept.since is None else kept.since.isoformat()
        settle_iso = None if settle is None else settle.isoformat()
        stmt = agg.statement(src.dialect, run_id, since_iso, settle_iso)
        got = src.query(stmt, times=times)
        is_settled = got["SETTLED"].astype(bool) if not got.empty else pd.Series(dtype=bool)
        parts = [p for p in (kept.settled, got[is_settled]) if p is not None]
        kept.settled = agg.merge(parts)
        if settle is not None:
            kept.since = settle
        if not got.empty:
            seen = pd.Timestamp(got["LAST_COMMIT_SEEN"].max())
            if kept.last_commit is None or seen > kept.last_commit:
                kept.last_commit = seen
        kept.result = agg.merge([kept.settled, got[~is_settled]])
        kept.result_at = now
        return kept.result


def forget(src: DataSource) -> None:
    """Drop what is kept for ``src``: its next reads are full (a run that is over is
    shown from a full read, whatever a kept sum might have missed)."""
    prefix = src.description.split(" (")[0]
    with _REGISTRY_LOCK:
        for key in [k for k in _registry() if k[0] == prefix]:
            del _registry()[key]
