"""The landing table, derived from its columns (``model.COLUMNS``, or a workload's):
Snowflake column types -> DuckDB.

``NUMBER(p,0)`` -> INTEGER/BIGINT/HUGEINT, ``NUMBER(p,s)`` -> DECIMAL(p,s), ``VARCHAR`` ->
VARCHAR, ``TIMESTAMP_TZ`` -> TIMESTAMPTZ, ``VARIANT`` (and ``OBJECT``/``ARRAY``) -> JSON,
... Every column is NOT NULL: a row must carry every key. How a JSON value is cast into
each type is ``rowparse.py``'s business.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

__all__ = [
    "COMMIT_TIME_COLUMN",
    "ColumnType",
    "column_type",
    "create_table_sql",
    "quote_ident",
    "typed_select",
]

#: The METADATA$ROW_LAST_COMMIT_TIME equivalent, added after the schema's columns.
COMMIT_TIME_COLUMN = "_COMMIT_TIME"

_NUMBER = re.compile(r"(?:NUMBER|NUMERIC|DECIMAL)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$")
_VARCHAR = re.compile(r"(?:VARCHAR|STRING|TEXT|CHAR|CHARACTER)\s*(?:\(\s*(\d+)\s*\))?$")


class ColumnType(NamedTuple):
    duckdb: str  # the DuckDB type of the column
    precision: int | None = None  # NUMBER(p,s): p
    scale: int | None = None  # NUMBER(p,s): s
    length: int | None = None  # VARCHAR(n): n


def column_type(snowflake_type: str) -> ColumnType:
    """The DuckDB type for one Snowflake column type (ValueError if unsupported)."""
    t = " ".join(snowflake_type.upper().split())
    m = _NUMBER.match(t)
    if m:
        p = int(m.group(1) or 38)
        s = int(m.group(2) or 0)
        if not 1 <= p <= 38 or s > p:
            raise ValueError(f"bad precision/scale in {snowflake_type!r}")
        if s == 0:
            duck = "INTEGER" if p <= 9 else "BIGINT" if p <= 18 else "HUGEINT"
            return ColumnType(duck, p, 0)
        return ColumnType(f"DECIMAL({p},{s})", p, s)
    if t in ("INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "BYTEINT"):
        return column_type("NUMBER(38,0)")
    m = _VARCHAR.match(t)
    if m:
        n = int(m.group(1)) if m.group(1) else None
        return ColumnType("VARCHAR", length=None if n is None or n >= 16777216 else n)
    if t in ("FLOAT", "FLOAT4", "FLOAT8", "DOUBLE", "DOUBLE PRECISION", "REAL"):
        return ColumnType("DOUBLE")
    if t == "BOOLEAN":
        return ColumnType("BOOLEAN")
    if t == "DATE":
        return ColumnType("DATE")
    if t.startswith(("TIMESTAMP_TZ", "TIMESTAMP_LTZ")):
        return ColumnType("TIMESTAMPTZ")
    if t.startswith(("TIMESTAMP_NTZ", "DATETIME", "TIMESTAMP")):
        return ColumnType("TIMESTAMP")
    if t in ("VARIANT", "OBJECT", "ARRAY"):
        # JSON text, as DuckDB's JSON type holds it: `col:a.b` paths query it (the SQL
        # API's translation turns them into DuckDB's JSON paths).
        return ColumnType("JSON")
    raise ValueError(f"unsupported Snowflake column type {snowflake_type!r}")


def iceberg_duckdb_type(snowflake_type: str) -> str:
    """The DuckDB type of a column in the Iceberg table: as :func:`column_type`, but
    ``NUMBER(p,0)`` stays ``DECIMAL(p,0)`` (Iceberg ``decimal(p,0)``), as Snowflake writes
    a NUMBER column of a Snowflake-managed Iceberg table (its Iceberg ``int``/``long``
    are read as NUMBER(10,0)/NUMBER(19,0), not written for NUMBER(p,0))."""
    ct = column_type(snowflake_type)
    if ct.precision is not None:
        return f"DECIMAL({ct.precision},{ct.scale or 0})"
    return ct.duckdb


def typed_select(columns: Sequence[tuple[str, str]], type_of: Callable[[str], str]) -> str:
    """``SELECT CAST(col AS type) AS col, ... FROM ({rows})``: a format string for a
    relation of ``rows`` typed as a table holds them (``type_of(snowflake_type)``)."""
    casts = ", ".join(
        f"CAST({quote_ident(n)} AS {type_of(t)}) AS {quote_ident(n)}" for n, t in columns
    )
    return f"SELECT {casts} FROM ({{rows}})"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_table_sql(table: str, columns: Sequence[tuple[str, str]]) -> str:
    cols = [f"{quote_ident(n)} {column_type(t).duckdb} NOT NULL" for n, t in columns]
    cols.append(f"{quote_ident(COMMIT_TIME_COLUMN)} TIMESTAMPTZ NOT NULL")
    return f"CREATE TABLE IF NOT EXISTS {quote_ident(table)} (\n  " + ",\n  ".join(cols) + "\n)"
