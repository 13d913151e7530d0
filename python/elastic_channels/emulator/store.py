"""The embedded DuckDB database the rows land in, and its read path.

Bulk landing lets DuckDB parse the spooled NDJSON itself (``read_json`` with the typed
columns, zstd read natively), which is what keeps up with a worker's 92 MB/s. A batch
of spooled requests lands in one transaction after one pre-scan that counts rows per
request and checks every row's keys are exactly the schema's, in order. If the pre-scan
finds anything else, or the typed insert fails (a cast error, a null, malformed JSON),
the batch is rolled back and each request is landed on its own through
:class:`~.schema.RowChecker`, which rejects only the bad rows.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from .schema import COMMIT_TIME_COLUMN, RowError, create_table_sql, quote_ident, read_json_columns

__all__ = ["ERRORS_TABLE", "Store", "StoreError"]

log = logging.getLogger("elastic_channels.emulator")

#: Rejected rows kept for inspection (the first ones per channel).
ERRORS_TABLE = "_EMULATOR_ERRORS"

_ERRORS_DDL = f"""CREATE TABLE IF NOT EXISTS {ERRORS_TABLE} (
  ERROR_TIME TIMESTAMPTZ NOT NULL,
  DATABASE_NAME VARCHAR, SCHEMA_NAME VARCHAR, PIPE_NAME VARCHAR, CHANNEL_NAME VARCHAR,
  REQUEST_ID VARCHAR, LINE_NUMBER BIGINT, MESSAGE VARCHAR, ROW_EXCERPT VARCHAR
)"""


class StoreError(Exception):
    """The database could not be opened or queried; the message says why."""


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _file_list(files: Sequence[Path]) -> str:
    return "[" + ", ".join(_sql_str(str(f)) for f in files) + "]"


class Store:
    """One DuckDB database file holding the landing table and the kept errors."""

    def __init__(
        self,
        db_path: Path,
        table: str,
        columns: Sequence[tuple[str, str]],
        *,
        threads: int = 2,
        read_only: bool = False,
    ) -> None:
        self.table = table
        self.columns = tuple(columns)
        try:
            self._con = duckdb.connect(
                str(db_path),
                read_only=read_only,
                config={"threads": threads, "preserve_insertion_order": False},
            )
        except duckdb.Error as e:
            raise StoreError(f"cannot open {db_path}: {e}") from None
        self._con.execute("SET TimeZone = 'UTC'")
        # FSST string compression costs ~2 ms/MB at checkpoint; dictionary/RLE still apply
        # (the table stays ~10x smaller than the NDJSON).
        self._con.execute("SET disabled_compression_methods = 'fsst'")
        if not read_only:
            self._con.execute(create_table_sql(table, columns))
            self._con.execute(_ERRORS_DDL)
            self._check_table(db_path)
        names = [quote_ident(n) for n, _ in columns]
        self._keys_literal = "[" + ", ".join(_sql_str(n) for n, _ in columns) + "]"
        self._insert_head = (
            f"INSERT INTO {quote_ident(table)} ({', '.join(names)}, "
            f"{quote_ident(COMMIT_TIME_COLUMN)}) SELECT {', '.join(names)}, now() FROM "
        )
        self._read_opts = (
            f"format='newline_delimited', columns={read_json_columns(columns)}, "
            "compression='auto_detect', maximum_object_size=16777216"
        )

    def _check_table(self, db_path: Path) -> None:
        """Refuse a database whose table was made from another schema."""
        have = [r[0] for r in self._con.execute(f"DESCRIBE {quote_ident(self.table)}").fetchall()]
        want = [n for n, _ in self.columns] + [COMMIT_TIME_COLUMN]
        if have != want:
            self._con.close()
            raise StoreError(
                f"table {self.table} in {db_path} has columns {have}, but the schema now "
                f"says {want}; use a fresh --data-dir (or move {db_path.name} away)"
            )

    def _insert(self, cur: duckdb.DuckDBPyConnection, files: Sequence[Path]) -> int:
        sql = f"{self._insert_head}read_json({_file_list(files)}, {self._read_opts})"
        row = cur.execute(sql).fetchone()
        return int(row[0]) if row else 0

    def land_bulk(self, files: Sequence[Path]) -> dict[str, int] | None:
        """Land whole files in one transaction; rows per file, or None if any row is off."""
        cur = self._con.cursor()
        t0 = time.perf_counter()
        try:
            counts = cur.execute(
                "SELECT filename, count(*), count(*) FILTER (WHERE json_keys(json) IS "
                f"DISTINCT FROM {self._keys_literal}) FROM read_ndjson_objects("
                f"{_file_list(files)}, compression='auto_detect', filename=true, "
                "maximum_object_size=16777216) GROUP BY filename"
            ).fetchall()
            if any(bad for _, _, bad in counts):
                return None
            per_file = {str(f): 0 for f in files}
            per_file.update({name: int(n) for name, n, _ in counts})
            t1 = time.perf_counter()
            cur.execute("BEGIN")
            try:
                inserted = self._insert(cur, files)
                t2 = time.perf_counter()
                expected = sum(per_file.values())
                if inserted != expected:
                    raise StoreError(f"inserted {inserted} rows, expected {expected}")
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            log.info(
                "landed %d requests, %d rows: check %.3f s, insert %.3f s, commit %.3f s",
                len(files), expected, t1 - t0, t2 - t1, time.perf_counter() - t2,
            )  # fmt: skip
            return per_file
        except (duckdb.Error, StoreError):
            return None
        finally:
            cur.close()

    def land_unchecked(self, files: Sequence[Path]) -> int | None:
        """Land whole files in one transaction without the key pre-scan; rows, or None.

        Unknown and duplicated keys are then ignored rather than rejected; a missing key,
        a null, malformed JSON or a value that does not cast still fails the batch.
        """
        cur = self._con.cursor()
        t0 = time.perf_counter()
        try:
            cur.execute("BEGIN")
            try:
                inserted = self._insert(cur, files)
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        except duckdb.Error:
            return None
        finally:
            cur.close()
        log.info(
            "landed %d requests, %d rows unchecked in %.3f s",
            len(files), inserted, time.perf_counter() - t0,
        )  # fmt: skip
        return inserted

    def land_checked(self, good_file: Path) -> int:
        """Land a file of rows :class:`~.schema.RowChecker` already accepted."""
        cur = self._con.cursor()
        try:
            return self._insert(cur, [good_file])
        finally:
            cur.close()

    def keep_errors(
        self, channel: tuple[str, str, str, str], request_id: str, errors: Sequence[RowError]
    ) -> None:
        if not errors:
            return
        now = dt.datetime.now(dt.timezone.utc)
        rows = [(now, *channel, request_id, e.line, e.message, e.excerpt) for e in errors]
        cur = self._con.cursor()
        try:
            cur.executemany(f"INSERT INTO {ERRORS_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        finally:
            cur.close()

    def query(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of one SQL statement; StoreError with DuckDB's message."""
        cur = self._con.cursor()
        try:
            cur.execute(sql)
            if cur.description is None:
                return [], []
            return [d[0] for d in cur.description], cur.fetchall()
        except duckdb.Error as e:
            raise StoreError(str(e)) from None
        finally:
            cur.close()

    def close(self) -> None:
        try:
            self._con.execute("CHECKPOINT")
        except duckdb.Error:
            pass
        self._con.close()
