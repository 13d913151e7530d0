"""What the browser is told to draw (the Vega-Lite specs of both pages): times on a UTC
scale with 24-hour labels, whatever the browser's time zone; money axes in money."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from dashboard_support import LandedRun, render

from elastic_channels.dashboard import charts


def _specs(at: Any) -> list[dict[str, Any]]:
    return [json.loads(e.proto.spec) for e in at.get("vega_lite_chart")]


def _encodings(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for layer in [spec, *spec.get("layer", [])]:
        for channel, enc in (layer.get("encoding") or {}).items():
            for e in enc if isinstance(enc, list) else [enc]:
                yield channel, e


def _formats(spec: dict[str, Any]) -> Iterator[str]:
    for _, enc in _encodings(spec):
        for where in (enc, enc.get("axis") or {}):
            if isinstance(where.get("format"), str):
                yield where["format"]


@pytest.mark.parametrize("page", ["run.py", "sales.py"])
def test_times_are_utc_on_a_24_hour_clock(
    monkeypatch: pytest.MonkeyPatch, with_metrics: LandedRun, page: str
) -> None:
    at = render(monkeypatch, page, with_metrics.data_dir)
    specs = _specs(at)
    assert specs
    temporal = [(c, e) for s in specs for c, e in _encodings(s) if e.get("type") == "temporal"]
    if page == "run.py":
        assert len(temporal) >= 4  # every Run chart is over time
    for channel, enc in temporal:
        # a utc scale: Vega-Lite shows UTC, not the browser's local time
        assert channel in ("x", "x2") and enc["scale"]["type"] == "utc", enc
        assert enc["axis"]["format"] == "%H:%M:%S"
    for spec in specs:
        for fmt in _formats(spec):
            assert "%I" not in fmt and "%p" not in fmt and "%l" not in fmt  # no 12-hour clock
        for _, enc in _encodings(spec):  # tooltips show pre-formatted UTC text, never a time
            assert enc.get("type") != "temporal" or enc.get("scale", {}).get("type") == "utc"


def test_money_axes_read_as_money(monkeypatch: pytest.MonkeyPatch, landed: LandedRun) -> None:
    at = render(monkeypatch, "sales.py", landed.data_dir)
    revenue = [
        e for s in _specs(at) for c, e in _encodings(s)
        if c == "x" and e.get("field") == "REVENUE"
    ]  # fmt: skip
    money = [e for e in revenue if e.get("stack") != "normalize"]
    assert len(money) == 2  # by resort, by state / province: $870M, not 870000000
    assert all(e["axis"]["labelExpr"] == charts.MONEY_LABEL for e in money)
    shares = [e for e in revenue if e.get("stack") == "normalize"]
    assert [e["axis"]["format"] for e in shares] == ["%"]  # what each resort sells: shares


def test_utc_text_is_24_hour_utc() -> None:
    t = pd.Series(
        [pd.Timestamp("2026-12-02T16:28:05+00:00"), pd.Timestamp("2026-12-02T09:01:02-08:00")]
    )
    assert list(charts.utc_text(t)) == ["16:28:05", "17:01:02"]
    assert list(charts.utc_text(pd.Series([None], dtype="datetime64[ns, UTC]"))) == ["-"]
