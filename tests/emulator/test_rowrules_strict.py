"""The casting rules' edges where DuckDB's own casts read more than the rules
(docs/EMULATOR.md, "How a JSON value becomes a column"): ``"1_000"``, ``"inf"``, zone
names, ``24:00``, offsets past 15:59, ``epoch``, ``(BC)``, blanks other than spaces...
are refused on both parse paths with the SQL path's message, and the documented forms
beside them still land. And a line holding a ``\\r`` keeps its line number (DuckDB's line
reader also ends a line at a ``\\r``)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from elastic_channels.emulator.landing.rowcheck import RowChecker
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

_CHECKERS: dict[tuple[str, tuple[tuple[str, str], ...]], RowChecker] = {}
#: A table with the column types the resort table lacks.
OTHER_COLUMNS = (("ID", "VARCHAR"), ("F", "FLOAT"), ("D", "DATE"))
BASE = json.loads(ResortGenerator("strict", 0).next_batch(1, 1_700_000_000_000_000))
NUMBER_9 = "a number or numeric string for NUMBER(9,0)"
NUMBER_12 = "a number or numeric string for NUMBER(12,2)"
TIMESTAMP = "an ISO-8601 timestamp string (at most 9 fractional digits) or an integer epoch"


def _check(body: bytes, parse: str, columns=COLUMNS):
    key = (parse, tuple(columns))
    if key not in _CHECKERS:
        _CHECKERS[key] = RowChecker(columns, parse=parse)
    return _CHECKERS[key].check(body)


def _one(line: bytes, parse: str, columns=COLUMNS) -> tuple[dict | None, str | None]:
    good, parsed, errors = _check(line + b"\n", parse, columns)
    assert parsed == 1
    if errors:
        assert [e.line for e in errors] == [1]
        return None, errors[0].message
    return json.loads(good), None


def _utc(text: str) -> str:
    return dt.datetime.fromisoformat(text).astimezone(dt.timezone.utc).isoformat()


# (column, JSON value, what lands or None if refused: then the message is "Expected
# <what the type accepts>, got <the value's JSON text> - at `$.<column>`")
STRICT = [
    # NUMBER: Snowflake's numeric literal [+-][digits][.digits][e[+-]digits], spaces around
    ("QUANTITY", "1e3", 1000),
    ("QUANTITY", "1E+3", 1000),
    ("QUANTITY", "-.5e1", -5),
    ("QUANTITY", ".5", 1),
    ("QUANTITY", "+7", 7),
    ("QUANTITY", "  42  ", 42),
    ("QUANTITY", "1_000", None),
    ("QUANTITY", "1_000.5", None),
    ("QUANTITY", "infinity", None),
    ("QUANTITY", "Infinity", None),
    ("QUANTITY", "inf", None),
    ("QUANTITY", "-inf", None),
    ("QUANTITY", "+inf", None),
    ("QUANTITY", "nan", None),
    ("QUANTITY", "+nan", None),
    ("QUANTITY", "5.", None),
    ("QUANTITY", "\t42", None),
    ("QUANTITY", "42\n", None),
    ("QUANTITY", "0x10", None),
    ("UNIT_PRICE", "0.5e1", 5.0),
    ("UNIT_PRICE", "1_000.25", None),
    ("UNIT_PRICE", "-Infinity", None),
    # TIMESTAMP_TZ: YYYY-MM-DD[(T| )hh:mm[:ss[.f{1,9}]][Z|+hh|+hhmm|+hh:mm]], offset <= 15:59
    ("SALE_TIME", "2024-01-01 10:00+15:59", _utc("2024-01-01T10:00+15:59")),
    ("SALE_TIME", "2024-01-01T10:00-15:59", _utc("2024-01-01T10:00-15:59")),
    ("SALE_TIME", "2024-01-01 10:00+14:00", _utc("2024-01-01T10:00+14:00")),
    ("SALE_TIME", "2024-01-01T10:00:00-05", _utc("2024-01-01T10:00:00-05:00")),
    ("SALE_TIME", "2024-01-01T10:00:00+0130", _utc("2024-01-01T10:00:00+01:30")),
    ("SALE_TIME", "2024-01-01T23:59:59.999999999", "2024-01-01T23:59:59.999999+00:00"),
    ("SALE_TIME", "2024-02-29", "2024-02-29T00:00:00+00:00"),
    ("SALE_TIME", "0001-01-01T00:00Z", "0001-01-01T00:00:00+00:00"),
    ("SALE_TIME", " 1700000000 ", "2023-11-14T22:13:20+00:00"),
    ("SALE_TIME", "2024-01-01 10:00 Europe/Paris", None),
    ("SALE_TIME", "2024-01-01T10:00:00 UTC", None),
    ("SALE_TIME", "2024-01-01 24:00:00", None),
    ("SALE_TIME", "2024-01-01T24:00", None),
    ("SALE_TIME", "2024-01-01 10:00+25:00", None),
    ("SALE_TIME", "2024-01-01 10:00+16:00", None),
    ("SALE_TIME", "2024-01-01 10:00-16:00", None),
    ("SALE_TIME", "2024-01-01 10:00+01:00:30", None),
    ("SALE_TIME", "2024-01-01T10:00:00.Z", None),
    ("SALE_TIME", "2024-01-01  10:00", None),
    ("SALE_TIME", "2024-01-01\t10:00", None),
    ("SALE_TIME", "2024-1-5", None),
    ("SALE_TIME", "2024-01-01 1:2:3", None),
    ("SALE_TIME", " 2024-01-01", None),
    ("SALE_TIME", "0000-01-01", None),
    ("SALE_TIME", "10000-01-01", None),
    ("SALE_TIME", "-2024-01-01", None),
    ("SALE_TIME", "2024-01-01 (BC)", None),
    ("SALE_TIME", "infinity", None),
    ("SALE_TIME", "-infinity", None),
    ("SALE_TIME", "epoch", None),
]
_ACCEPTS = {"QUANTITY": NUMBER_9, "UNIT_PRICE": NUMBER_12, "SALE_TIME": TIMESTAMP}


def _norm(column: str, value):
    if column == "SALE_TIME":
        return dt.datetime.fromisoformat(value).isoformat()
    return value


@pytest.mark.parametrize(
    ("column", "value", "lands"), STRICT, ids=[f"{c}={v!r}" for c, v, _ in STRICT]
)
def test_only_the_documented_forms_land(column, value, lands, parse):
    got, error = _one(json.dumps({**BASE, column: value}).encode(), parse)
    if lands is None:
        assert got is None, f"{column}={value!r} landed as {got and got[column]!r}"
        assert error == f"Expected {_ACCEPTS[column]}, got {json.dumps(value)} - at `$.{column}`"
    else:
        assert error is None, error
        assert _norm(column, got[column]) == _norm(column, lands)


OTHER = [
    # FLOAT: a finite number, or a numeric literal as for NUMBER
    ("F", b"1.5", 1.5),
    ("F", b'" 1e3 "', 1000.0),
    ("F", b'"-.25"', -0.25),
    ("F", b"1e-400", 0.0),
    ("F", b'"inf"', None),
    ("F", b'"-inf"', None),
    ("F", b'"Infinity"', None),
    ("F", b'"NaN"', None),
    ("F", b'"nan"', None),
    ("F", b'"1_000"', None),
    ("F", b'"\\t1"', None),
    ("F", b"1e400", None),
    ("F", b'"1e400"', None),
    # DATE: exactly YYYY-MM-DD, year 0001 to 9999
    ("D", b'"2024-02-29"', "2024-02-29"),
    ("D", b'"0001-01-01"', "0001-01-01"),
    ("D", b'"2023-02-29"', None),
    ("D", b'"infinity"', None),
    ("D", b'"-infinity"', None),
    ("D", b'"epoch"', None),
    ("D", b'"0000-01-01"', None),
    ("D", b'"10000-01-01"', None),
    ("D", b'"2024-1-5"', None),
    ("D", b'" 2024-01-01"', None),
    ("D", b'"2024-01-01 (BC)"', None),
]


@pytest.mark.parametrize(("column", "raw", "lands"), OTHER, ids=[f"{c}={r!r}" for c, r, _ in OTHER])
def test_float_and_date_land_only_their_documented_forms(column, raw, lands, parse):
    values = {"ID": b'"x"', "F": b"1", "D": b'"2024-01-01"', column: raw}
    line = b"{" + b", ".join(b'"%s": %s' % (k.encode(), v) for k, v in values.items()) + b"}"
    got, error = _one(line, parse, OTHER_COLUMNS)
    if lands is None:
        assert got is None, f"{column}={raw!r} landed as {got and got[column]!r}"
        accepts = "a number or numeric string" if column == "F" else "an ISO date string"
        assert error == f"Expected {accepts}, got {raw.decode()} - at `$.{column}`"
    else:
        assert error is None, error
        assert got[column] == lands


def _line(**changes) -> bytes:
    return json.dumps({**BASE, **changes}).encode()


def test_a_refused_line_ending_in_cr_keeps_its_line_number(parse):
    """DuckDB's line reader ends a line at a ``\\r`` too: the line it read was not the
    line sent, and the refusal, found by its md5, was reported at line 0."""
    bad = _line(TXID="bad", QUANTITY=True)
    message = f"Expected {NUMBER_9}, got true - at `$.QUANTITY`"
    for body, number in [
        (_line() + b"\n" + bad + b"\r", 2),
        (_line() + b"\n" + bad + b"\r\n" + _line(), 2),
        (bad + b"\r\r\n" + _line(), 1),
        (b"\r\n" + _line() + b"\r\n\r\n" + bad + b"\r", 4),
        (_line() + b"\n\r" + bad, 2),
    ]:
        good, parsed, errors = _check(body, parse)
        assert [(e.line, e.message) for e in errors] == [(number, message)], body
        sent = body.split(b"\n")[number - 1].decode()[:200]
        assert errors[0].excerpt == sent, "the excerpt is the line as sent"
        assert parsed == len(good.splitlines()) + 1


def test_a_cr_inside_a_line_neither_splits_it_nor_loses_its_number(parse):
    """A ``\\r`` between a row's tokens is JSON whitespace: the row lands, once; a raw
    ``\\r`` inside a string is malformed JSON, reported at its own line."""
    spaced = _line(TXID="spaced").replace(b'"QUANTITY": ', b'"QUANTITY":\r ')
    in_string = _line(TXID="in-string").replace(b"in-string", b"in\rstring")
    after = _line(TXID="after", QUANTITY="1_000")
    good, parsed, errors = _check(spaced + b"\n" + in_string + b"\n" + after, parse)
    assert [json.loads(g)["TXID"] for g in good.splitlines()] == ["spaced"]
    assert parsed == 3
    assert [(e.line, e.message) for e in errors] == [
        (2, "DecodeError: malformed JSON"),
        (3, f'Expected {NUMBER_9}, got "1_000" - at `$.QUANTITY`'),
    ]
    assert errors[0].excerpt == in_string.decode()[:200]


def test_a_line_led_by_whitespace_is_refused_for_its_value(parse):
    """Leading tabs and ``\r`` are JSON whitespace: the refusal names the value (it said
    "Expected `object`, got `object`": only spaces were skipped to find the ``{``)."""
    bad = _line(QUANTITY="1_000")
    for lead in (b" \t", b"\r", b"\t\r "):
        assert _one(lead + bad, parse)[1] == f'Expected {NUMBER_9}, got "1_000" - at `$.QUANTITY`'
