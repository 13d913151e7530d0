"""The landing table, derived from ``resort_sales.COLUMNS``, and row-by-row validation.

Snowflake column types map to DuckDB types (``NUMBER(p,0)`` -> INTEGER/BIGINT/HUGEINT,
``NUMBER(p,s)`` -> DECIMAL(p,s), ``VARCHAR`` -> VARCHAR, ``TIMESTAMP_TZ`` ->
TIMESTAMPTZ, ...). Every column is NOT NULL: a row must carry every key.

:class:`RowChecker` is the slow path, used only for a request the bulk path refused: it
decodes each line with msgspec (lax mode: ``"5"`` is accepted for a number, as
Snowflake does) into a Struct that forbids unknown fields, so a row with an unknown key,
a missing key, a null or a value of the wrong type gets a precise message.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Sequence
from typing import Annotated, Any, NamedTuple, Union

import msgspec

__all__ = [
    "COMMIT_TIME_COLUMN",
    "ColumnType",
    "RowChecker",
    "RowError",
    "column_type",
    "create_table_sql",
]

#: The METADATA$ROW_LAST_COMMIT_TIME equivalent, added after the schema's columns.
COMMIT_TIME_COLUMN = "_COMMIT_TIME"

_NUMBER = re.compile(r"(?:NUMBER|NUMERIC|DECIMAL)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")


class ColumnType(NamedTuple):
    duckdb: str  # the DuckDB type of the column
    python: Any  # what msgspec decodes a JSON value into on the slow path
    scale: int | None = None  # decimal places, for NUMBER(p,s) with s > 0
    precision: int | None = None


def column_type(snowflake_type: str) -> ColumnType:
    """The DuckDB and msgspec types for one Snowflake column type (ValueError if unknown)."""
    t = " ".join(snowflake_type.upper().split())
    m = _NUMBER.match(t)
    if m:
        p = int(m.group(1) or 38)
        s = int(m.group(2) or 0)
        if not 1 <= p <= 38 or s > p:
            raise ValueError(f"bad precision/scale in {snowflake_type!r}")
        if s == 0:
            bound = 10**p - 1
            py = Annotated[int, msgspec.Meta(ge=-bound, le=bound)]
            duck = "INTEGER" if p <= 9 else "BIGINT" if p <= 18 else "HUGEINT"
            return ColumnType(duck, py)
        return ColumnType(f"DECIMAL({p},{s})", decimal.Decimal, s, p)
    if t in ("INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "BYTEINT"):
        return column_type("NUMBER(38,0)")
    if t.startswith(("VARCHAR", "STRING", "TEXT", "CHAR")):
        return ColumnType("VARCHAR", Union[str, int, float])
    if t in ("FLOAT", "FLOAT4", "FLOAT8", "DOUBLE", "DOUBLE PRECISION", "REAL"):
        return ColumnType("DOUBLE", float)
    if t == "BOOLEAN":
        return ColumnType("BOOLEAN", bool)
    if t == "DATE":
        return ColumnType("DATE", dt.date)
    if t.startswith(("TIMESTAMP_TZ", "TIMESTAMP_LTZ")):
        return ColumnType("TIMESTAMPTZ", dt.datetime)
    if t.startswith(("TIMESTAMP_NTZ", "DATETIME", "TIMESTAMP")):
        return ColumnType("TIMESTAMP", dt.datetime)
    raise ValueError(f"unsupported Snowflake column type {snowflake_type!r}")


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_table_sql(table: str, columns: Sequence[tuple[str, str]]) -> str:
    cols = [f"{quote_ident(n)} {column_type(t).duckdb} NOT NULL" for n, t in columns]
    cols.append(f"{quote_ident(COMMIT_TIME_COLUMN)} TIMESTAMPTZ NOT NULL")
    return f"CREATE TABLE IF NOT EXISTS {quote_ident(table)} (\n  " + ",\n  ".join(cols) + "\n)"


def read_json_columns(columns: Sequence[tuple[str, str]]) -> str:
    """The ``columns={...}`` argument of DuckDB's ``read_json`` for these columns."""
    items = (f"'{n.replace(chr(39), chr(39) * 2)}': '{column_type(t).duckdb}'" for n, t in columns)
    return "{" + ", ".join(items) + "}"


class RowError(NamedTuple):
    line: int  # 1-based line number in the request body
    message: str
    excerpt: str  # the start of the offending line


_EXCERPT_CHARS = 200


class RowChecker:
    """Checks NDJSON line by line; returns the good rows re-encoded, and the errors."""

    def __init__(self, columns: Sequence[tuple[str, str]]) -> None:
        types = [(n, column_type(t)) for n, t in columns]
        row_type = msgspec.defstruct(
            "Row", [(n, ct.python) for n, ct in types], forbid_unknown_fields=True
        )
        self._decoder = msgspec.json.Decoder(row_type, strict=False)
        self._encoder = msgspec.json.Encoder(decimal_format="string")
        self._decimals = [(n, ct.scale, ct.precision) for n, ct in types if ct.scale is not None]

    def _check_decimals(self, row: Any) -> str | None:
        for name, scale, precision in self._decimals:
            value: decimal.Decimal = getattr(row, name)
            if not value.is_finite():
                return f"NUMBER column {name} got a non-finite value {value}"
            try:
                q = value.quantize(decimal.Decimal(1).scaleb(-scale), decimal.ROUND_HALF_UP)
            except decimal.InvalidOperation:
                q = value
            if abs(q) >= decimal.Decimal(10) ** (precision - scale):
                return f"value {value} out of range for NUMBER({precision},{scale}) column {name}"
        return None

    def check(self, data: bytes) -> tuple[bytes, int, list[RowError]]:
        """``(good rows as NDJSON, rows parsed, errors)``; blank lines are skipped."""
        good: list[Any] = []
        errors: list[RowError] = []
        parsed = 0
        for lineno, line in enumerate(data.split(b"\n"), 1):
            if not line.strip():
                continue
            parsed += 1
            try:
                row = self._decoder.decode(line)
            except (msgspec.ValidationError, msgspec.DecodeError) as e:
                excerpt = line[:_EXCERPT_CHARS].decode("utf-8", "replace")
                errors.append(RowError(lineno, f"{type(e).__name__}: {e}", excerpt))
                continue
            problem = self._check_decimals(row) if self._decimals else None
            if problem:
                excerpt = line[:_EXCERPT_CHARS].decode("utf-8", "replace")
                errors.append(RowError(lineno, problem, excerpt))
                continue
            good.append(row)
        return self._encoder.encode_lines(good), parsed, errors
