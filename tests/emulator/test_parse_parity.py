"""The native parse path against the SQL path, its oracle: random and hostile lines land
the same rows and are refused with the same line numbers, messages and excerpts on both
(hypothesis; ``HYPOTHESIS_PROFILE=dev`` for many more examples, seed printed)."""

from __future__ import annotations

import json

import pytest
from emulator_support import require_native_parse
from hypothesis import example, given
from hypothesis import strategies as st

from elastic_channels.emulator.landing.rowcheck import RowChecker
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

COLUMN_TYPES = dict(COLUMNS)
BASE = json.loads(ResortGenerator("parity", 0).next_batch(1, 1_700_000_000_000_000))


@pytest.fixture(scope="module")
def checkers() -> dict[tuple[str, bool], RowChecker]:
    require_native_parse()
    return {
        (parse, keys): RowChecker(COLUMNS, parse=parse, check_keys=keys)
        for parse in ("native", "sql")
        for keys in (True, False)
    }


digits = st.text("0123456789", min_size=1, max_size=40)
numeric_text = st.builds(
    lambda sign, i, f, e, pad: f"{pad}{sign}{i}{f}{e}{pad}",
    st.sampled_from(["", "-", "+"]),
    digits,
    st.sampled_from(["", "."]).flatmap(lambda dot: st.just("") if not dot else digits.map("."
                                                                                        .__add__)),
    st.sampled_from(["", "e3", "E-2", "e+400"]),
    st.sampled_from(["", " ", "\t"]),
)  # fmt: skip
two = st.integers(0, 99).map("{:02d}".format)


def _pick(valid: st.SearchStrategy, edges: list[str]) -> st.SearchStrategy:
    """Mostly valid parts (so whole valid values are common), sometimes an edge."""
    return st.one_of(valid, valid, valid, st.sampled_from(edges))


iso = st.builds(
    lambda y, mo, d, sep, h, mi, s, frac, off: f"{y}-{mo}-{d}{sep}{h}:{mi}{s}{frac}{off}",
    _pick(st.integers(1, 9999).map("{:04d}".format), ["0000", "10000", "-2023", "23"]),
    _pick(st.integers(1, 12).map("{:02d}".format), ["00", "13", "2"]),
    _pick(st.integers(1, 28).map("{:02d}".format), ["29", "30", "31", "32", "00", "1"]),
    _pick(st.sampled_from(["T", " "]), ["t", "  ", "_"]),
    _pick(st.integers(0, 23).map("{:02d}".format), ["24", "7", "99"]),
    _pick(st.integers(0, 59).map("{:02d}".format), ["60", "5"]),
    _pick(st.sampled_from(["", ":00", ":07", ":59"]), [":60", ":5", ":"]),
    _pick(st.integers(0, 9).map(lambda n: "." + "987654321"[:n] if n else ""),
          [".", ".9876543210", ".987654321098"]),
    _pick(st.sampled_from(["", "Z", "+01:00", "-05:30", "+0130", "-05", "+14:00"]),
          ["+25:00", " UTC", "z", "+01:0", " Europe/Paris", "+1"]),
)  # fmt: skip
date_only = st.builds(lambda y, mo, d: f"{y:04d}-{mo:02d}-{d:02d}", st.integers(0, 9999),
                      st.integers(0, 13), st.integers(0, 32))  # fmt: skip
EPOCH_EDGES = [0, 10**10, 31535999999, 31536000000, 31536000000000, 10**16,
               31536000000000000, 2**63 - 1, 2**63, -(2**63), -1]  # fmt: skip
epochs = st.sampled_from(EPOCH_EDGES) | st.integers()
anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


def value_for(sf_type: str) -> st.SearchStrategy:
    t = sf_type.upper()
    if t.startswith("NUMBER"):
        return st.one_of(
            st.integers(-(10**40), 10**40),
            st.floats(allow_nan=False, allow_infinity=False),
            numeric_text,
            st.decimals(allow_nan=False, allow_infinity=False).map(str),
            anything,
        )
    if t.startswith("TIMESTAMP"):
        return st.one_of(iso, iso, iso, date_only, epochs, epochs.map(str),
                         epochs.map(" {} ".format), st.floats(), anything)  # fmt: skip
    return st.one_of(st.text(max_size=30), st.integers(-(10**30), 10**30), st.floats(),
                     st.booleans(), anything, st.text("{[]}\"\\ ", max_size=5))  # fmt: skip


