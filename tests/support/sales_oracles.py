"""Independent oracles for generated NDJSON (STYLE habit 6).

Nothing here calls either generator. A row is rebuilt from ``model.TABLE``
and the TXID formula; SALE_TIME is formatted from calendar fields; JSON strings are
escaped by hand following msgspec's documented rules. The tests hold both backends'
bytes against these.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable

import msgspec

from elastic_channels import model

SCHEMA = (
    "TXID",
    "RESORT",
    "CATEGORY",
    "ITEM",
    "CUSTOMER_TYPE",
    "PAYMENT_METHOD",
    "QUANTITY",
    "UNIT_PRICE",
    "AMOUNT",
    "SALE_TIME",
    "RUN_ID",
    "WORKER_ID",
)
#: The JSON type of each column, as json.loads returns it.
JSON_TYPES = {
    "TXID": str,
    "RESORT": str,
    "CATEGORY": str,
    "ITEM": str,
    "CUSTOMER_TYPE": str,
    "PAYMENT_METHOD": str,
    "QUANTITY": int,
    "UNIT_PRICE": float,
    "AMOUNT": float,
    "SALE_TIME": str,
    "RUN_ID": str,
    "WORKER_ID": int,
}

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def us_of(d: dt.datetime) -> int:
    """Unix epoch microseconds of an aware datetime."""
    return (d - EPOCH) // dt.timedelta(microseconds=1)


def sale_datetime(sale_time_us: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=sale_time_us)


def format_sale_time(sale_time_us: int) -> str:
    """RFC 3339 UTC, ``Z``, six fractional digits only when microseconds != 0."""
    d = sale_datetime(sale_time_us)
    s = f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    if d.microsecond:
        s += f".{d.microsecond:06d}"
    return s + "Z"


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
_SHORT_ESCAPES.update({"\f": "\\f", "\r": "\\r"})


def json_string(s: str) -> bytes:
    """``s`` as a JSON string the way msgspec writes it: only ``"``, ``\\`` and
    controls below 0x20 escaped (short forms where JSON has them, else ``\\u00xx``
    in lowercase hex); everything else raw UTF-8."""
    out = []
    for ch in s:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return ('"' + "".join(out) + '"').encode("utf-8")


def txid(run_id: str, worker_id: int, seq: int) -> str:
    return f"{run_id}-{worker_id}-{seq}"


def table_entry(worker_id: int, seq: int) -> tuple:
    index = (worker_id * model.WORKER_STRIDE + seq) % model.TABLE_LENGTH
    return model.TABLE[index]


def expected_row(run_id: str, worker_id: int, seq: int, sale_time_us: int) -> dict:
    """Row ``seq`` rebuilt from the table, as json.loads should return it."""
    resort, category, item, customer, payment, quantity, unit_cents, amount_cents = table_entry(
        worker_id, seq
    )
    return {
        "TXID": txid(run_id, worker_id, seq),
        "RESORT": resort,
        "CATEGORY": category,
        "ITEM": item,
        "CUSTOMER_TYPE": customer,
        "PAYMENT_METHOD": payment,
        "QUANTITY": quantity,
        "UNIT_PRICE": unit_cents / 100,
        "AMOUNT": amount_cents / 100,
        "SALE_TIME": format_sale_time(sale_time_us),
        "RUN_ID": run_id,
        "WORKER_ID": worker_id,
    }


def per_row_encoding(rows: Iterable[object]) -> bytes:
    """Oracle 1: each row encoded on its own by msgspec, newline-terminated, joined."""
    return b"".join(msgspec.json.encode(row) + b"\n" for row in rows)


def split_lines(batch: bytes) -> list[bytes]:
    """The rows of an NDJSON batch; every row, the last included, ends in ``\\n``."""
    if batch == b"":
        return []
    assert batch.endswith(b"\n"), batch[-80:]
    return batch[:-1].split(b"\n")


def check_lines(
    batch: bytes, run_id: str, worker_id: int, start_seq: int, sale_time_us: int
) -> list[dict]:
    """Oracle 2: every line json.loads to the 12 keys in schema order, with the
    declared types, equal to the row rebuilt from the table; the raw bytes of the
    string columns are escaped as msgspec escapes them. Returns the parsed rows."""
    rows = []
    run_id_tail = (
        b',"RUN_ID":' + json_string(run_id) + b',"WORKER_ID":' + str(worker_id).encode() + b"}"
    )
    sale_time = sale_datetime(sale_time_us)
    for k, line in enumerate(split_lines(batch)):
        seq = start_seq + k
        pairs = json.loads(line, object_pairs_hook=list)
        keys = tuple(key for key, _ in pairs)
        assert keys == SCHEMA, (seq, keys)
        row = dict(pairs)
        for key, value in pairs:
            assert type(value) is JSON_TYPES[key], (seq, key, value)
        expected = expected_row(run_id, worker_id, seq, sale_time_us)
        assert row == expected, (seq, row, expected)
        parsed_time = dt.datetime.fromisoformat(row["SALE_TIME"].replace("Z", "+00:00"))
        assert parsed_time == sale_time, (seq, row["SALE_TIME"])
        assert line.startswith(b'{"TXID":' + json_string(expected["TXID"]) + b","), line[:200]
        assert line.endswith(run_id_tail), line[-300:]
        rows.append(row)
    return rows
