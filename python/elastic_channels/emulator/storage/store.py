"""The embedded DuckDB database: the landing table, kept errors, and what has landed.

One landing transaction takes a batch of requests (their raw NDJSON in ``work/`` files),
parses every line through the one typed path (``rowparse.py``), inserts the good rows,
keeps the first rejected ones in ``_EMULATOR_ERRORS`` and records every request in
``_EMULATOR_LANDED`` — all or nothing, so a request's rows and the record that they
landed commit together (what makes a restart exactly-once).

The database is locked down once open: no file access except the ``work/`` directory,
no extensions loaded from disk, configuration frozen. :meth:`Store.query` runs one
read-only query of the tables (``query_guard.py``) in a read-only transaction, for the
control endpoint and the CLI.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ..landing.batch_sql import Body, LandedFile
from ..landing.parse_backends import make_parse
from ..sql.bookkeeping import LANDING_COMMENT
from ..sql.guard import QueryRefused, check_query
from . import store_checks as checks
from .schema import COMMIT_TIME_COLUMN, create_table_sql, quote_ident
from .store_checks import StoreError

__all__ = [
    "ERRORS_TABLE",
    "FILES_DIR",
    "FILES_TABLE",
    "ICEBERG_DIR",
    "LANDED_TABLE",
    "Body",
    "LandedFile",
    "Store",
    "StoreError",
    "log_landed",
    "relation_arrow",
    "transaction",
]

log = logging.getLogger("elastic_channels.emulator")

#: Rejected rows kept for inspection (the first ones per channel).
ERRORS_TABLE = "_EMULATOR_ERRORS"
#: One row per landed request, committed with its rows.
LANDED_TABLE = "_EMULATOR_LANDED"
#: The Iceberg warehouse (catalog, metadata, Parquet), beside the database file.
ICEBERG_DIR = "iceberg"
#: The native table's Parquet data files (``parquet_store.py``), beside the database file.
FILES_DIR = "files"
#: One row per data file of the native table (``parquet_store.py``).
FILES_TABLE = "_EMULATOR_FILES"

_DDL = (
    f"""CREATE TABLE IF NOT EXISTS {ERRORS_TABLE} (
  ERROR_TIME TIMESTAMPTZ NOT NULL,
  DATABASE_NAME VARCHAR, SCHEMA_NAME VARCHAR, PIPE_NAME VARCHAR, CHANNEL_NAME VARCHAR,
  REQUEST_ID VARCHAR, LINE_NUMBER BIGINT, MESSAGE VARCHAR, ROW_EXCERPT VARCHAR)""",
    f"""CREATE TABLE IF NOT EXISTS {LANDED_TABLE} (
  SEQ BIGINT PRIMARY KEY, REQUEST_ID VARCHAR,
  DATABASE_NAME VARCHAR, SCHEMA_NAME VARCHAR, PIPE_NAME VARCHAR, CHANNEL_NAME VARCHAR,
  OFFSET_TOKEN VARCHAR, ROWS_PARSED BIGINT, ROWS_INSERTED BIGINT, LANDED_AT TIMESTAMPTZ)""",
)


@contextmanager
def transaction(cur: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """``BEGIN`` ... ``COMMIT`` on ``cur``; ``ROLLBACK`` if the block raises (anything)."""
    cur.execute("BEGIN")
    try:
        yield cur
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    cur.execute("COMMIT")


def relation_arrow(rel: duckdb.DuckDBPyRelation) -> Any:
    """A relation's rows as one Arrow table (``to_arrow_table`` in duckdb >= 1.4)."""
    to_table = getattr(rel, "to_arrow_table", None)
    return to_table() if to_table is not None else rel.arrow()


