"""Query results kept for a moment: several viewers (and a page's parts) cost one query.

While data may arrive a result is kept 2 s; on a target that cannot change (a stopped
emulator's files) until its files' version changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import streamlit as st

from .source import DataSource
from .statement import Statement

__all__ = ["forget_live", "load", "load_many"]

PARALLEL_QUERIES = 2


@st.cache_data(ttl=2.0, show_spinner=False, max_entries=256)
def _load_live(key: str, _src: DataSource, stmt: Statement, times: tuple[str, ...]) -> pd.DataFrame:
    return _src.query(stmt, times=times)


@st.cache_data(ttl=3600.0, show_spinner=False, max_entries=256)
def _load_still(
    key: str, version: str, _src: DataSource, stmt: Statement, times: tuple[str, ...]
) -> pd.DataFrame:
    return _src.query(stmt, times=times)


def load(src: DataSource, query: Statement | str, times: Sequence[str] = ()) -> pd.DataFrame:
    """``query`` on the target. Results are kept 2 s while data may arrive (so several
    viewers cost one query), and until the data changes when it cannot (a stopped
    emulator's files)."""
    stmt = query if isinstance(query, Statement) else Statement(str(query))
    key = src.description.split(" (")[0]
    version = src.version()
    if version is None:
        return _load_live(key, src, stmt, tuple(times))
    return _load_still(key, version, src, stmt, tuple(times))


def load_many(
    src: DataSource, queries: dict[str, tuple[Statement, Sequence[str]]]
) -> dict[str, pd.DataFrame]:
    """Several queries at once (two at a time: each DuckDB read runs on one thread)."""
    with ThreadPoolExecutor(max_workers=PARALLEL_QUERIES) as pool:
        running = {n: pool.submit(load, src, sql, times) for n, (sql, times) in queries.items()}
        return {n: f.result() for n, f in running.items()}


def forget_live() -> None:
    """Drop the results kept while data may arrive: the next reads are fresh (a run seen
    to be over is drawn once more from reads made after that)."""
    _load_live.clear()
