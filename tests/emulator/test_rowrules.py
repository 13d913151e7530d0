"""The casting rules (docs/EMULATOR.md, "How a JSON value becomes a column"), each on
both sides of its edge, and that a row's fate never depends on its neighbours
(issue #12 items 3 and 7)."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest
import zstandard
from emulator_support import ROWS_PATH, EmulatorProcess

from elastic_channels.emulator.rowcheck import RowChecker
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

CHECKER = RowChecker(COLUMNS)
D = decimal.Decimal


def _row(**changes) -> dict:
    row = json.loads(ResortGenerator("rule", 0).next_batch(1, 1_700_000_000_000_000))
    row.update(changes)
    return row


def _one(row: dict | bytes) -> tuple[dict | None, str | None]:
    """(the landed row, or None; the error, or None) for one line."""
    line = row if isinstance(row, bytes) else json.dumps(row).encode()
    good, parsed, errors = CHECKER.check(line + b"\n")
    assert parsed == 1
    if errors:
        return None, errors[0].message
    return json.loads(good), None


# (column, JSON value, what lands or None if refused)
RULES = [
    # NUMBER(9,0): numbers and numeric strings, rounded half away from zero, <= 9 digits
    ("QUANTITY", 3, 3),
    ("QUANTITY", "3", 3),
    ("QUANTITY", " 42 ", 42),
    ("QUANTITY", 1.5, 2),
    ("QUANTITY", -1.5, -2),
    ("QUANTITY", 1.49, 1),
    ("QUANTITY", "1e3", 1000),
    ("QUANTITY", 999999999, 999999999),
    ("QUANTITY", 1000000000, None),
    ("QUANTITY", 999999999.5, None),  # rounds to 10 digits
    ("QUANTITY", True, None),
    ("QUANTITY", "many", None),
    ("QUANTITY", [1], None),
    ("QUANTITY", None, None),
    # NUMBER(12,2)
    ("UNIT_PRICE", 5.94, 5.94),
    ("UNIT_PRICE", "5.94", 5.94),
    ("UNIT_PRICE", 1.005, 1.01),
    ("UNIT_PRICE", 9999999999.99, 9999999999.99),
    ("UNIT_PRICE", 9999999999.995, None),
    ("UNIT_PRICE", 12345678901.5, None),
    ("UNIT_PRICE", "NaN", None),
    ("UNIT_PRICE", False, None),
    # VARCHAR: strings as is, numbers and booleans as their JSON text
    ("RESORT", "Vail", "Vail"),
    ("RESORT", "Zürich \u2603", "Zürich \u2603"),
    ("RESORT", 12, "12"),
    ("RESORT", 1.5, "1.5"),
    ("RESORT", True, "true"),
    ("RESORT", {"a": 1}, None),
    ("RESORT", ["x"], None),
    ("RESORT", None, None),
    # TIMESTAMP_TZ: ISO-8601 strings (no offset = UTC) or integer epochs by magnitude
    ("SALE_TIME", "2023-11-14T22:13:20.123456Z", "2023-11-14T22:13:20.123456+00:00"),
    ("SALE_TIME", "2023-11-14 23:13:20+01:00", "2023-11-14T22:13:20+00:00"),
    ("SALE_TIME", "2023-11-14T22:13:20", "2023-11-14T22:13:20+00:00"),
    ("SALE_TIME", "2023-11-14", "2023-11-14T00:00:00+00:00"),
    ("SALE_TIME", 1700000000, "2023-11-14T22:13:20+00:00"),  # seconds
    ("SALE_TIME", 1700000000123, "2023-11-14T22:13:20.123000+00:00"),  # milliseconds
    ("SALE_TIME", 1700000000123456, "2023-11-14T22:13:20.123456+00:00"),  # microseconds
    ("SALE_TIME", "1700000000", "2023-11-14T22:13:20+00:00"),
    ("SALE_TIME", "2023-13-14T22:13:20Z", None),
    ("SALE_TIME", "not a time", None),
    ("SALE_TIME", 1.5, None),
    ("SALE_TIME", True, None),
]


def _norm(column: str, value):
    if column == "SALE_TIME":
        return dt.datetime.fromisoformat(value).isoformat()
    if column in ("UNIT_PRICE", "AMOUNT"):
        return D(str(value))
    return value


@pytest.mark.parametrize(
    ("column", "value", "lands"), RULES, ids=[f"{c}={v!r}" for c, v, _ in RULES]
)
def test_casting_rule(column, value, lands):
    got, error = _one(_row(**{column: value}))
    if lands is None:
        assert got is None, f"{column}={value!r} landed as {got and got[column]!r}"
        assert f"$.{column}" in error or column in error, error
    else:
        assert error is None, error
        assert _norm(column, got[column]) == _norm(column, lands)


def test_key_rules():
    row = _row()
    assert _one({**row, "EXTRA": 1})[1] == "Object contains unknown field `EXTRA`"
    missing = {k: v for k, v in row.items() if k != "ITEM"}
    assert _one(missing)[1] == "Object missing required field `ITEM`"
    reordered = dict(reversed(list(row.items())))
    assert _one(reordered)[1] is None, "key order does not matter"
    dup = json.dumps(row)[:-1].encode() + b', "TXID": "again"}'
    assert "duplicated field `TXID`" in _one(dup)[1]
    assert "Expected `object`" in _one(b"[1, 2]")[1]
    assert "malformed JSON" in _one(b'{"TXID": ')[1]
    assert "invalid UTF-8" in _one(b'{"TXID": "\xc3\x28"}')[1]


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(tmp_path_factory.mktemp("rules") / "emu").start()
    proc.token = proc.scoped_token()
    yield proc
    assert proc.stop() == 0, proc.stderr()


def test_a_row_lands_or_not_whatever_its_neighbours(emu):
    """The same odd-but-valid and invalid values, alone in a clean request and beside a
    malformed line: the same rows land either way."""
    odd = [
        _row(TXID="odd-1", QUANTITY="7"),
        _row(TXID="odd-2", QUANTITY=1.5),
        _row(TXID="odd-3", RESORT=12),
        _row(TXID="odd-4", SALE_TIME=1700000000),
    ]
    refused = [_row(TXID="bad-1", QUANTITY=True), _row(TXID="bad-2", UNIT_PRICE="x")]
    headers = {"Authorization": f"Bearer {emu.token}", "Content-Type": "application/x-ndjson",
               "Content-Encoding": "zstd"}  # fmt: skip
    z = zstandard.ZstdCompressor()
    for run, extra in (("alone", b""), ("beside", b"{not json at all\n")):
        rows = [{**r, "RUN_ID": run} for r in odd + refused]
        body = extra + b"".join(json.dumps(r).encode() + b"\n" for r in rows)
        status, _, reply = emu.request("POST", ROWS_PATH.format(rid=run), z.compress(body), headers)
        assert status == 200, reply
    assert emu.wait_landed(30)
    landed = emu.query("SELECT RUN_ID, TXID FROM RESORT_SALES ORDER BY RUN_ID, TXID")
    by_run: dict[str, list[str]] = {}
    for r in landed:
        by_run.setdefault(r["RUN_ID"], []).append(r["TXID"])
    assert by_run == {"alone": ["odd-1", "odd-2", "odd-3", "odd-4"],
                      "beside": ["odd-1", "odd-2", "odd-3", "odd-4"]}  # fmt: skip