def log_landed(bodies: dict[str, Body], results: dict[str, LandedFile], t0: float) -> None:
    """The line ``serve -v`` promises for each landed batch: requests, rows landed and
    refused, raw bytes, and how long it took since ``t0`` (``time.monotonic()``)."""
    if not log.isEnabledFor(logging.INFO):
        return
    parsed = sum(r.parsed for r in results.values())
    inserted = sum(r.inserted for r in results.values())
    raw = sum(len(b.raw) for b in bodies.values())
    log.info(
        "landed a batch of %d request(s): %d row(s), %d refused, %.2f MB raw, in %.3f s",
        len(bodies), inserted, parsed - inserted, raw / 1e6, time.monotonic() - t0,
    )  # fmt: skip


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class Store:
    """One DuckDB database file holding the landing table, kept errors and landed requests."""

    def __init__(
        self,
        db_path: Path,
        table: str,
        columns: Sequence[tuple[str, str]],
        *,
        threads: int = 2,
        read_only: bool = False,
        work_dir: Path | None = None,
        check_keys: bool = True,
        parse: str | None = None,
    ) -> None:
        self.table = table
        self.columns = tuple(columns)
        self.db_path = Path(db_path)
        try:
            self._con = duckdb.connect(
                str(db_path),
                read_only=read_only,
                config={"threads": threads, "preserve_insertion_order": False},
            )
            self._con.execute("SET GLOBAL TimeZone = 'UTC'")
            # The native table's view names its files relative to the data dir
            # (``files/...``), so a data dir read where it was copied or moved to works.
            data_dir = _sql_str(str(self.db_path.parent.resolve()))
            self._con.execute(f"SET GLOBAL file_search_path = {data_dir}")
            # FSST costs ~2 ms/MB at checkpoint; dictionary/RLE still apply.
            self._con.execute("SET GLOBAL disabled_compression_methods = 'fsst'")
            if not read_only:
                for ddl in _DDL:
                    self._con.execute(ddl)
                self.check_bookkeeping(_DDL)
                checks.one_landing_table(self._con, self.table, self.db_path)
                self._create_landing_table()
            # Queries may read the lander's work files and the table's Parquet files
            # (native or Iceberg: RESORT_SALES is then a view over them); nothing else.
            allowed = [Path(work_dir)] if work_dir is not None else []
            for name in (FILES_DIR, ICEBERG_DIR):
                files = self.db_path.parent / name
                allowed += [files] if files.is_dir() else []
            dirs_allowed = [str(d.resolve()) + "/" for d in allowed]
            if (self.db_path.parent / FILES_DIR).is_dir():
                # the view's relative names, resolved by file_search_path to the line above
                dirs_allowed.append(FILES_DIR + "/")
            if dirs_allowed:
                dirs = ", ".join(_sql_str(d) for d in dirs_allowed)
                self._con.execute(f"SET GLOBAL allowed_directories = [{dirs}]")
            self._con.execute("SET GLOBAL enable_external_access = false")
            # No query scans a Python variable named like a table (DuckDB's replacement scan).
            self._con.execute("SET GLOBAL python_enable_replacements = false")
            self._con.execute("SET GLOBAL lock_configuration = true")
        except duckdb.Error as e:
            raise StoreError(f"cannot open {db_path}: {e}") from None
        names = ", ".join(quote_ident(n) for n, _ in columns)
        self._insert_sql = (
            f"INSERT INTO {quote_ident(table)} ({names}, {quote_ident(COMMIT_TIME_COLUMN)}) "
            f"SELECT {names}, now()"
        )
        #: The parse path (``parse_backends.py``): native or sql.
        self.parse = make_parse(columns, check_keys=check_keys, backend=parse)

    def _create_landing_table(self) -> None:
        """The native landing table (a DuckDB table), refused if made otherwise before."""
        if checks.is_view(self._con, self.table):
            self._con.close()
            raise StoreError(
                f"{self.table} in {self.db_path} is an Iceberg table (a view over its files); "
                "start with --table-format iceberg, or use a fresh --data-dir"
            )
        self._con.execute(create_table_sql(self.table, self.columns))
        self._check_table(self.db_path)
        # Marked as the emulator's own: SQL may read it, not write it (sql/bookkeeping.py).
        self._con.execute(
            f"COMMENT ON TABLE {quote_ident(self.table)} IS {_sql_str(LANDING_COMMENT)}"
        )

    def check_bookkeeping(self, ddls: Sequence[str]) -> None:
        """Refuse a database whose bookkeeping tables are not what ``ddls`` make."""
        checks.bookkeeping(self._con, self.db_path, ddls)

    def _check_table(self, db_path: Path) -> None:
        """Refuse a database whose table was made from another schema."""
        checks.table_columns(self._con, self.table, self.columns, db_path)

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The read-write connection (for endpoints such as the SQL API; use cursors)."""
        return self._con

    def landed_seqs(self, seqs: Sequence[int]) -> set[int]:
        """Which of these spool sequence numbers have already landed."""
        if not seqs:
            return set()
        rows = self._con.execute(
            f"SELECT SEQ FROM {LANDED_TABLE} WHERE SEQ IN (SELECT unnest(?::BIGINT[]))",
            [list(seqs)],
        ).fetchall()
        return {int(r[0]) for r in rows}

    def landed_request_ids(self, prefix: str) -> list[str]:
        """Request ids that start with ``prefix`` among the landed requests."""
        rows = self._con.execute(
            f"SELECT REQUEST_ID FROM {LANDED_TABLE} WHERE starts_with(REQUEST_ID, ?)", [prefix]
        ).fetchall()
        return [r[0] for r in rows]

    def max_landed_seq(self) -> int:
        row = self._con.execute(f"SELECT coalesce(max(SEQ), 0) FROM {LANDED_TABLE}").fetchone()
        return int(row[0]) if row else 0

    def land(
        self,
        bodies: dict[str, Body],
        record: Any,
        crash: Any = None,
    ) -> dict[str, LandedFile]:
        """Parse and land ``bodies`` (name -> its lines and work file) in one transaction.

        ``record(results) -> (landed_rows, error_rows)`` is called inside the transaction
        with the per-file results and returns the ``_EMULATOR_LANDED`` and
        ``_EMULATOR_ERRORS`` rows to commit with them. ``crash(point)`` is the test hook.
        """
        t0 = time.monotonic()
        cur = self._con.cursor()
        try:
            with transaction(cur):

                def insert(rows: str) -> int:
                    count = cur.execute(f"{self._insert_sql} FROM ({rows})").fetchone()
                    return int(count[0]) if count else 0

                results = self.parse.land(cur, bodies, insert)
                landed_rows, error_rows = record(results)
                cur.executemany(
                    f"INSERT INTO {LANDED_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now())",
                    landed_rows,
                )
                if error_rows:
                    now = dt.datetime.now(dt.timezone.utc)
                    cur.executemany(
                        f"INSERT INTO {ERRORS_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(now, *r) for r in error_rows],
                    )
                if crash is not None:
                    crash("land:before-commit")
        finally:
            cur.close()
        if crash is not None:
            crash("land:after-commit")
        log_landed(bodies, results, t0)
        return results

    def query(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of ONE read-only query of the tables (``query_guard``),
        run in a read-only transaction; StoreError saying why not."""
        cur = self._con.cursor()
        try:
            check_query(cur, sql)
            cur.execute("BEGIN TRANSACTION READ ONLY")
            try:
                cur.execute(sql)
                if cur.description is None:
                    return [], []
                return [d[0] for d in cur.description], cur.fetchall()
            finally:
                cur.execute("ROLLBACK")
        except (duckdb.Error, QueryRefused) as e:
            raise StoreError(str(e)) from None
        finally:
            cur.close()

    def close(self) -> None:
        try:
            self._con.execute("CHECKPOINT")
        except duckdb.Error:
            pass
        self._con.close()
