"""Refreshing: the auto-refresh toggle (on: the page's fragment reruns every few
seconds; off: it does not, and the page says so), and a page re-run after more rows
landed shows them (the offline cache follows the files)."""

from __future__ import annotations

from typing import Any

import pytest
import streamlit
from dashboard_support import LandedRun, metric, render, run_into, sql

from elastic_channels.dashboard.sales_page import ALL_RUNS


def test_auto_refresh_toggle(monkeypatch: pytest.MonkeyPatch, landed: LandedRun) -> None:
    periods: list[Any] = []
    fragment = streamlit.fragment

    def spy(*args: Any, **kwargs: Any) -> Any:
        periods.append(kwargs.get("run_every"))
        return fragment(*args, **kwargs)

    monkeypatch.setattr(streamlit, "fragment", spy)
    monkeypatch.setenv("ELASTIC_DASHBOARD_REFRESH_S", "3")
    at = render(monkeypatch, "sales.py", landed.data_dir)
    assert at.toggle(key="auto_refresh").value is True
    assert periods == [3.0]  # the figures' fragment reruns every 3 s
    notes = [c.value for c in at.caption if "refresh" in c.value]
    assert len(notes) == 1 and notes[0].endswith("refreshing every 3 s.")

    periods.clear()
    at.toggle(key="auto_refresh").set_value(False).run()
    assert not at.exception and not at.error
    assert periods == [None]  # no timer: the page stays as it is
    notes = [c.value for c in at.caption if "refresh" in c.value]
    assert len(notes) == 1 and notes[0].endswith("auto-refresh is off (the sidebar turns it on).")
    assert metric(at, "Sales") == f"{landed.rows_landed:,}"  # still drawn


def test_a_rerun_shows_the_rows_landed_since(
    monkeypatch: pytest.MonkeyPatch, landed_copy: LandedRun
) -> None:
    at = render(monkeypatch, "sales.py", landed_copy.data_dir)
    assert metric(at, "Sales") == f"{landed_copy.rows_landed:,}"
    second = run_into(landed_copy.data_dir, seconds=2)  # more rows land: another run
    at.run()
    assert not at.exception and not at.error
    assert second.run_id in at.selectbox(key="sales_run").options[0]  # latest: the new one
    assert metric(at, "Sales") == f"{second.rows_landed:,}"
    at.selectbox(key="sales_run").set_value(ALL_RUNS).run()
    ((total,),) = sql(landed_copy.data_dir, "SELECT count(*) FROM RESORT_SALES")
    assert total == landed_copy.rows_landed + second.rows_landed
    assert metric(at, "Sales") == f"{total:,}"
