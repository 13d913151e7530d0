"""Parity on workloads hypothesis makes up: odd column names, unicode, empty strings,
long values, nested VARIANT objects and arrays, extreme numbers, correlated choices,
dynamic columns anywhere in the row. Each one the loader accepts is resolved, and the
native generator must write what the msgspec generator writes."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

from hypothesis import given, note
from hypothesis import strategies as st

from elastic_channels.workload import WorkloadReplay, from_data

NOW_US = 1_764_470_646_123_456

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", " ", '"', "\\", "\x00\x1f\x7f", "\u2028\u2029", "é😀", "a" * 300, '","x":"', "null"]
)
names = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=20) | (
    st.sampled_from(['say "hi"', "back\\slash", " ", "ÉÀ😀", "N" * 255, "select", "1st", "a.b"])
)
floats = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [5e-324, 1.7976931348623157e308, -0.0, 1e16, 1e-7, 123456789012345.0, 0.1]
)
json_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | floats | text
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
#: A column's own value: any JSON but null (a landing column is NOT NULL; null goes inside).
column_json_values = json_values.filter(lambda v: v is not None)


def weighted(values: st.SearchStrategy) -> st.SearchStrategy[dict[str, Any]]:
    return st.lists(values, min_size=1, max_size=4).flatmap(
        lambda vs: st.fixed_dictionaries(
            {"values": st.just(vs)},
            optional={"weights": st.lists(st.integers(0, 9), min_size=len(vs), max_size=len(vs))},
        ).filter(lambda c: sum(c.get("weights") or [1]) > 0)
    )


@st.composite
def number_type(draw) -> tuple[str, st.SearchStrategy, dict[str, Any]]:
    """A NUMBER(p,s) type, values that fit it, and a range source."""
    scale = draw(st.integers(0, 6))
    precision = draw(st.integers(max(scale, 1), 15 if scale else 38))
    top = 10 ** (precision - scale) - 1
    if scale == 0:
        values = st.integers(-top, top)
        lo, hi = sorted(draw(st.lists(st.integers(-top, top), min_size=2, max_size=2)))
    else:
        # Whole steps of 10**-scale, at most `precision` digits: written as decimal text.
        steps = st.integers(-(10**precision) + 1, 10**precision - 1)
        values = steps.map(lambda k: str(decimal.Decimal(k).scaleb(-scale)))
        lo, hi = sorted(draw(st.lists(steps, min_size=2, max_size=2)))
        lo, hi = (str(decimal.Decimal(k).scaleb(-scale)) for k in (lo, hi))
    return f"NUMBER({precision},{scale})", values, {"range": {"min": lo, "max": hi}}


@st.composite
def variant(draw, depth: int = 0) -> dict[str, Any]:
    """A VARIANT value source: scalars, templates, nested."""
    options = ["choice", "constant", "text", "range"]
    if depth < 2:
        options += ["object", "array", "array_of"]
    kind = draw(st.sampled_from(options))
    values = json_values if depth else column_json_values
    if kind == "choice":
        return {"choice": draw(weighted(values))}
    if kind == "constant":
        return {"constant": draw(values)}
    if kind == "text":
        lo = draw(st.integers(0, 5))
        spec = {"min_length": lo, "max_length": lo + draw(st.integers(0, 40))}
        return {
            "text": spec
            | draw(st.sampled_from([{}, {"alphabet": '"\\\n é'}, {"words": ["a", "bé"]}]))
        }
    if kind == "range":
        scale = draw(st.integers(0, 4))
        lo = draw(st.integers(-(10**9), 10**9))
        return {"range": {"min": lo, "max": lo + draw(st.integers(0, 10**6)), "scale": scale}}
    if kind == "object":
        keys = draw(st.lists(text, max_size=4, unique=True))
        return {"object": {k: draw(variant(depth + 1)) for k in keys}}
    if kind == "array":
        return {
            "array": {"items": [draw(variant(depth + 1)) for _ in range(draw(st.integers(0, 3)))]}
        }
    lo = draw(st.integers(0, 3))
    of = draw(variant(depth + 1))
    return {"array": {"of": of, "min_length": lo, "max_length": lo + draw(st.integers(0, 3))}}


@st.composite
def column(draw, earlier_choices: list[tuple[str, list[Any]]]) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(
            ["VARCHAR", "NUMBER", "FLOAT", "BOOLEAN", "DATE", "TS", "VARIANT", "DYNAMIC", "BY"]
        )
    )
    if kind == "BY" and earlier_choices:
        parent, values = draw(st.sampled_from(earlier_choices))
        cases = {v: draw(weighted(text)) for v in values if isinstance(v, str)}
        spec: dict[str, Any] = {"by": parent, "cases": cases, "default": draw(weighted(text))}
        return {"type": "VARCHAR", "choice": spec}
    if kind in ("VARCHAR", "BY"):
        source = draw(
            st.sampled_from(["choice", "constant", "text"]).map(
                lambda s: {
                    "choice": {"choice": draw(weighted(text))},
                    "constant": {"constant": draw(text)},
                    "text": {"text": {"min_length": 0, "max_length": draw(st.integers(0, 80))}},
                }[s]
            )
        )
        return {"type": "VARCHAR", **source}
    if kind == "NUMBER":
        sql, values, ranged = draw(number_type())
        return {"type": sql, **draw(st.sampled_from([{"choice": draw(weighted(values))}, ranged]))}
    if kind == "FLOAT":
        return {"type": "FLOAT", "choice": draw(weighted(floats))}
    if kind == "BOOLEAN":
        return {"type": "BOOLEAN", "choice": draw(weighted(st.booleans()))}
    if kind == "DATE":
        days = st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)).map(str)
        return {"type": "DATE", "choice": draw(weighted(days))}
    if kind == "TS":
        stamps = st.datetimes(dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30))
        return {
            "type": "TIMESTAMP_NTZ",
            "choice": draw(weighted(stamps.map(dt.datetime.isoformat))),
        }
    if kind == "VARIANT":
        return {"type": "VARIANT", **draw(variant())}
    dynamic = draw(st.sampled_from(["send_time", "run_id", "worker_id", "worker_id_text"]))
    if dynamic == "send_time":
        t = draw(st.sampled_from(["TIMESTAMP_TZ", "TIMESTAMP_NTZ", "DATE", "VARCHAR"]))
        return {"type": t, "send_time": {}}
    if dynamic == "worker_id":
        return {"type": "NUMBER(10,0)", "worker_id": {}}
    return {"type": "VARCHAR", dynamic.removesuffix("_text"): {}}


@st.composite
def workloads(draw) -> dict[str, Any]:
    columns: list[dict[str, Any]] = []
    choices: list[tuple[str, list[Any]]] = []
    for name in draw(st.lists(names, min_size=1, max_size=7, unique=True)):
        c = {"name": name, **draw(column(choices))}
        if c.get("choice") and "by" not in c["choice"] and c["type"] == "VARCHAR":
            choices.append((name, c["choice"]["values"]))
        columns.append(c)
    if draw(st.booleans()):
        uid = {
            "name": draw(names.filter(lambda n: n not in {c["name"] for c in columns})),
            "type": "VARCHAR",
            "unique_id": {},
        }
        columns.insert(draw(st.integers(0, len(columns))), uid)
    return {
        "name": "h",
        "description": "hypothesis",
        "table": "T",
        "entries": draw(st.integers(1, 40)),
        "seed": draw(st.integers(0, 2**32)),
        "columns": columns,
    }


@given(
    workloads(),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=10),
    st.integers(0, 2**31 - 1),
    st.integers(0, 2**63 - 100),
    st.sampled_from([NOW_US, 0, -1, 253402300799999999]),
)
def test_made_up_workloads_have_parity(make_pair, data, run_id, worker_id, start_seq, t):
    note(repr(data))
    replay = WorkloadReplay(from_data(data, "<hypothesis>"))
    fast, oracle = make_pair(replay, run_id, worker_id, start_seq)
    entries = replay.resolved().table.entries
    for n in (1, 3, entries + 5):
        assert fast.batch_len(n, t) == oracle.batch_len(n, t)
        assert fast.next_batch(n, t) == oracle.next_batch(n, t)


def test_floats_render_as_msgspec_renders_them(make_pair):
    data = {
        "name": "f",
        "description": "floats",
        "table": "T",
        "entries": 8,
        "columns": [
            {
                "name": "F",
                "type": "FLOAT",
                "choice": {"values": [5e-324, 1e16, -0.0, 1e-7, math.pi]},
            }
        ],
    }
    fast, oracle = make_pair(WorkloadReplay(from_data(data, "<test>")), "r", 0)
    batch = fast.next_batch(8, NOW_US)
    assert batch == oracle.next_batch(8, NOW_US)
    assert set(batch.splitlines()) == {
        b'{"F":5e-324}',
        b'{"F":1e16}',
        b'{"F":-0.0}',
        b'{"F":1e-7}',
        b'{"F":3.141592653589793}',
    }
