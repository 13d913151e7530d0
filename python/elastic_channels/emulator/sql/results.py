"""Results in the SQL API's ``jsonv2`` shape, bounded.

A query's rows are fetched from DuckDB's streaming result a chunk at a time and each
chunk is written as jsonv2 text at once (every value text or null), so a result costs its
text, not Python objects. The text is bounded: past :data:`MAX_RESULT_BYTES` the
statement is refused (422, naming the bound) and what was fetched is dropped; 2 million
3-column rows no longer take a gigabyte. The first row is fetched alone and a chunk is no
bigger than the bound has room for, and rows whose text values alone pass the bound are
refused before they are written out, so a few huge values (``repeat(...)`` of megabytes)
are refused a row or two in. DuckDB's own memory for such values (it builds a whole
vector of them before the first is fetched) is not bounded here: its ``memory_limit``
does not count strings. Every result is one partition
(``partitionInfo`` lists one), returned in the answer to the POST.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .errors import SqlApiError, error_body

__all__ = [
    "MAX_RESULT_BYTES",
    "Answer",
    "ResultText",
    "column_type",
    "count_column",
    "status_column",
]

#: The most jsonv2 text one result may hold (its one partition).
MAX_RESULT_BYTES = 16 << 20
#: Rows are fetched in chunks of about this much text.
_CHUNK_BYTES = 256 << 10
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_ENCODE = msgspec.json.Encoder()


def column_type(name: str, duck_type: str) -> dict[str, Any]:
    """A ``rowType`` entry for a DuckDB result column."""
    t = duck_type.upper()
    col: dict[str, Any] = {"name": name, "nullable": True}
    if t.startswith("DECIMAL"):
        p, s = (int(x) for x in t[t.index("(") + 1 : -1].split(","))
        return {**col, "type": "FIXED", "precision": p, "scale": s}
    if t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
             "UINTEGER", "UBIGINT"):  # fmt: skip
        return {**col, "type": "FIXED", "precision": 38, "scale": 0}
    if t in ("DOUBLE", "FLOAT", "REAL"):
        return {**col, "type": "REAL"}
    if t == "BOOLEAN":
        return {**col, "type": "BOOLEAN"}
    if t == "DATE":
        return {**col, "type": "DATE"}
    if t == "TIMESTAMP WITH TIME ZONE":
        return {**col, "type": "TIMESTAMP_TZ", "scale": 9}
    if t.startswith("TIMESTAMP"):
        return {**col, "type": "TIMESTAMP_NTZ", "scale": 9}
    if t == "JSON":
        return {**col, "type": "VARIANT"}
    return {**col, "type": "TEXT", "length": 16777216}


def status_column() -> dict[str, Any]:
    return {"name": "status", "type": "TEXT", "nullable": True}


def count_column() -> dict[str, Any]:
    return {"name": "number of rows affected", "type": "FIXED", "precision": 38, "scale": 0,
            "nullable": False}  # fmt: skip


def _epoch_text(value: dt.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    us = (value - _EPOCH) // dt.timedelta(microseconds=1)
    return f"{us // 1_000_000}.{us % 1_000_000:06d}000"


def _cell(value: Any, kind: str) -> str | None:
    """One value as the SQL API's jsonv2 writes it (always text, or null)."""
    if value is None:
        return None
    if kind == "BOOLEAN":
        return "true" if value else "false"
    if kind == "TIMESTAMP_TZ":  # seconds since the epoch, then the offset in minutes + 1440
        offset = value.utcoffset() or dt.timedelta(0)
        return f"{_epoch_text(value)} {int(offset.total_seconds() // 60) + 1440}"
    if kind == "TIMESTAMP_NTZ":
        return _epoch_text(value)
    if kind == "DATE":
        return str((value - dt.date(1970, 1, 1)).days)
    if kind == "REAL":
        return repr(float(value))
    return str(value)


def _text_at_least(rows: list[tuple[Any, ...]]) -> int:
    """A lower bound of the jsonv2 text of ``rows``: the length of their text values
    (a value's text is at least as long), without writing any out."""
    return sum(len(v) for r in rows for v in r if isinstance(v, (str, bytes)))


