"""The latest rows of any workload as the "Latest rows" page shows them: every column
under its own name, each as wide as what it holds, times as UTC text on a 24-hour
clock, VARIANT values as compact JSON text, numbers with their scale's digits.

:func:`shown` takes the result of ``rows_sql.latest_rows`` (columns ``C0``, ``C1``, ...,
``COMMIT_TIME``, ``DELAY_MS``) and returns the table and its Streamlit column settings.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd
import streamlit as st

from ..workload.types import (
    BOOLEAN,
    DATE,
    FLOAT,
    NUMBER,
    TIMESTAMP_NTZ,
    TIMESTAMP_TZ,
    VARIANT,
    SnowflakeType,
)
from .charts import utc_text
from .landing import LandingView
from .rows_sql import EXACT_DIGITS, out_name

__all__ = ["COMMITTED", "DELAY", "TIME_FORMAT", "compact_json", "shown", "width"]

COMMITTED = "committed (UTC)"
DELAY = "ingest-to-visible ms"
#: A time as the rows show it: the date, and the time to the millisecond, in UTC.
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
#: Pixels per character of text, and the bounds of a column's width.
CHAR_PX = 7.5
MIN_PX = 60
MAX_TEXT_PX = 260
MAX_JSON_PX = 480
TIME_PX = 185


def compact_json(value: Any) -> str:
    """A VARIANT value as compact JSON text (a text already JSON is re-encoded compact)."""
    if _missing(value):
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _times(values: pd.Series) -> pd.Series:
    return utc_text(values, TIME_FORMAT).map(lambda s: s if s == "-" else s[:-3])


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _text(values: pd.Series) -> pd.Series:
    return values.map(lambda v: "" if _missing(v) else str(v))


def width(header: str, values: pd.Series, cap: int = MAX_TEXT_PX) -> int:
    """Pixels for a column of ``values`` (text) under ``header``: the longer of the
    header and the 90th percentile of the values' lengths, within bounds."""
    lengths = values.map(len) if len(values) else pd.Series([0])
    longest = max(len(header), int(lengths.quantile(0.9)) if len(lengths) else 0)
    return int(min(cap, max(MIN_PX, round(longest * CHAR_PX) + 16)))


def _column(name: str, t: SnowflakeType, values: pd.Series) -> tuple[pd.Series, Any]:
    """One workload column's shown values and its column setting."""
    tip = f"{name}: {t.sql}"
    if t.kind in (TIMESTAMP_TZ, TIMESTAMP_NTZ):
        return _times(values), st.column_config.TextColumn(f"{name} (UTC)", width=TIME_PX, help=tip)
    if t.kind == VARIANT:
        text = values.map(compact_json)
        return text, st.column_config.TextColumn(
            name, width=width(name, text, MAX_JSON_PX), help=tip
        )
    if t.kind == BOOLEAN:
        text = values.map(lambda v: "" if v is None else str(v).lower())
        return text, st.column_config.TextColumn(name, width=width(name, text), help=tip)
    exact = t.kind == FLOAT or (t.kind == NUMBER and (t.precision or 38) <= EXACT_DIGITS)
    if exact:
        numbers = pd.to_numeric(values, errors="coerce")
        fmt = None if t.kind == FLOAT else (f"%.{t.scale}f" if t.scale else "%d")
        text = numbers.map(lambda x: "" if pd.isna(x) else (fmt % x if fmt else repr(float(x))))
        return numbers, st.column_config.NumberColumn(
            name, format=fmt, width=width(name, text, 160), help=tip
        )
    text = _text(values)  # VARCHAR, DATE, a NUMBER read as text
    cap = 110 if t.kind == DATE else MAX_TEXT_PX
    return text, st.column_config.TextColumn(name, width=width(name, text, cap), help=tip)


def _unique(name: str, taken: set[str]) -> str:
    while name in taken:
        name += " (dashboard)"
    return name


def shown(latest: pd.DataFrame, v: LandingView) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The rows as shown and their column settings (see the module)."""
    out: dict[str, pd.Series] = {}
    config: dict[str, Any] = {}
    for i, (name, t) in enumerate(v.columns):
        raw = latest[out_name(i)] if out_name(i) in latest.columns else pd.Series([], dtype=object)
        out[name], config[name] = _column(name, t, raw)
    taken = set(out)
    if "COMMIT_TIME" in latest.columns:
        key = _unique(COMMITTED, taken)
        out[key] = _times(latest["COMMIT_TIME"])
        config[key] = st.column_config.TextColumn(
            COMMITTED, width=TIME_PX, help="when the row became visible (its commit)"
        )
    if "DELAY_MS" in latest.columns and v.send_time is not None:
        key = _unique(DELAY, taken)
        out[key] = pd.to_numeric(latest["DELAY_MS"], errors="coerce")
        config[key] = st.column_config.NumberColumn(
            DELAY, format="%d", width=90, help=f"from the row's {v.send_time} to its commit"
        )
    if v.order_by is not None:
        config[v.order_by]["pinned"] = True
    return pd.DataFrame(out), config
