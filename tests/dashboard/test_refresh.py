"""When the pages read their figures again: every few seconds while the run goes on
(the sidebar toggle turns it off), never once the run is over; a page whose run is over
keeps only a watch on the data dir that costs no query."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import streamlit
from dashboard_support import (
    LandedRun,
    fleet_windows,
    metric,
    render,
    run_into,
    summary_rows,
    write_metrics,
)

from elastic_channels.dashboard.source import EmulatorSource


@pytest.fixture
def periods(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The period of every fragment a page makes, in order (the figures', then the
    watch's when there is one)."""
    seen: list[Any] = []
    fragment = streamlit.fragment

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("run_every"))
        return fragment(*args, **kwargs)

    monkeypatch.setattr(streamlit, "fragment", spy)
    monkeypatch.setenv("ELASTIC_DASHBOARD_REFRESH_S", "3")
    return seen


@pytest.fixture
def served(landed_copy: LandedRun) -> Iterator[LandedRun]:
    """The run's data dir served by an emulator (data may still land)."""
    from elastic_channels.emulator import Emulator, EmulatorConfig

    emu = Emulator(EmulatorConfig(data_dir=landed_copy.data_dir)).start()
    try:
        yield landed_copy
    finally:
        emu.stop()


def _notes(at: Any) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("As of ")]


def test_refreshes_while_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch, periods: list[Any], landed_copy: LandedRun
) -> None:
    from elastic_channels.emulator import Emulator, EmulatorConfig

    # workers 0 and 1 report until now: the run goes on
    write_metrics(landed_copy.data_dir, landed_copy.run_id, fleet_windows(
        landed_copy.run_id, time.time() - 30, n_windows=30))  # fmt: skip
    emu = Emulator(EmulatorConfig(data_dir=landed_copy.data_dir)).start()
    try:
        at = render(monkeypatch, "run.py", landed_copy.data_dir)
        assert at.toggle(key="auto_refresh").value is True
        assert periods == [3.0]  # the figures' fragment reruns every 3 s, nothing else
        (note,) = _notes(at)
        assert note.endswith("refreshing every 3 s.")

        periods.clear()
        at.toggle(key="auto_refresh").set_value(False).run()
        assert not at.exception
        assert [e.value.split(":")[0] for e in at.error] == ["Worker 2 failed"]  # as before
        assert periods == [None]  # no timer: the page stays as it is
        (note,) = _notes(at)
        assert note.endswith("auto-refresh is off (the sidebar turns it on).")
        assert metric(at, "Workers") == "3"  # still drawn
    finally:
        emu.stop()


def test_stops_once_every_worker_has_finished(
    monkeypatch: pytest.MonkeyPatch, periods: list[Any], landed_copy: LandedRun
) -> None:
    from elastic_channels.emulator import Emulator, EmulatorConfig

    run = landed_copy
    t0 = time.time() - 100
    rows = fleet_windows(run.run_id, t0, n_windows=30)
    write_metrics(run.data_dir, run.run_id, rows + summary_rows(run.run_id, t0, {0: 1, 1: 1, 2: 1}))
    emu = Emulator(EmulatorConfig(data_dir=run.data_dir)).start()
    try:
        at = render(monkeypatch, "run.py", run.data_dir)
        # first render: the fragment had a timer; it found the run over and the page
        # reran itself without one, keeping only the watch (no query) on the data dir
        assert periods == [3.0, None, 3.0]
        (note,) = _notes(at)
        assert "The run is over (every worker has finished): refreshing has stopped." in note
        assert metric(at, "Workers") == "3"
    finally:
        emu.stop()


def test_a_stopped_emulators_files_are_read_once(
    monkeypatch: pytest.MonkeyPatch, periods: list[Any], landed: LandedRun
) -> None:
    at = render(monkeypatch, "sales.py", landed.data_dir)
    assert periods == [3.0, None, 3.0]
    (note,) = _notes(at)
    assert "The run is over (no emulator serves the data dir: nothing more can land)" in note
    assert metric(at, "Sales") == f"{landed.rows_landed:,}"  # still drawn
    periods.clear()
    at.run()  # a rerun (a widget, the watch) reads nothing new and starts no timer
    assert periods == [None, 3.0]


def test_the_watch_sees_a_new_run_without_a_query(landed_copy: LandedRun) -> None:
    """What the watch compares: the data dir's files and whether a server serves it."""
    from elastic_channels.emulator import Emulator, EmulatorConfig

    src = EmulatorSource(landed_copy.data_dir)
    before = src.change_token()
    assert src.change_token() == before  # nothing changed, nothing seen
    emu = Emulator(EmulatorConfig(data_dir=landed_copy.data_dir)).start()
    try:
        assert src.change_token() != before
        assert src.generation() is not None
    finally:
        emu.stop()
    after_stop = src.change_token()
    run_into(landed_copy.data_dir, seconds=1)
    assert src.change_token() != after_stop
