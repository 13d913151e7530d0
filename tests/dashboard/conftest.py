"""Fixtures: one real run's emulator data dir (session-wide), copies of it to change."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# The helpers beside these tests (pytest's importlib mode puts no test dir on the path).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dashboard_support import (
    LandedRun,
    copy_dir,
    fleet_windows,
    run_into,
    write_metrics,
)

from elastic_channels.dashboard.settings import ENV


@pytest.fixture(scope="session")
def landed(tmp_path_factory: pytest.TempPathFactory) -> LandedRun:
    """A stopped emulator's data dir holding the landed rows of a 3 s, 1-worker run."""
    return run_into(tmp_path_factory.mktemp("landed") / "emu")


@pytest.fixture
def landed_copy(landed: LandedRun, tmp_path: Path) -> LandedRun:
    return LandedRun(copy_dir(landed.data_dir, tmp_path / "emu"), landed.run_id, landed.rows_landed)


@pytest.fixture
def with_metrics(landed_copy: LandedRun) -> LandedRun:
    """The run's data dir plus a metrics table of a run going on: workers 0 and 1
    report until now, 2 stopped 27 s ago after errors."""
    rows = fleet_windows(landed_copy.run_id, time.time() - 30, n_windows=30)
    write_metrics(landed_copy.data_dir, landed_copy.run_id, rows)
    return landed_copy


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No query result or source kept from another test's data dir."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    monkeypatch.delenv("SNOWFLAKE_ACCOUNT", raising=False)
    for name in ENV.values():  # each test says what the app reads
        monkeypatch.delenv(name, raising=False)
    yield
