"""What both pages share: the data source, cached queries, the refresh toggle, messages."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import streamlit as st

from .settings import Settings
from .source import DataSource, EmulatorSource, QueryError

__all__ = [
    "LATEST",
    "auto_refresh",
    "load",
    "load_many",
    "pick_run",
    "refresh_note",
    "show_query_error",
    "show_unexpected",
    "source",
]

PARALLEL_QUERIES = 2
log = logging.getLogger("elastic_channels.dashboard")


@st.cache_resource(show_spinner=False)
def _source(settings: Settings) -> DataSource:
    if settings.uses_account():
        from .account import AccountSource

        return AccountSource(settings.profile, settings.database, settings.schema)
    return EmulatorSource(settings.data_dir)


def source() -> tuple[Settings, DataSource]:
    """The settings from the environment and the target they name (one per process)."""
    settings = Settings.from_env()
    return settings, _source(settings)


@st.cache_data(ttl=2.0, show_spinner=False, max_entries=256)
def _load_live(key: str, _src: DataSource, sql: str, times: tuple[str, ...]) -> pd.DataFrame:
    return _src.query(sql, times=times)


@st.cache_data(ttl=3600.0, show_spinner=False, max_entries=256)
def _load_still(
    key: str, version: str, _src: DataSource, sql: str, times: tuple[str, ...]
) -> pd.DataFrame:
    return _src.query(sql, times=times)


def load(src: DataSource, sql: str, times: Sequence[str] = ()) -> pd.DataFrame:
    """``sql`` on the target. Results are kept 2 s while data may arrive (so several
    viewers cost one query), and until the data changes when it cannot (a stopped
    emulator's files)."""
    key = src.description.split(" (")[0]
    version = src.version()
    if version is None:
        return _load_live(key, src, sql, tuple(times))
    return _load_still(key, version, src, sql, tuple(times))


def load_many(
    src: DataSource, queries: dict[str, tuple[str, Sequence[str]]]
) -> dict[str, pd.DataFrame]:
    """Several queries at once (two at a time: each DuckDB read runs on one thread)."""
    with ThreadPoolExecutor(max_workers=PARALLEL_QUERIES) as pool:
        running = {n: pool.submit(load, src, sql, times) for n, (sql, times) in queries.items()}
        return {n: f.result() for n, f in running.items()}


def show_query_error(e: QueryError, what: str) -> None:
    st.error(f"Could not read {what}: {e}")


def show_unexpected(e: Exception, what: str) -> None:
    """A bug or a result of an unexpected shape: said on the page, logged in full."""
    log.exception("drawing %s failed", what)
    st.error(
        f"Could not draw {what}: {type(e).__name__}: {e}. The dashboard's log has the "
        "details; please report it."
    )


def auto_refresh(settings: Settings, src: DataSource) -> float | None:
    """The sidebar toggle; the refresh period in seconds, or None when off."""
    with st.sidebar:
        live = st.toggle(
            f"Auto-refresh every {settings.refresh_s:g} s",
            value=True,
            key="auto_refresh",
            help="Re-run the page's queries periodically while a run goes on.",
        )
        st.caption(src.description)
    return settings.refresh_s if live else None


def refresh_note(every: float | None) -> str:
    """Above the figures: when they were read, and whether they will be again."""
    now = dt.datetime.now(dt.timezone.utc)
    if every is None:
        return f"As of {now:%H:%M:%S} UTC; auto-refresh is off (the sidebar turns it on)."
    return f"As of {now:%H:%M:%S} UTC; refreshing every {every:g} s."


LATEST = "(latest run)"


def pick_run(run_ids: list[str], key: str, extra: Sequence[str] = ()) -> str:
    """The run to show: ``LATEST`` (the default) follows the newest run as runs start;
    a run picked by name stays picked. Returns a run id (or one of ``extra``)."""
    choice = st.selectbox(
        "Run",
        [LATEST, *run_ids, *extra],
        index=0,
        key=key,
        format_func=lambda o: f"latest: {run_ids[0]}" if o == LATEST else o,
    )
    return run_ids[0] if choice in (LATEST, None) else str(choice)


def show_page(
    title: str,
    what: str,
    body: Callable[[DataSource], None],
    notice: tuple[type[Exception], str] | None = None,
) -> None:
    """A page: its title, the target opened (or why not), and ``body`` drawn in a
    fragment that reruns every few seconds while auto-refresh is on. ``notice``: an
    exception type shown as information (prefixed) rather than as an error; any failure
    of ``what`` is shown as a message, never a traceback."""
    st.title(title)
    try:
        settings, src = source()
    except (QueryError, ValueError) as e:
        st.error(f"Cannot open the target: {e}")
        return
    every = auto_refresh(settings, src)

    @st.fragment(run_every=every)
    def fragment() -> None:
        st.caption(refresh_note(every))
        try:
            with src.session():  # one connection for the render's queries
                body(src)
        except Exception as e:  # a page shows what went wrong, never a traceback
            if notice is not None and isinstance(e, notice[0]):
                st.info(f"{notice[1]}: {e}")
            elif isinstance(e, QueryError):
                show_query_error(e, what)
            else:
                show_unexpected(e, what)

    fragment()
