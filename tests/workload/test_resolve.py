"""What resolution makes of each source: exact shares, correlated cases, bounds, lengths,
and the same table every time (every worker of a run must replay the same one)."""

from __future__ import annotations

import collections
import datetime as dt
import json
from decimal import Decimal

import msgspec

from elastic_channels.workload import from_data, is_path, resolve, shipped_names
from elastic_channels.workload.resolve import apportion, default_stride, resolve_columns


def workload(*columns, entries=64, seed=1):
    data = {"name": "w", "description": "d", "table": "T", "entries": entries, "seed": seed}
    return from_data({**data, "columns": list(columns)}, "<test>")


def test_choice_shares_are_exact_and_shuffled():
    w = workload(
        {"name": "C", "type": "VARCHAR", "choice": {"values": ["a", "b"], "weights": [3, 1]}}
    )
    values = resolve_columns(w)["C"]
    assert collections.Counter(values) == {"a": 48, "b": 16}
    assert values != sorted(values)


def test_apportion_splits_exactly_by_largest_remainder():
    from fractions import Fraction

    assert apportion(10, [Fraction(1)] * 3) == [4, 3, 3]
    assert apportion(7, [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]) == [3, 2, 2]
    assert sum(apportion(8192, [Fraction(w) for w in (100, 95, 60, 1)])) == 8192


def test_correlated_choices_follow_their_case():
    w = workload(
        {"name": "P", "type": "VARCHAR", "choice": {"values": ["x", "y"]}},
        {
            "name": "C",
            "type": "NUMBER(3,0)",
            "choice": {"by": "P", "cases": {"x": {"values": [1, 2]}}, "default": {"values": [9]}},
        },
        {
            "name": "V",
            "type": "VARIANT",
            "object": {
                "p": {
                    "choice": {"by": "P", "cases": {"x": {"values": ["X"]}, "y": {"values": ["Y"]}}}
                }
            },
        },
    )
    cols = resolve_columns(w)
    for p, c, v in zip(cols["P"], cols["C"], cols["V"], strict=True):
        assert c in ((1, 2) if p == "x" else (9,))
        assert v == {"p": p.upper()}
    x_rows = [c for p, c in zip(cols["P"], cols["C"], strict=True) if p == "x"]
    assert collections.Counter(x_rows) == {1: 16, 2: 16}


def test_ranges_stay_within_bounds_in_whole_steps():
    w = workload(
        {"name": "N", "type": "NUMBER(6,2)", "range": {"min": -5, "max": "5.5"}},
        {"name": "F", "type": "FLOAT", "range": {"min": 0, "max": 1, "scale": 3}},
        {"name": "I", "type": "NUMBER(38,0)", "range": {"min": -(10**30), "max": 10**30}},
        {"name": "D", "type": "DATE", "range": {"min": "2024-02-27", "max": "2024-03-01"}},
        entries=500,
    )
    cols = resolve_columns(w)
    assert all(-5 <= v <= 5.5 and Decimal(repr(v)).as_tuple().exponent >= -2 for v in cols["N"])
    assert all(isinstance(v, float) and 0 <= v <= 1 for v in cols["F"])
    assert all(isinstance(v, int) and abs(v) <= 10**30 for v in cols["I"])
    assert set(cols["D"]) == {dt.date(2024, 2, 27) + dt.timedelta(days=k) for k in range(4)}


def test_text_and_arrays_have_their_lengths():
    w = workload(
        {
            "name": "T",
            "type": "VARCHAR(12)",
            "text": {"prefix": "p-", "min_length": 3, "max_length": 10, "alphabet": "ab"},
        },
        {
            "name": "W",
            "type": "VARCHAR",
            "text": {"min_length": 2, "max_length": 4, "words": ["hi", "yo"]},
        },
        {
            "name": "A",
            "type": "VARIANT",
            "array": {"of": {"constant": 1}, "min_length": 1, "max_length": 3},
        },
        {
            "name": "I",
            "type": "VARIANT",
            "array": {"items": [{"constant": "a"}, {"range": {"min": 0, "max": 1}}]},
        },
    )
    cols = resolve_columns(w)
    assert all(
        t.startswith("p-") and 3 <= len(t) - 2 <= 10 and set(t[2:]) <= {"a", "b"} for t in cols["T"]
    )
    assert all(2 <= len(s.split(" ")) <= 4 and set(s.split(" ")) <= {"hi", "yo"} for s in cols["W"])
    assert {len(a) for a in cols["A"]} == {1, 2, 3}
    assert all(a[0] == "a" and a[1] in (0, 1) for a in cols["I"])


def test_resolution_is_deterministic_and_columns_independent():
    a = {"name": "A", "type": "VARCHAR", "text": {"min_length": 1, "max_length": 9}}
    b = {"name": "B", "type": "NUMBER(5,0)", "range": {"min": 0, "max": 999}}
    one, two = resolve(workload(a, b)), resolve(workload(a, b))
    assert one.table == two.table
    with_more = resolve_columns(workload(a, {"name": "X", "type": "BOOLEAN", "constant": True}, b))
    assert with_more["A"] == resolve_columns(workload(a, b))["A"]
    assert with_more["B"] == resolve_columns(workload(a, b))["B"]
    assert resolve_columns(workload(a, b, seed=2))["A"] != with_more["A"]


def test_constants_fold_into_the_pieces_beside_them():
    w = workload(
        {"name": "K", "type": "VARCHAR", "constant": "k"},
        {"name": "C", "type": "VARCHAR", "choice": {"values": ["a"]}},
        {"name": "Z", "type": "VARIANT", "constant": {"z": [1, None]}},
    )
    table = resolve(w).table
    assert table.pieces == [b'{"K":"k","C":"a"']
    assert table.template == [("slot", b""), ("text", b',"Z":{"z":[1,null]}}\n')]


def test_default_stride_is_coprime_and_the_resort_models():
    assert default_stride(8192) == 5063
    assert default_stride(1) == 1
    for n in (2, 3, 100, 65536):
        s = default_stride(n)
        assert 1 <= s <= n and __import__("math").gcd(s, n) == 1


def test_shipped_workloads_are_found_by_name_and_paths_are_not_names():
    assert shipped_names()[0] == "resort-sales"
    assert {"iot-telemetry", "clickstream", "wide-events"} <= set(shipped_names())
    assert is_path("my.yaml") and is_path("dir/w") and not is_path("iot-telemetry")


def test_values_render_as_json_the_column_takes():
    w = workload(
        {"name": "TS", "type": "TIMESTAMP_TZ", "constant": "2025-01-02T03:04:05.5+01:00"},
        {"name": "NTZ", "type": "TIMESTAMP_NTZ", "constant": "2025-01-02T03:04:05"},
        {"name": "P", "type": "NUMBER(12,2)", "constant": "399.00"},
    )
    row = json.loads(resolve(w).table.template[-1][1].replace(b"}\n", b"}"))
    assert row == {
        "TS": "2025-01-02T03:04:05.500000+01:00",
        "NTZ": "2025-01-02T03:04:05",
        "P": 399.0,
    }
    assert msgspec.json.encode(399.0) == b"399.0"


def test_distinct_text_shares_a_few_strings_equally():
    spec = {"min_length": 5, "max_length": 9, "distinct": 4}
    values = resolve_columns(workload({"name": "T", "type": "VARCHAR", "text": spec}))["T"]
    assert sorted(collections.Counter(values).values()) == [16, 16, 16, 16]
    assert all(5 <= len(v) <= 9 for v in values)
