"""The auto-refresh toggle: on, the page's fragment reruns every few seconds; off, it
does not, and the page says so. (A rerun after more rows landed:
test_sales_page.test_latest_follows_a_new_run.)"""

from __future__ import annotations

from typing import Any

import pytest
import streamlit
from dashboard_support import LandedRun, metric, render


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
