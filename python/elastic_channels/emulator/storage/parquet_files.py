"""The Parquet data files of the native landing table (``parquet_store.py``): their
Arrow schema, how one is written durably, and the view that reads them as the table.

Each file holds the table's columns typed as the DuckDB table would hold them
(``schema.column_type``: ``NUMBER(9,0)`` is int32, ``NUMBER(12,2)`` decimal(12,2),
``TIMESTAMP_TZ`` timestamp[us, UTC] ...) and ``_COMMIT_TIME``. Files are written whole
and fsynced before anything refers to them; a file nothing refers to is removed at start.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .schema import COMMIT_TIME_COLUMN, column_type, quote_ident
from .store import FILES_DIR

__all__ = [
    "FILE_SUFFIX",
    "ROW_GROUP_ROWS",
    "arrow_type",
    "check_file_name",
    "new_file_name",
    "repeating_columns",
    "storage_schema",
    "view_sql",
    "write_options",
    "write_table",
]

FILE_SUFFIX = ".parquet"
#: Rows per row group, DuckDB's own row group size: row groups of 500,000 rows made the
#: dashboard's sales queries ~1.8x slower than this (fewer to read in parallel, coarser
#: min/max statistics to skip them by).
ROW_GROUP_ROWS = 122_880

_TS_UTC = pa.timestamp("us", tz="UTC")


def arrow_type(snowflake_type: str) -> pa.DataType:
    """The Arrow type a column is stored as: the DuckDB table's type, in Arrow."""
    ct = column_type(snowflake_type)
    fixed = {
        "INTEGER": pa.int32(),
        "BIGINT": pa.int64(),
        "VARCHAR": pa.large_string(),
        "JSON": pa.large_string(),  # its JSON text; the view reads it as JSON
        "TIMESTAMPTZ": _TS_UTC,
        "TIMESTAMP": pa.timestamp("us"),
        "BOOLEAN": pa.bool_(),
        "DOUBLE": pa.float64(),
        "DATE": pa.date32(),
    }.get(ct.duckdb)
    if fixed is not None:
        return fixed
    # DECIMAL(p,s), and HUGEINT (NUMBER(p,0) past 18 digits) as decimal(p,0).
    return pa.decimal128(ct.precision or 38, ct.scale or 0)


def storage_schema(columns: Sequence[tuple[str, str]]) -> pa.Schema:
    """The schema of every data file: the table's columns, then ``_COMMIT_TIME``."""
    fields = [pa.field(n, arrow_type(t), nullable=False) for n, t in columns]
    return pa.schema([*fields, pa.field(COMMIT_TIME_COLUMN, _TS_UTC, nullable=False)])


def write_options(schema: pa.Schema, dictionary: Sequence[str] | None = None) -> dict[str, object]:
    """``pq.write_table`` options: zstd; dictionary encoding for the ``dictionary``
    columns (None: every column); statistics (min/max, what lets DuckDB skip row groups)
    for every column but strings, whose statistics cost ~a third of the write and which
    dictionary encoding already makes cheap to scan."""
    stats = [f.name for f in schema if not pa.types.is_large_string(f.type)]
    use_dictionary: bool | list[str] = True if dictionary is None else list(dictionary)
    return {"compression": "zstd", "write_statistics": stats, "use_dictionary": use_dictionary}


def repeating_columns(table: pa.Table) -> list[str]:
    """The columns whose values repeat (fewer distinct values than half the rows): those
    a dictionary shrinks. Building one for a column of unique values (an id, a
    timestamp) costs ~40% of a file's write for nothing."""
    n = table.num_rows
    return [
        name
        for name, col in zip(table.column_names, table.columns, strict=True)
        if n == 0 or pc.count_distinct(col).as_py() * 2 < n
    ]


#: What a registered data file may be called: a plain name in ``files/``, never a path.
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*" + re.escape(FILE_SUFFIX))


def check_file_name(name: object) -> str:
    """``name`` if it is a data file's plain name (``land-<hex>.parquet``); else
    ValueError: a name with a path separator, ``..`` or a root would make the view and
    the merger read, and the merger delete, a file outside ``files/``."""
    if not isinstance(name, str) or not _FILE_NAME.fullmatch(name):
        raise ValueError(
            f"{name!r} is not the name of a data file in {FILES_DIR}/ (a plain "
            f"name ending in {FILE_SUFFIX}, no path)"
        )
    return name


def new_file_name(kind: str) -> str:
    """A fresh, unique data file name: ``land-<hex>.parquet`` or ``merged-<hex>.parquet``."""
    return f"{kind}-{uuid.uuid4().hex}{FILE_SUFFIX}"


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_table(
    table: pa.Table, path: Path, *, fsync: bool, dictionary: Sequence[str] | None = None
) -> int:
    """Write ``table`` as one Parquet file at ``path`` (fsynced with its directory when
    ``fsync``); its size in bytes."""
    options = write_options(table.schema, dictionary)
    pq.write_table(table, path, row_group_size=ROW_GROUP_ROWS, **options)  # type: ignore[arg-type]
    if fsync:
        fsync_path(path)
        fsync_path(path.parent)
    return path.stat().st_size


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def view_sql(table: str, columns: Sequence[tuple[str, str]], names: Iterable[str]) -> str:
    """``CREATE OR REPLACE VIEW`` of the table over exactly these data files (an empty
    relation of the table's types when there are none). The files are named relative to
    the data dir (``files/NAME``): the connection's ``file_search_path`` is the data dir,
    so the view holds wherever the data dir is copied or moved."""
    cols = [(n, column_type(t).duckdb) for n, t in columns]
    cols.append((COMMIT_TIME_COLUMN, "TIMESTAMPTZ"))
    paths = [f"{FILES_DIR}/{n}" for n in sorted(names)]
    if paths:
        select = ", ".join(f"CAST({quote_ident(n)} AS {t}) AS {quote_ident(n)}" for n, t in cols)
        files = ", ".join(_sql_str(p) for p in paths)
        body = f"SELECT {select} FROM read_parquet([{files}])"
    else:
        select = ", ".join(f"CAST(NULL AS {t}) AS {quote_ident(n)}" for n, t in cols)
        body = f"SELECT {select} WHERE false"
    return f"CREATE OR REPLACE VIEW {quote_ident(table)} AS {body}"
