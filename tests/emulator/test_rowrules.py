"""The casting rules (docs/EMULATOR.md, "How a JSON value becomes a column"), each on
both sides of its edge, on both parse paths (native and sql), and that a row's fate never
depends on its neighbours (issue #12 items 3 and 7)."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest
import zstandard
from emulator_support import ROWS_PATH, EmulatorProcess, require_native_parse

from elastic_channels.emulator.landing.parse_backends import PARSE_BACKENDS
from elastic_channels.emulator.landing.rowcheck import RowChecker
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

D = decimal.Decimal
_CHECKERS: dict[str, RowChecker] = {}


def _checker(parse: str) -> RowChecker:
    if parse not in _CHECKERS:
        _CHECKERS[parse] = RowChecker(COLUMNS, parse=parse)
    return _CHECKERS[parse]


def _row(**changes) -> dict:
    row = json.loads(ResortGenerator("rule", 0).next_batch(1, 1_700_000_000_000_000))
    row.update(changes)
    return row


def _one(row: dict | bytes, parse: str) -> tuple[dict | None, str | None]:
    """(the landed row, or None; the error, or None) for one line, on one parse path."""
    line = row if isinstance(row, bytes) else json.dumps(row).encode()
    good, parsed, errors = _checker(parse).check(line + b"\n")
    assert parsed == 1
    if errors:
        return None, errors[0].message
    return json.loads(good), None


def _epoch(n: int, unit: str) -> str:
    """The instant ``n`` ``unit`` after the epoch, to the microsecond (floored)."""
    us = n * {"s": 10**6, "ms": 10**3}[unit] if unit in ("s", "ms") else n
    us = us // 1000 if unit == "ns" else us
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (epoch + dt.timedelta(microseconds=us)).isoformat()


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
    ("QUANTITY", "1_000", None),  # DuckDB reads it; no numeric literal has "_"
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
    # ... on both sides of each magnitude edge (31536000000 = the ms in a year), both signs
    ("SALE_TIME", 31535999999, _epoch(31535999999, "s")),
    ("SALE_TIME", 31536000000, _epoch(31536000000, "ms")),  # 1971-01-01
    ("SALE_TIME", "31536000000", _epoch(31536000000, "ms")),
    ("SALE_TIME", -31535999999, _epoch(-31535999999, "s")),
    ("SALE_TIME", -31536000000, _epoch(-31536000000, "ms")),  # 1969-01-01
    ("SALE_TIME", 31535999999999, _epoch(31535999999999, "ms")),
    ("SALE_TIME", 31536000000000, _epoch(31536000000000, "us")),
    ("SALE_TIME", 31535999999999999, _epoch(31535999999999999, "us")),
    ("SALE_TIME", 31536000000000000, _epoch(31536000000000000, "ns")),
    ("SALE_TIME", 1700000000123456789, "2023-11-14T22:13:20.123456+00:00"),  # ns, to the µs
    ("SALE_TIME", 9223372036854775807, _epoch(9223372036854775807, "ns")),
    ("SALE_TIME", 9223372036854775808, None),  # past 64 bits
    ("SALE_TIME", -9223372036854775807, _epoch(-9223372036854775807 // 1000 + 1, "us")),
    ("SALE_TIME", -9223372036854775808, None),  # no magnitude (abs overflows)
    # ... and at most 9 fractional digits (Snowflake's FF9), kept to the microsecond
    ("SALE_TIME", "2023-11-14T22:13:20.123456789Z", "2023-11-14T22:13:20.123456+00:00"),
    ("SALE_TIME", "2023-11-14T22:13:20.999999999+01:00", "2023-11-14T21:13:20.999999+00:00"),
    ("SALE_TIME", "2023-11-14 22:13:20.1", "2023-11-14T22:13:20.100000+00:00"),
    ("SALE_TIME", "2023-11-14T22:13:20.1234567891Z", None),
    ("SALE_TIME", "2023-11-14T22:13:20.1234567891", None),
    ("SALE_TIME", "2023-11-14T22:13:20.000000000000+01:00", None),
    ("SALE_TIME", "2023-13-14T22:13:20Z", None),
    # ... and only ISO-8601 (DuckDB's cast reads zone names, 24:00 and any offset)
    ("SALE_TIME", "2023-11-14 23:13:20+15:59", "2023-11-14T07:14:20+00:00"),
    ("SALE_TIME", "2023-11-14 23:13:20+16:00", None),
    ("SALE_TIME", "2024-01-01 10:00+25:00", None),
    ("SALE_TIME", "2024-01-01 10:00 Europe/Paris", None),
    ("SALE_TIME", "2024-01-01 24:00:00", None),
    ("SALE_TIME", "infinity", None),
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
def test_casting_rule(column, value, lands, parse):
    got, error = _one(_row(**{column: value}), parse)
    if lands is None:
        assert got is None, f"{column}={value!r} landed as {got and got[column]!r}"
        assert f"$.{column}" in error or column in error, error
    else:
        assert error is None, error
        assert _norm(column, got[column]) == _norm(column, lands)


def test_key_rules(parse):
    row = _row()
    assert _one({**row, "EXTRA": 1}, parse)[1] == "Object contains unknown field `EXTRA`"
    missing = {k: v for k, v in row.items() if k != "ITEM"}
    assert _one(missing, parse)[1] == "Object missing required field `ITEM`"
    reordered = dict(reversed(list(row.items())))
    assert _one(reordered, parse)[1] is None, "key order does not matter"
    dup = json.dumps(row)[:-1].encode() + b', "TXID": "again"}'
    assert "duplicated field `TXID`" in _one(dup, parse)[1]
    assert "Expected `object`" in _one(b"[1, 2]", parse)[1]
    assert "malformed JSON" in _one(b'{"TXID": ', parse)[1]
    assert "invalid UTF-8" in _one(b'{"TXID": "\xc3\x28"}', parse)[1]


@pytest.fixture(scope="module", params=PARSE_BACKENDS)
def emu(request, tmp_path_factory):
    if request.param == "native":
        require_native_parse()
    rules = tmp_path_factory.mktemp(f"rules-{request.param}") / "emu"
    proc = EmulatorProcess(rules, "--parse", request.param).start()
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


PIPE = "/v2/streaming/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
DATA = "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"


class _Channel:
    """One channel of the real emulator, opened as the SDK opens it."""

    def __init__(self, emu, name: str) -> None:
        self.emu, self.name = emu, name
        self.headers = {"Authorization": f"Bearer {emu.token}", "Content-Type": "application/json"}
        status, _, body = emu.request("PUT", f"{PIPE}/channels/{name}", b"{}", self.headers)
        assert status == 200, body
        self.token = json.loads(body)["next_continuation_token"]

    def append(self, rows: list[dict], offset: str, *, end: bytes = b"\n") -> None:
        body = b"".join(json.dumps(r).encode() + end for r in rows)
        path = (
            f"{DATA}/channels/{self.name}/rows?requestId={offset}"
            f"&continuationToken={self.token}&offsetToken={offset}"
        )
        headers = {**self.headers, "Content-Type": "application/x-ndjson"}
        status, _, reply = self.emu.request("POST", path, body, headers)
        assert status == 200, reply
        self.token = json.loads(reply)["next_continuation_token"]

    def status(self) -> dict:
        body = json.dumps({"channel_names": [self.name]}).encode()
        status, _, out = self.emu.request("POST", f"{PIPE}:bulk-channel-status", body, self.headers)
        assert status == 200, out
        return json.loads(out)["channel_statuses"][self.name]


def test_the_rules_hold_through_the_lander_and_bad_rows_show_in_channel_status(emu):
    """Every rule above, landed by the real DuckDB lander: what lands is what the rule
    says, and the refused rows are counted in bulk channel status with the last one's
    message and the offset token of the request that held it."""
    channel = _Channel(emu, "RULES")
    rows = [_row(TXID=f"rule-{i}", RUN_ID="rules", **{c: v}) for i, (c, v, _) in enumerate(RULES)]
    channel.append(rows, "r1")
    clean = [_row(TXID=f"clean-{i}", RUN_ID="rules") for i in range(5)]
    channel.append(clean, "r2")
    assert emu.wait_landed(60)
    landed = {r["TXID"]: r for r in emu.query("SELECT * FROM RESORT_SALES WHERE RUN_ID = 'rules'")}
    bad = [i for i, (_, _, lands) in enumerate(RULES) if lands is None]
    for i, (column, value, lands) in enumerate(RULES):
        got = landed.get(f"rule-{i}")
        if lands is None:
            assert got is None, f"{column}={value!r} landed as {got and got[column]!r}"
        else:
            assert got is not None, f"{column}={value!r} did not land"
            assert _norm(column, got[column]) == _norm(column, lands), (column, value)
    assert sum(t.startswith("clean-") for t in landed) == 5
    st = channel.status()
    assert st["rows_error_count"] == len(bad)
    assert st["rows_parsed"] == len(RULES) + 5
    assert st["last_error_message"].startswith(f"line {bad[-1] + 1}: ")
    assert st["last_error_offset_upper_bound"] == "r1", "the request holding the last error"
    assert st["last_committed_offset_token"] == "r2"

    late = [*clean[:2], _row(TXID="late", SALE_TIME="2023-11-14T22:13:20.1234567891Z")]
    channel.append([{**r, "RUN_ID": "rules-late"} for r in late], "r3")
    assert emu.wait_landed(60)
    st = channel.status()
    assert st["rows_error_count"] == len(bad) + 1
    assert st["last_error_message"].startswith("line 3: ")
    assert "at most 9 fractional digits" in st["last_error_message"]
    assert "$.SALE_TIME" in st["last_error_message"]
    assert st["last_error_offset_upper_bound"] == st["last_committed_offset_token"] == "r3"


def test_a_refused_line_ending_in_cr_is_reported_at_its_line(emu):
    """CRLF lines through the lander: the refused one is reported at its line number
    (it was line 0: DuckDB's reader also ends a line at \\r, so the line it read was not
    the line sent, and the line was looked up by its md5), and the others land."""
    channel = _Channel(emu, "CRLF")
    rows = [_row(TXID=f"crlf-{i}", RUN_ID="crlf") for i in range(3)]
    rows[1]["QUANTITY"] = True
    channel.append(rows, "c1", end=b"\r\n")
    assert emu.wait_landed(60)
    landed = emu.query("SELECT TXID FROM RESORT_SALES WHERE RUN_ID = 'crlf' ORDER BY TXID")
    assert [r["TXID"] for r in landed] == ["crlf-0", "crlf-2"]
    st = channel.status()
    assert st["rows_parsed"] == 3
    assert st["rows_error_count"] == 1
    assert st["last_error_message"].startswith("line 2: Expected a number"), st
    assert st["last_error_offset_upper_bound"] == "c1"
