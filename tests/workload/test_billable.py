"""Billable bytes (Snowflake bills the values, not the keys): both backends count the same
bytes for the same batch, counted as the batch is sized, and the count is what a scan of
the written rows finds, by an oracle that calls neither generator (json.loads of each
line, each value measured by the rule). Resort sales and every shipped workload."""

from __future__ import annotations

import json

import pytest

from elastic_channels.billable import body_billable_bytes, rendered_value_bytes
from elastic_channels.workload import shipped_names

NOW_US = 1_764_470_646_123_456
RUN_IDS = ["run-20261130-024406", 'q"\\\x00\x1f é 😀 \u2028']
#: (worker_id, start_seq, batch sizes)
INPUTS = [(0, 0, [1, 7, 100]), (3, 9_999_990, [11, 2_000])]


class Num(str):
    """A number as it was written (json.loads' parse hooks keep its text)."""


def _text(v: object) -> str:
    """``v`` (from json.loads with numbers kept as written) as compact JSON."""
    if isinstance(v, Num):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(f"{_text(k)}:{_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_text(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def oracle(body: bytes) -> int:
    """The values of ``body`` by the rule, from json.loads (not msgspec, not Rust): a
    string its UTF-8 text, null nothing, anything else its text as written."""
    total = 0
    for line in body.decode().split("\n")[:-1]:  # not splitlines: U+2028 is no newline
        for v in json.loads(line, parse_float=Num, parse_int=Num).values():
            if v is None:
                continue
            total += len((v if type(v) is str else _text(v)).encode("utf-8"))
    return total


def test_the_rule_on_single_values():
    cases = [(b'"Vail"', 4), (b'"a\\"b"', 3), (b'"\\u00e9"', 2), ('"é"'.encode(), 2),
             (b'"\\ud83d\\ude00"', 4), (b"null", 0), (b"true", 4), (b"5.94", 4),
             (b'"2026-01-13T00:00:00.000001Z"', 27), (b'{"k":[1,2]}', 11)]  # fmt: skip
    for rendered, want in cases:
        assert rendered_value_bytes(rendered) == want, rendered


def test_the_native_body_count_is_the_python_one(native):
    body = b'{"A":"xy","N":12,"Z":null}\n\n{"\\u0041":"\\"","V":{"k":[1,"\\u00e9"]}}\nnot json\n[1]'
    assert native.billable_bytes(body) == body_billable_bytes(body) == 2 + 2 + 1 + 18
    with pytest.raises(TypeError, match="body must be bytes, got str"):
        native.billable_bytes("{}")


@pytest.mark.parametrize("run_id", RUN_IDS, ids=["plain", "escapes"])
def test_resort_billable_bytes_on_both_backends(backend, run_id):
    for worker_id, start_seq, sizes in INPUTS:
        gen = backend(run_id, worker_id, start_seq)
        assert gen.last_billable_bytes is None
        for n in sizes:
            want = gen.billable_len(n, NOW_US)
            body = gen.next_batch(n, NOW_US)
            assert gen.last_billable_bytes == want == oracle(body), (backend, n)
            assert 0 < want < len(body)


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("run_id", RUN_IDS, ids=["plain", "escapes"])
def test_every_shipped_workload_counts_alike_on_both_backends(replays, make_pair, name, run_id):
    for worker_id, start_seq, sizes in INPUTS:
        fast, slow = make_pair(replays[name], run_id, worker_id, start_seq)
        for n in sizes:
            assert fast.billable_len(n, NOW_US) == slow.billable_len(n, NOW_US)
            body = fast.next_batch(n, NOW_US)
            assert slow.next_batch(n, NOW_US) == body
            want = oracle(body)
            assert fast.last_billable_bytes == slow.last_billable_bytes == want, (name, n)
            assert body_billable_bytes(body) == want


def test_a_table_made_without_values_bills_none(native, replays):
    t = replays["clickstream"].resolved().table
    bare = native.WorkloadTable(t.entries, t.stride, t.pieces, t.ids, t.template)
    gen = native.WorkloadGenerator(bare, "r", 1)
    assert gen.billable_len(10, NOW_US) is None
    gen.next_batch(10, NOW_US)
    assert gen.last_billable_bytes is None
    with pytest.raises(ValueError, match="value_bytes: 1 numbers for"):
        native.WorkloadTable(t.entries, t.stride, t.pieces, t.ids, t.template, value_bytes=[1])
    with pytest.raises(TypeError, match=r"value_bytes\[0\] must be an int, got str"):
        native.WorkloadTable(t.entries, t.stride, t.pieces, t.ids, t.template,
                             value_bytes=["x"] * len(t.pieces))  # fmt: skip