@dataclass
class ResultText:
    """A result's rows as jsonv2 text (``[[...],[...]]`` without the outer brackets)."""

    columns: list[dict[str, Any]]
    max_bytes: int = MAX_RESULT_BYTES
    rows: int = 0
    size: int = 0
    _parts: list[bytes] = field(default_factory=list, repr=False)

    def add(self, rows: list[tuple[Any, ...]]) -> None:
        """Add fetched rows; :class:`SqlApiError` (422) once the text is over the bound.
        Rows whose text values alone pass it are refused before they are written out."""
        if not rows:
            return
        if self.size + _text_at_least(rows) > self.max_bytes:
            self._over(self.rows + len(rows))
        kinds = [c["type"] for c in self.columns]
        text = _ENCODE.encode([[_cell(r[i], k) for i, k in enumerate(kinds)] for r in rows])
        self.rows += len(rows)
        self.size += len(text) - 2 + (1 if self._parts else 0)
        if self.size > self.max_bytes:
            self._over(self.rows)
        self._parts.append(text[1:-1])

    def _over(self, rows: int) -> None:
        self._parts.clear()
        raise SqlApiError(
            422, "391908", "54000",
            f"the result is over the emulator's bound of {self.max_bytes:,} bytes of "
            f"jsonv2 text ({rows:,} rows fetched when it passed it); narrow it with "
            "WHERE, LIMIT or an aggregate",
        )  # fmt: skip

    def fetch(self, cur: Any) -> None:
        """Every row of ``cur``'s result, in chunks of about ``_CHUNK_BYTES`` of text
        and no more rows than the bound has room for (and one): the first row alone, so
        a result of huge values (``repeat(...)`` of megabytes) is refused a row or two
        in, not after a whole chunk of them is in memory and written out."""
        n = 1
        while True:
            rows = cur.fetchmany(n)
            if not rows:
                return
            before = self.size
            self.add(rows)
            per_row = max(1, (self.size - before) // len(rows))
            room = (self.max_bytes - self.size) // per_row + 1  # rows of that size, and one
            n = max(1, min(8192, _CHUNK_BYTES // per_row, room))

    @property
    def data(self) -> bytes:
        return b"[" + b",".join(self._parts) + b"]"


@dataclass
class Answer:
    """One reply of the API: its status, its JSON fields and, for a result, its data."""

    status: int
    head: dict[str, Any]
    data: bytes | None = None

    @classmethod
    def error(cls, e: SqlApiError) -> Answer:
        return cls(e.status, error_body(e))

    @classmethod
    def result(cls, rows: ResultText) -> Answer:
        handle = str(uuid.uuid4())
        head = {
            "resultSetMetaData": {
                "numRows": rows.rows,
                "format": "jsonv2",
                "partitionInfo": [{"rowCount": rows.rows, "uncompressedSize": rows.size + 2}],
                "rowType": rows.columns,
            },
            "code": "090001",
            "statementStatusUrl": f"/api/v2/statements/{handle}",
            "requestId": str(uuid.uuid4()),
            "sqlState": "00000",
            "statementHandle": handle,
            "message": "Statement executed successfully.",
            "createdOn": int(time.time() * 1000),
        }
        return cls(200, head, rows.data)

    @classmethod
    def status_only(cls) -> Answer:
        rows = ResultText([status_column()])
        rows.add([("Statement executed successfully.",)])
        return cls.result(rows)

    def to_bytes(self, request_id: str = "") -> bytes:
        """The reply's JSON (``requestId`` the request's, when it named one)."""
        head = dict(self.head, requestId=request_id or self.head.get("requestId", ""))
        text = json.dumps(head).encode()
        if self.data is None:
            return text
        return text[:-1] + b', "data": ' + self.data + b"}"

    def to_dict(self) -> dict[str, Any]:
        return self.head if self.data is None else {**self.head, "data": json.loads(self.data)}
