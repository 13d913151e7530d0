"""What the pages share: the data source, the workload's landing table, cached queries,
the run picker, messages, and the page frame (:func:`show_page`: title, target, figures
refreshed while the run goes on)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from . import data_dirs, refresh, running_aggregate
from .landing import LandingView, load_view
from .query_cache import forget_live, load, load_many
from .settings import Settings
from .source import DataSource, EmulatorSource, QueryError

__all__ = [
    "LATEST",
    "load",
    "load_many",
    "pages",
    "pick_run",
    "show_page",
    "show_query_error",
    "show_unexpected",
    "source",
    "workload",
]

log = logging.getLogger("elastic_channels.dashboard")


@st.cache_resource(show_spinner=False)
def _account(settings: Settings) -> DataSource:
    from .account import AccountSource

    return AccountSource(settings.profile, settings.database, settings.schema)


@st.cache_resource(show_spinner=False)
def _emulator(data_dir: Path, found: str) -> DataSource:
    return EmulatorSource(data_dir, found=found)


@st.cache_resource(show_spinner=False)
def _view(workload: str) -> LandingView:
    return load_view(workload)


def workload() -> LandingView:
    """The workload's landing table (``--workload``; checked when the dashboard started,
    so an error here means its file changed since: the page says so)."""
    return _view(Settings.from_env().workload)


def pages() -> list[tuple[str, str]]:
    """(page script, title) of the pages the workload gets, the default first: "Resort
    sales" for resort sales, "Latest rows" for any other (and for a workload that can
    no longer be read: that page says why), then "Run"."""
    try:
        resort = workload().is_resort
    except ValueError:
        resort = False
    first = ("sales.py", "Resort sales") if resort else ("rows.py", "Latest rows")
    return [first, ("run.py", "Run")]


def source() -> tuple[Settings, DataSource]:
    """The settings from the environment and the target they name (one per process).
    Without a data dir, the workload's under ``home`` whose data is newest, found again
    at each render (a run started since into another one is followed)."""
    settings = Settings.from_env()
    if settings.uses_account():
        return settings, _account(settings)
    if settings.data_dir is not None:
        return settings, _emulator(settings.data_dir, "")
    found = data_dirs.find(settings.home, workload().table)
    return settings, _emulator(found.data_dir, found.why)


def show_query_error(e: QueryError, what: str) -> None:
    st.error(f"Could not read {what}: {e}")


def show_unexpected(e: Exception, what: str) -> None:
    """A bug or a result of an unexpected shape: said on the page, logged in full."""
    log.exception("drawing %s failed", what)
    st.error(
        f"Could not draw {what}: {type(e).__name__}: {e}. The dashboard's log has the "
        "details; please report it."
    )


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
    body: Callable[[DataSource], refresh.RunState | None],
    notice: tuple[type[Exception], str] | None = None,
    intro: Callable[[], None] | None = None,
) -> None:
    """A page: its title (and ``intro`` under it), the target opened (or why not), and
    ``body`` drawn in a fragment that reruns every few seconds while auto-refresh is on
    and the run ``body`` reports is not over. ``notice``: an exception type shown as
    information (prefixed) rather than as an error; any failure of ``what`` is shown as a
    message, never a traceback."""
    st.title(title)
    if intro is not None:
        intro()
    try:
        settings, src = source()
    except (QueryError, ValueError) as e:  # a WorkloadError is a ValueError
        st.error(f"Cannot open the target: {e}")
        return
    if src.found:
        st.caption(f"Reading {src.description}; picked {src.found}.")
    chosen = refresh.auto_refresh(settings, src)
    page = title.lower().replace(" ", "_")

    @st.fragment(run_every=refresh.period(page, chosen))
    def fragment() -> None:
        caption = st.empty()
        state: refresh.RunState | None = None
        try:
            with src.session():  # one connection for the render's queries
                state = body(src)
        except Exception as e:  # a page shows what went wrong, never a traceback
            if notice is not None and isinstance(e, notice[0]):
                st.info(f"{notice[1]}: {e}")
            elif isinstance(e, QueryError):
                show_query_error(e, what)
            else:
                show_unexpected(e, what)
        caption.caption(refresh.note(chosen, state))
        if refresh.record(page, state):
            if state is not None and state.over:
                running_aggregate.forget(src)  # the last figures from a full read
                forget_live()  # ... and from reads made once the run was over
            st.rerun()  # the whole page: the fragment's timer starts or stops

    fragment()
    refresh.watch(page, src, chosen)
