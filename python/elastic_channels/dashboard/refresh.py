"""When a page reads its figures again: every few seconds while the run it shows goes
on (the sidebar toggle turns that off), never once the run is over.

A page's body says whether the run it drew is over (:class:`RunState`); the page keeps
the answer in the session, and when it changes reruns itself so its timer starts or
stops (a Streamlit fragment's period is fixed when the page runs). A page with no run
to show yet keeps looking for one; a page whose run is over keeps only a cheap watch on
the target (:func:`watch`: an emulator data dir's files and server, no query) and
follows a new run once that changes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import streamlit as st

from .settings import Settings
from .source import DataSource

__all__ = ["RunState", "auto_refresh", "note", "period", "record", "watch"]

_OVER = "run_over_{}"
_SEEN = "run_over_seen_{}"


@dataclass(frozen=True)
class RunState:
    """Whether the run a page shows is over, and how the page knows (``why``); or,
    while it goes on, how many seconds its metrics are behind (``behind_s``, None: they
    are current) and why it is not over all the same (``why``)."""

    over: bool
    why: str = ""
    behind_s: float | None = None


def auto_refresh(settings: Settings, src: DataSource) -> float | None:
    """The sidebar toggle; the refresh period in seconds, or None when off."""
    with st.sidebar:
        live = st.toggle(
            f"Auto-refresh every {settings.refresh_s:g} s",
            value=True,
            key="auto_refresh",
            help="Read the figures again periodically while the run goes on; "
            "refreshing stops by itself once the run is over.",
        )
        st.caption(src.description)
    return settings.refresh_s if live else None


def period(page: str, every: float | None) -> float | None:
    """The page's refresh period: ``every``, unless its run is over."""
    state = st.session_state.get(_OVER.format(page))
    return None if isinstance(state, RunState) and state.over else every


def record(page: str, state: RunState | None) -> bool:
    """Keep ``state`` (None: no run yet) for ``page``; True when it changed whether the
    page refreshes (the caller reruns the page then)."""
    key = _OVER.format(page)
    before = st.session_state.get(key)
    st.session_state[key] = state
    was_over = isinstance(before, RunState) and before.over
    return was_over != bool(state and state.over)


def note(every: float | None, state: RunState | None) -> str:
    """Above the figures: when they were read, and whether they will be again."""
    now = dt.datetime.now(dt.timezone.utc)
    head = f"As of {now:%H:%M:%S} UTC"
    if state is not None and state.over:
        return (
            f"{head}. The run is over ({state.why}): refreshing has stopped. "
            "Reload the page to look for a newer run."
        )
    behind = ""
    if state is not None and state.behind_s is not None:
        behind = f" The metrics are {state.behind_s:.0f} s behind ({state.why})."
    if every is None:
        return f"{head}; auto-refresh is off (the sidebar turns it on).{behind}"
    return f"{head}; refreshing every {every:g} s.{behind}"


def watch(page: str, src: DataSource, every: float | None) -> None:
    """While ``page``'s run is over, check every ``every`` s whether the target changed
    (:meth:`~.source.DataSource.change_token`, no query), and if so forget that the run
    was over and rerun the page. Nothing to watch on a target without such a token."""
    if every is None or period(page, every) is not None:
        return
    token = src.change_token()
    if token is None:
        return
    st.session_state[_SEEN.format(page)] = token

    @st.fragment(run_every=every)
    def watcher() -> None:
        if src.change_token() != st.session_state.get(_SEEN.format(page)):
            st.session_state[_OVER.format(page)] = None
            st.rerun()

    watcher()
