"""Byte parity: the native generator writes exactly what the msgspec path writes.

Every case also runs the oracles (STYLE habit 6): the Python batch equals the per-row
msgspec encodes joined, and every line json.loads to the row rebuilt from
``resort_sales.TABLE`` and the TXID formula. Native == Python == oracles.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sales_oracles import (
    UTC,
    check_lines,
    format_sale_time,
    json_string,
    per_row_encoding,
    split_lines,
    table_entry,
    us_of,
)

from elastic_channels import model as rs
from elastic_channels.rows import ResortGenerator

L = rs.TABLE_LENGTH
MAX_SEQ = rs.MAX_SEQ
NOW_US = 1_764_470_646_123_456  # 2025-11-30T02:44:06.123456Z

ALL_CONTROLS = "".join(chr(c) for c in range(0x20))
NASTY_RUN_IDS = {
    "plain": "run-20261130-024406",
    "empty": "",
    "quotes": "say \"hi\" 'there'",
    "backslashes": "C:\\runs\\\\new\\",
    "escape_lookalikes": '\\u0000 \\n \\" not escapes',
    "all_controls": ALL_CONTROLS,
    "controls_and_del": "a\x00b\x1fc\x7fd\nx\ty\rz",
    "del": "\x7f",
    "non_ascii": "Zürich-Montréal-東京-Ω",
    "emoji": "🎿⛷️🏂 run 👨‍👩‍👧",
    "line_separators": "a\u2028b\u2029c\x85d",
    "html_and_slash": "</script><b>&amp;</b>/",
    "bom_and_nonchar": "\ufeff\uffff\U0010ffff",
    "json_breaker": '","RUN_ID":"x"}\n{"TXID":"',
    "dashes_and_digits": "-1-2-",
    "max_ascii": "r" * rs.MAX_RUN_ID_CHARS,
    "max_two_byte": "é" * rs.MAX_RUN_ID_CHARS,
    "max_four_byte": "🎿" * rs.MAX_RUN_ID_CHARS,
    "max_controls": (ALL_CONTROLS * 5)[: rs.MAX_RUN_ID_CHARS],
}


def _dt(*args: int) -> int:
    return us_of(dt.datetime(*args, tzinfo=UTC))


#: (sale_time_us, the SALE_TIME string it must produce), typed out by hand.
SALE_TIMES = {
    "epoch": (0, "1970-01-01T00:00:00Z"),
    "one_us": (1, "1970-01-01T00:00:00.000001Z"),
    "minus_one_us": (-1, "1969-12-31T23:59:59.999999Z"),
    "minus_one_s": (-1_000_000, "1969-12-31T23:59:59Z"),
    "whole_second": (1_764_470_646_000_000, "2025-11-30T02:44:06Z"),
    "half_second": (1_764_470_646_500_000, "2025-11-30T02:44:06.500000Z"),
    "fraction": (NOW_US, "2025-11-30T02:44:06.123456Z"),
    "y2038": (2**31 * 10**6, "2038-01-19T03:14:08Z"),
    "leap_2000": (_dt(2000, 2, 29), "2000-02-29T00:00:00Z"),
    "leap_2000_last_us": (_dt(2000, 2, 29, 23, 59, 59, 999999), "2000-02-29T23:59:59.999999Z"),
    "after_leap_2000": (_dt(2000, 3, 1), "2000-03-01T00:00:00Z"),
    "leap_2024": (_dt(2024, 2, 29, 12, 34, 56, 789000), "2024-02-29T12:34:56.789000Z"),
    "century_1900_feb28_last_us": (
        _dt(1900, 2, 28, 23, 59, 59, 999999),
        "1900-02-28T23:59:59.999999Z",
    ),
    "century_1900_mar1": (_dt(1900, 3, 1), "1900-03-01T00:00:00Z"),
    "moon_landing": (_dt(1969, 7, 20, 20, 17, 40), "1969-07-20T20:17:40Z"),
    "year_999": (_dt(999, 12, 31, 23, 59, 59), "0999-12-31T23:59:59Z"),
    "min": (rs.MIN_SALE_TIME_US, "0001-01-01T00:00:00Z"),
    "min_plus_one_us": (rs.MIN_SALE_TIME_US + 1, "0001-01-01T00:00:00.000001Z"),
    "year_1_mar1": (_dt(1, 3, 1), "0001-03-01T00:00:00Z"),
    "year_9999_start": (_dt(9999, 1, 1), "9999-01-01T00:00:00Z"),
    "max_whole_second": (rs.MAX_SALE_TIME_US - 999_999, "9999-12-31T23:59:59Z"),
    "max": (rs.MAX_SALE_TIME_US, "9999-12-31T23:59:59.999999Z"),
}

WORKER_IDS = [
    0,
    1,
    2,
    21,
    31,
    4096,
    8191,
    8192,
    123_456_789,
    rs.MAX_WORKER_ID - 1,
    rs.MAX_WORKER_ID,
]


def run_both(native, run_id, worker_id, start_seq, calls):
    """Run ``calls`` [(n, sale_time_us)] on a native and a Python generator; assert
    equal bytes and seq after every call, and the per-row oracle on the Python side.
    Returns the native batches."""
    ng = native.ResortGenerator(run_id, worker_id, start_seq=start_seq)
    pg = ResortGenerator(run_id, worker_id, start_seq=start_seq)
    rows_gen = ResortGenerator(run_id, worker_id, start_seq=start_seq)
    assert ng.seq == pg.seq == start_seq
    batches = []
    for n, t in calls:
        nb = ng.next_batch(n, t)
        pb = pg.next_batch(n, t)
        assert pb == per_row_encoding(rows_gen.next_rows(n, t))
        assert len(nb) == len(pb), (n, t, len(nb), len(pb))
        assert nb == pb, (n, t)
        assert ng.seq == pg.seq == rows_gen.seq
        batches.append(nb)
    return batches


def run_and_check(native, run_id, worker_id, start_seq, calls):
    """``run_both`` plus the json.loads oracle on every native batch."""
    batches = run_both(native, run_id, worker_id, start_seq, calls)
    seq = start_seq
    for (n, t), batch in zip(calls, batches, strict=False):
        assert len(check_lines(batch, run_id, worker_id, seq, t)) == n
        seq += n
    return batches


# --- the oracles themselves -------------------------------------------------------


def test_json_string_oracle_escapes_as_msgspec_documents():
    assert json_string('\x00\x01\x1f\b\t\n\f\r"\\\x7f/\u2028é🎿') == (
        b'"\\u0000\\u0001\\u001f\\b\\t\\n\\f\\r\\"\\\\\x7f/\xe2\x80\xa8\xc3\xa9\xf0\x9f\x8e\xbf"'
    )


@pytest.mark.parametrize(("us", "text"), SALE_TIMES.values(), ids=SALE_TIMES.keys())
def test_sale_time_oracle_matches_hand_typed_strings(us, text):
    assert format_sale_time(us) == text


def test_sale_time_limits_are_year_1_and_year_9999():
    assert rs.MIN_SALE_TIME_US == -62_135_596_800_000_000
    assert rs.MAX_SALE_TIME_US == 253_402_300_799_999_999


# --- parity -----------------------------------------------------------------------


@pytest.mark.parametrize("run_id", NASTY_RUN_IDS.values(), ids=NASTY_RUN_IDS.keys())
def test_run_ids(native, run_id):
    run_and_check(native, run_id, 7, 0, [(3, NOW_US), (0, 0), (2, 0), (1, -1)])


@pytest.mark.parametrize("code", [*range(0x20), 0x7F], ids=lambda c: f"0x{c:02x}")
def test_each_control_character(native, code):
    run_id = f"a{chr(code)}b"
    (batch,) = run_and_check(native, run_id, 3, 0, [(2, NOW_US)])
    if code == 0x7F:
        assert b'"RUN_ID":"a\x7fb"' in batch  # DEL is not escaped
    else:
        # every control is escaped
        assert all(chr(code).encode() not in line for line in split_lines(batch))


@pytest.mark.parametrize("worker_id", WORKER_IDS)
def test_worker_ids(native, worker_id):
    run_and_check(native, "run-w", worker_id, 0, [(5, NOW_US), (L + 1, 0)])


@pytest.mark.parametrize(
    "start_seq",
    [
        0,
        9,
        99_998,
        L - 1,
        L,
        10**9 - 2,
        10**18 - 3,
        MAX_SEQ - 10_000,
        MAX_SEQ - 3,
        MAX_SEQ - 1,
        MAX_SEQ,
    ],
)
def test_start_seq(native, start_seq):
    """Including TXIDs that cross a power of ten and the last seq a row may carry."""
    n = min(L + 1, MAX_SEQ + 1 - start_seq)
    run_and_check(native, "run-s", 5, start_seq, [(1, NOW_US), (n - 1, 0)])


def test_consume_to_max_seq_then_n0_fine_n1_fails(backend):
    g = backend("run-x", 9, start_seq=MAX_SEQ - 4)
    rows = check_lines(g.next_batch(5, NOW_US), "run-x", 9, MAX_SEQ - 4, NOW_US)
    assert rows[-1]["TXID"] == f"run-x-9-{MAX_SEQ}"
    assert g.seq == MAX_SEQ + 1
    assert g.next_batch(0, NOW_US) == b""
    assert g.seq == MAX_SEQ + 1
    with pytest.raises(ValueError, match=r"\bn=1\b.*seq"):
        g.next_batch(1, NOW_US)
    assert g.seq == MAX_SEQ + 1
    assert g.next_batch(0, 0) == b""


def test_consume_to_max_seq_parity(native):
    run_both(native, "run-x", 9, MAX_SEQ - 4, [(5, NOW_US), (0, NOW_US)])


@pytest.mark.parametrize("n", [0, 1, 2, L - 1, L, L + 1, 100_000])
def test_batch_sizes(native, n):
    run_and_check(native, "run-20261130-024406", 11, 0, [(n, NOW_US)])


@pytest.mark.parametrize(("us", "text"), SALE_TIMES.values(), ids=SALE_TIMES.keys())
def test_sale_times(native, us, text):
    (batch,) = run_and_check(native, "run-t", 2, 100, [(3, us)])
    assert batch.count(b'"SALE_TIME":"' + text.encode() + b'"') == 3


def test_empty_batch_is_empty_bytes(backend):
    g = backend("r", 0)
    assert g.next_batch(0, NOW_US) == b""
    assert g.seq == 0


#: Worker 21 starts 173 entries before the end of the table, so from start_seq 170
#: its rows 170..175 straddle the end.
WRAP_WORKER, WRAP_START = 21, 170


def test_table_wrap_parity(native):
    assert WRAP_WORKER * rs.WORKER_STRIDE % L == L - 173
    calls = [(6, NOW_US), (3 * L + 5, NOW_US)]
    run_and_check(native, "run-wrap", WRAP_WORKER, WRAP_START, calls)


def test_table_wraps_around_with_period_table_length(backend):
    start = WRAP_START
    batch = backend("run-wrap", 21, start_seq=start).next_batch(3 * L + 11, NOW_US)
    lines = split_lines(batch)
    assert table_entry(21, start + 3) == rs.TABLE[0]
    assert table_entry(21, start + 2) == rs.TABLE[L - 1]

    def body(line: bytes) -> bytes:  # everything after the TXID
        return line[line.index(b'","RESORT"') :]

    check_lines(batch, "run-wrap", 21, start, NOW_US)
    for k in range(0, len(lines) - L, 97):
        assert body(lines[k]) == body(lines[k + L]), k
    assert len({body(line) for line in lines}) > L // 2  # not one row repeated


_SALE_TIME_RE = re.compile(rb'"SALE_TIME":"[^"]*"')


@pytest.mark.parametrize("same_time", [True, False], ids=["same_time", "mixed_times"])
def test_successive_calls_equal_one_big_call(backend, same_time):
    sizes = [0, 1, 2, L - 1, 5, 0, L + 1, 37, 1]
    times = [NOW_US if same_time else NOW_US + 1_000_003 * k for k in range(len(sizes))]
    g = backend("run-mix", 17, start_seq=42)
    pieces = b"".join(g.next_batch(n, t) for n, t in zip(sizes, times, strict=False))
    whole = backend("run-mix", 17, start_seq=42).next_batch(sum(sizes), NOW_US)
    assert g.seq == 42 + sum(sizes)
    if same_time:
        assert pieces == whole
    else:
        assert pieces != whole
        assert _SALE_TIME_RE.sub(b"", pieces) == _SALE_TIME_RE.sub(b"", whole)


def test_successive_mixed_calls_parity(native):
    sizes = [0, 1, 2, L - 1, 5, 0, L + 1, 37, 1]
    run_both(native, "run-mix", 17, 42, [(n, NOW_US + 1_000_003 * k) for k, n in enumerate(sizes)])


# --- hypothesis over every dimension ---------------------------------------------

_run_ids = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=rs.MAX_RUN_ID_CHARS),
    st.sampled_from(list(NASTY_RUN_IDS.values())),
)
_worker_ids = st.one_of(st.integers(0, rs.MAX_WORKER_ID), st.sampled_from(WORKER_IDS))
_start_seqs = st.one_of(
    st.integers(0, 10**6),
    st.integers(0, MAX_SEQ),
    st.integers(MAX_SEQ - 3 * L, MAX_SEQ),
)
_sizes = st.one_of(
    st.integers(0, 40),
    st.integers(0, 40),
    st.sampled_from([L - 1, L, L + 1]),
    st.integers(0, 3 * L),
)
_times = st.one_of(
    st.integers(rs.MIN_SALE_TIME_US, rs.MAX_SALE_TIME_US),
    st.integers(-(10**12), 10**12),
    st.sampled_from([us for us, _ in SALE_TIMES.values()]),
    st.integers(-(10**8), 10**8).map(lambda s: s * 1_000_000),  # whole seconds
)


def _outcome(gen, n, t):
    try:
        return ("ok", gen.next_batch(n, t), gen.seq)
    except Exception as e:  # compared by class: both backends must agree
        return ("error", type(e), gen.seq)


@given(
    run_id=_run_ids,
    worker_id=_worker_ids,
    start_seq=_start_seqs,
    calls=st.lists(st.tuples(_sizes, _times), min_size=1, max_size=4),
)
def test_hypothesis_native_equals_python(native, run_id, worker_id, start_seq, calls):
    ng = native.ResortGenerator(run_id, worker_id, start_seq=start_seq)
    pg = ResortGenerator(run_id, worker_id, start_seq=start_seq)
    for n, t in calls:
        seq = pg.seq
        got, want = _outcome(ng, n, t), _outcome(pg, n, t)
        assert got == want, (n, t)
        if want[0] == "ok" and n <= 64:
            check_lines(want[1], run_id, worker_id, seq, t)
