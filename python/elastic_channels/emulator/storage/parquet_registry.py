"""The native store's file registry: which Parquet files in ``DATA_DIR/files`` hold rows.

``_EMULATOR_FILES`` names every data file a landing or a merge committed; a file it does
not name was written by a landing that crashed before its commit and is removed at start.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from .parquet_files import FILE_SUFFIX, check_file_name
from .store import FILES_TABLE, StoreError

__all__ = [
    "FILES_DDL", "exists", "file_names", "register_file", "registered_name",
    "remove_unregistered",
]  # fmt: skip

FILES_DDL = f"""CREATE TABLE IF NOT EXISTS {FILES_TABLE} (
  NAME VARCHAR PRIMARY KEY, ROW_COUNT BIGINT, BYTES BIGINT, LEVEL INTEGER,
  ADDED_AT TIMESTAMPTZ)"""


def exists(con: duckdb.DuckDBPyConnection, catalog: str, column: str, name: str) -> bool:
    """Whether DuckDB's ``catalog`` (``duckdb_tables()``, ...) lists ``name``."""
    row = con.execute(f"SELECT count(*) FROM {catalog} WHERE {column} = ?", [name]).fetchone()
    return bool(row and row[0])


def file_names(cur: duckdb.DuckDBPyConnection) -> list[str]:
    """The registered data files; :class:`~.store.StoreError` if one is not a plain name
    of a file in ``files/`` (the registry is damaged: nothing outside ``files/`` is ever
    read or deleted for it)."""
    rows = cur.execute(f"SELECT NAME FROM {FILES_TABLE}").fetchall()
    return [registered_name(r[0]) for r in rows]


def registered_name(name: object) -> str:
    """A name read from the registry, checked (``parquet_files.check_file_name``)."""
    try:
        return check_file_name(name)
    except ValueError as e:
        raise StoreError(f"the file registry {FILES_TABLE} is damaged: {e}") from None


def register_file(
    cur: duckdb.DuckDBPyConnection, name: str, rows: int, size: int, level: int = 0
) -> None:
    """Add a data file to the registry (in the caller's transaction)."""
    check_file_name(name)
    cur.execute(f"INSERT INTO {FILES_TABLE} VALUES (?, ?, ?, ?, now())", [name, rows, size, level])


def remove_unregistered(con: duckdb.DuckDBPyConnection, files_dir: Path) -> int:
    """Delete the data files (and temporary files) no commit registered; how many."""
    registered = set(file_names(con))
    removed = 0
    for path in files_dir.glob("*" + FILE_SUFFIX):
        if path.name not in registered:
            path.unlink(missing_ok=True)
            removed += 1
    for path in files_dir.glob("*.tmp"):
        path.unlink(missing_ok=True)
    return removed