@st.composite
def row_line(draw) -> bytes:
    row = dict(BASE)
    for name in draw(st.lists(st.sampled_from(list(COLUMN_TYPES)), max_size=3, unique=True)):
        row[name] = draw(value_for(COLUMN_TYPES[name]))
    keys = draw(st.sampled_from(["as is", "reversed", "drop", "extra", "dup"]))
    items = list(row.items())
    if keys == "reversed":
        items.reverse()
    elif keys == "drop":
        items.pop(draw(st.integers(0, len(items) - 1)))
    elif keys == "extra":
        items.append((draw(st.sampled_from(["EXTRA", "txid", "TXID "])), 1))
    elif keys == "dup":
        items.append(items[draw(st.integers(0, len(items) - 1))])
    text = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in items) + "}"
    line = text.encode()
    damage = draw(st.sampled_from(["none"] * 6 + ["cut", "byte", "comma", "nan", "pad", "cr"]))
    if damage == "cut":
        line = line[: draw(st.integers(0, len(line)))]
    elif damage == "byte":
        i = draw(st.integers(0, len(line)))
        line = (
            line[:i] + draw(st.sampled_from([b"{", b"}", b'"', b",", b"\\", b" ", b"x"])) + line[i:]
        )
    elif damage == "comma":
        line = line[:-1] + b",}"
    elif damage == "nan":
        line = line.replace(b'"QUANTITY": ', b'"QUANTITY": NaN, "Q": ', 1)
    elif damage == "pad":
        line = b" \t" + line + b"  "
    elif damage == "cr":
        line += b"\r"
    return line


bodies = st.lists(row_line() | st.sampled_from([b"", b"  ", b"[1]", b"null", b"7", b'"x"']),
                  min_size=1, max_size=8).map(b"\n".join)  # fmt: skip


@given(column=st.sampled_from(list(COLUMN_TYPES)), data=st.data())
def test_one_value_lands_or_is_refused_alike(checkers, column, data):
    """Each column's rule alone: one changed value per line, many lines per body."""
    values = data.draw(st.lists(value_for(COLUMN_TYPES[column]), min_size=1, max_size=20))
    body = b"\n".join(_with(**{column: v}) for v in values)
    assert _outcome(checkers[("native", True)], body) == _outcome(checkers[("sql", True)], body)


@given(values=st.lists(iso, min_size=20, max_size=40))
def test_iso_timestamps_land_alike(checkers, values):
    """ISO-8601 strings, mostly valid, in every form (offsets, fractions, separators)."""
    body = b"\n".join(_with(SALE_TIME=v) for v in values)
    assert _outcome(checkers[("native", True)], body) == _outcome(checkers[("sql", True)], body)


def _outcome(checker: RowChecker, body: bytes):
    good, parsed, errors = checker.check(body)
    return sorted(good.splitlines()), parsed, errors


def _with(**changes) -> bytes:
    return json.dumps({**BASE, **changes}).encode()


#: Each rule's edges, and forms only the SQL path reads (the native one leaves them).
EDGES = b"\n".join([
    _with(QUANTITY=1.5), _with(QUANTITY=-1.5), _with(QUANTITY=999999999.5),
    _with(QUANTITY="1_000"), _with(QUANTITY=" 42 "), _with(QUANTITY="1e3"),
    _with(UNIT_PRICE=1.005), _with(UNIT_PRICE="0.12499999999999999999"),
    _with(UNIT_PRICE=0.12499999999999999999), _with(UNIT_PRICE=9999999999.995),
    _with(SALE_TIME="2023-11-14T22:13:20.9999999Z"), _with(SALE_TIME="infinity"),
    _with(SALE_TIME="2023-11-14T22:13:20.1234567891"), _with(SALE_TIME="2023-11-14 (BC)"),
    _with(SALE_TIME="2023-11-14T22:13:20 Europe/Paris"), _with(SALE_TIME=" 1700000000 "),
    _with(SALE_TIME="2023-11-14 23:13:20+01:00"), _with(SALE_TIME="2023-11-14T17:13:20-05"),
    _with(SALE_TIME="2023-11-14T23:43:20.5+0130"),
    *(_with(SALE_TIME=n) for n in EPOCH_EDGES), _with(RESORT=1e3), _with(RESORT=-0),
    _with(RESORT=12345678901234567890123), _with(WORKER_ID=True),
])  # fmt: skip


@given(body=bodies, check_keys=st.booleans())
@example(body=EDGES, check_keys=True)
@example(body=EDGES, check_keys=False)
def test_native_and_sql_land_and_refuse_the_same(checkers, body, check_keys):
    native = _outcome(checkers[("native", check_keys)], body)
    sql = _outcome(checkers[("sql", check_keys)], body)
    assert native == sql, body
