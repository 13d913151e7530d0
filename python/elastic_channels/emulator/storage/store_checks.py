"""What a store checks of the database it opens, refusing what it cannot use (each
refusal closes the connection and says what to do): a landing table of another name
or schema, an Iceberg view where a table is wanted, damaged bookkeeping tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from ..sql.bookkeeping import own_relations
from .schema import COMMIT_TIME_COLUMN, quote_ident

__all__ = ["StoreError", "bookkeeping", "is_view", "one_landing_table", "table_columns"]


class StoreError(Exception):
    """The database could not be opened or queried; the message says why."""


def _error(message: str) -> Exception:
    return StoreError(message)


def one_landing_table(con: duckdb.DuckDBPyConnection, table: str, db_path: Path) -> None:
    """Refuse a data dir whose landing table has another name: one data dir holds one
    landing table (its files, registry and spool are the table's), so a workload
    with another table needs a data dir of its own."""
    own = own_relations(con)
    other = sorted((own.views | own.landing_tables) - {table.lower()})
    if other:
        con.close()
        raise _error(
            f"{db_path.parent} holds the landing table {other[0].upper()}, not "
            f"{table}: a data dir holds one landing table (one workload's); use "
            "another --data-dir for this one"
        )


def bookkeeping(con: duckdb.DuckDBPyConnection, db_path: Path, ddls: Sequence[str]) -> None:
    """Refuse a database whose bookkeeping tables (made by ``ddls``, ``CREATE TABLE IF
    NOT EXISTS``) have other columns than those make: it is damaged, and landing or
    recovering the spool with it would fail on every batch, or worse."""
    for ddl in ddls:
        table, want = _made_by(ddl)
        rows = con.execute(f"DESCRIBE {quote_ident(table)}").fetchall()
        have = [r[0] for r in rows]
        if have != want:
            con.close()
            raise _error(
                f"{table} in {db_path} has columns {have}, not the emulator's "
                f"{want}: the database is damaged; move {db_path.name} away (the "
                "rows it holds go with it) or use a fresh --data-dir"
            )


def is_view(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [name]).fetchone()[0]  # type: ignore[index]
    )


def table_columns(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Sequence[tuple[str, str]],
    db_path: Path,
) -> None:
    """Refuse a database whose table was made from another schema."""
    have = [r[0] for r in con.execute(f"DESCRIBE {quote_ident(table)}").fetchall()]
    want = [n for n, _ in columns] + [COMMIT_TIME_COLUMN]
    if have != want:
        con.close()
        raise _error(
            f"table {table} in {db_path} has columns {have}, but the schema now "
            f"says {want}; use a fresh --data-dir (or move {db_path.name} away)"
        )


def _made_by(ddl: str) -> tuple[str, list[str]]:
    """The table a ``CREATE TABLE`` statement makes, and its column names."""
    con = duckdb.connect()
    try:
        con.execute(ddl)
        (table,) = con.execute("SELECT table_name FROM duckdb_tables()").fetchone()  # type: ignore[misc]
        return table, [r[0] for r in con.execute(f"DESCRIBE {quote_ident(table)}").fetchall()]
    finally:
        con.close()
