"""The native landing table as Parquet data files and a DuckDB view over them.

Storing rows in a DuckDB table cost ~7.5 CPU-s per GB of NDJSON landed (its insert and
checkpoint; docs/PERFORMANCE.md), more than the whole budget of the emulator. Here a
landing batch is parsed (the store's parse path: the native parser's rows stay Arrow,
never scanned by DuckDB), written as one Parquet file and fsynced; then ONE DuckDB
transaction registers the file in ``_EMULATOR_FILES``, records the batch's requests in
``_EMULATOR_LANDED`` (and kept errors) and re-points the view ``RESORT_SALES`` at the
registered files. So the rows and "these requests landed" commit together, as before:
a crash before that commit leaves a file nothing refers to (removed at the next start)
and spool entries that land again; after it, the spool entries are known landed.
Queries (CLI, control API, SQL API, monitor, dashboard, run's verification) read the
view with the SQL they used on the table. A background compactor
(``parquet_compact.py``) merges small files so the view stays a few hundred files.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from ..landing.batch_sql import Body, LandedFile
from .parquet_compact import Compactor
from .parquet_files import (
    new_file_name,
    repeating_columns,
    storage_schema,
    view_sql,
    write_table,
)
from .parquet_registry import (
    FILES_DDL,
    exists,
    file_names,
    register_file,
    remove_unregistered,
)
from .schema import COMMIT_TIME_COLUMN, column_type, typed_select
from .store import (
    ERRORS_TABLE,
    FILES_DIR,
    FILES_TABLE,
    LANDED_TABLE,
    Store,
    StoreError,
    log_landed,
    relation_arrow,
    transaction,
)

__all__ = ["LegacyTableError", "ParquetStore"]

log = logging.getLogger("elastic_channels.emulator")


class LegacyTableError(StoreError):
    """The database holds the landing table as a DuckDB table (made before Parquet files)."""


class ParquetStore(Store):
    """A :class:`Store` whose landing table is Parquet files in ``DATA_DIR/files``."""

    def __init__(
        self,
        db_path: Path,
        table: str,
        columns: Sequence[tuple[str, str]],
        *,
        threads: int = 2,
        work_dir: Path | None = None,
        check_keys: bool = True,
        parse: str | None = None,
        fsync: bool = True,
        compact: bool = True,
    ) -> None:
        #: Held for every change of the registered files (a landing commit, a merge).
        self.commit_lock = threading.Lock()
        self.files_dir = Path(db_path).parent / FILES_DIR
        self.files_dir.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.schema = storage_schema(columns)
        self._data_schema = pa.schema(list(self.schema)[:-1])
        self._commit_field = self.schema.field(COMMIT_TIME_COLUMN)
        #: The columns dictionary-encoded in the data files (``repeating_columns``).
        self.dictionary: list[str] | None = None
        self._select = typed_select(columns, lambda t: column_type(t).duckdb)
        super().__init__(
            db_path, table, columns, threads=threads, work_dir=work_dir, check_keys=check_keys,
            parse=parse,
        )  # fmt: skip
        self.compactor = Compactor(self)
        if compact:
            self.compactor.start()

    # --- opening ------------------------------------------------------------------

    def _create_landing_table(self) -> None:
        """The files registry, orphan files removed, the view over the registered files."""
        if exists(self._con, "duckdb_tables()", "table_name", self.table):
            self._con.close()
            raise LegacyTableError(
                f"{self.table} in {self.db_path} is a DuckDB table (made by an older emulator)"
            )
        if exists(self._con, "duckdb_views()", "view_name", self.table) and not exists(
            self._con, "duckdb_tables()", "table_name", FILES_TABLE
        ):
            reads_files = self._view_reads_files()
            self._con.close()
            if reads_files:
                raise StoreError(
                    f"the file registry {FILES_TABLE} of the view {self.table} is missing "
                    f"from {self.db_path}: the database is damaged; move it (and "
                    f"{self.files_dir}) away, or use a fresh --data-dir"
                )
            raise StoreError(
                f"{self.table} in {self.db_path} is an Iceberg table (a view over its files); "
                "start with --table-format iceberg, or use a fresh --data-dir"
            )
        if exists(self._con, "duckdb_views()", "view_name", self.table):
            self._check_table(self.db_path)  # the view's columns: the schema it was made for
        self._con.execute(FILES_DDL)
        self.check_bookkeeping([FILES_DDL])
        removed = remove_unregistered(self._con, self.files_dir)
        if removed:
            log.info("removed %d data file(s) no landing committed (a crash before it)", removed)
        self.refresh_view(self._con)

    def _view_reads_files(self) -> bool:
        """Whether the table's view reads this store's ``files/`` (not an Iceberg table)."""
        row = self._con.execute(
            "SELECT sql FROM duckdb_views() WHERE view_name = ?", [self.table]
        ).fetchone()
        return row is not None and f"'{FILES_DIR}/" in str(row[0])

    # --- the registry and the view ------------------------------------------------

    def refresh_view(self, cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(view_sql(self.table, self.columns, file_names(cur)))

    def register(self, cur: duckdb.DuckDBPyConnection, name: str, rows: int, size: int,
                 level: int = 0) -> None:  # fmt: skip
        """Add a data file to the registry (in the caller's transaction)."""
        register_file(cur, name, rows, size, level)

    # --- landing ------------------------------------------------------------------

    def _parse(self, bodies: dict[str, Body]) -> tuple[dict[str, LandedFile], list[pa.Table]]:
        """Each body parsed (a read-only DuckDB transaction for the SQL path's lines); the
        good rows as Arrow tables of the data files' column types."""
        from ..landing.batch_native import NativeParse

        parts: list[pa.Table] = []
        cur = self._con.cursor()
        try:
            cur.execute("BEGIN")
            try:

                def take(select: str) -> int:
                    parts.append(relation_arrow(cur.sql(self._select.format(rows=select))))
                    return parts[-1].num_rows

                if isinstance(self.parse, NativeParse):
                    results = self.parse.land(cur, bodies, take, arrow_sink=parts.append)
                else:
                    results = self.parse.land(cur, bodies, take)
            finally:
                cur.execute("ROLLBACK")  # it only read
        finally:
            cur.close()
        return results, [p.cast(self._data_schema) for p in parts if p.num_rows]

    def land(
        self,
        bodies: dict[str, Body],
        record: Any,
        crash: Any = None,
    ) -> dict[str, LandedFile]:
        """Parse ``bodies``, write their good rows as one data file, and commit it with
        the record of the requests (``record(results) -> (landed_rows, error_rows)``) in
        one DuckDB transaction. ``crash(point)`` is the test hook."""
        t0 = time.monotonic()
        results, parts = self._parse(bodies)
        landed_rows, error_rows = record(results)
        now = dt.datetime.now(dt.timezone.utc)
        rows = None
        if parts:
            rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
            stamp = pa.repeat(pa.scalar(now, type=self._commit_field.type), rows.num_rows)
            rows = rows.append_column(self._commit_field, stamp)
        self._commit(rows, now, landed_rows, error_rows, crash)
        if crash is not None:
            crash("land:after-commit")
        self.compactor.poke()
        log_landed(bodies, results, t0)
        return results

    def append_rows(self, rows: pa.Table) -> None:
        """Add rows (every column of the table and ``_COMMIT_TIME``) as one data file,
        committed on its own: for tools and tests that make a table's content by hand."""
        self._commit(rows.cast(self.schema), dt.datetime.now(dt.timezone.utc), [], [], None)

    def _commit(
        self,
        rows: pa.Table | None,
        now: dt.datetime,
        landed_rows: Sequence[tuple[Any, ...]],
        error_rows: Sequence[tuple[Any, ...]],
        crash: Any,
    ) -> None:
        """Write ``rows`` as one file, then register it and the records in one transaction."""
        name = None
        if rows is not None and rows.num_rows:
            name = new_file_name("land")
            if self.dictionary is None:  # decided once, from the first file's rows
                self.dictionary = repeating_columns(rows)
            try:
                size = write_table(
                    rows, self.files_dir / name, fsync=self.fsync, dictionary=self.dictionary
                )
            except (OSError, pa.ArrowException) as e:
                (self.files_dir / name).unlink(missing_ok=True)
                raise StoreError(f"cannot write the data file {name}: {e}") from None
        cur = self._con.cursor()
        try:
            with self.commit_lock, transaction(cur):
                if name is not None and rows is not None:
                    self.register(cur, name, rows.num_rows, size)
                    self.refresh_view(cur)
                if landed_rows:
                    cur.executemany(
                        f"INSERT INTO {LANDED_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(*r, now) for r in landed_rows],
                    )
                if error_rows:
                    cur.executemany(
                        f"INSERT INTO {ERRORS_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(now, *r) for r in error_rows],
                    )
                if crash is not None:
                    crash("land:before-commit")
        except BaseException:
            if name is not None:
                (self.files_dir / name).unlink(missing_ok=True)
            raise
        finally:
            cur.close()

    # --- reporting, closing -------------------------------------------------------

    def files_summary(self) -> dict[str, Any]:
        """Data files now in the table, their bytes and rows, and merges done."""
        return files_summary(self._con, self.files_dir, self.compactor.compactions)

    def close(self) -> None:
        self.compactor.stop()
        super().close()


def files_summary(
    con: duckdb.DuckDBPyConnection, files_dir: Path, compactions: int
) -> dict[str, Any]:
    """What the file registry holds: data files, their bytes and rows, the deepest merge
    level, and the merges done (``compactions``)."""
    cur = con.cursor()
    try:
        row = cur.execute(
            f"SELECT count(*), coalesce(sum(BYTES), 0), coalesce(sum(ROW_COUNT), 0), "
            f"coalesce(max(LEVEL), 0) FROM {FILES_TABLE}"
        ).fetchone()
    finally:
        cur.close()
    files, size, rows, level = row if row else (0, 0, 0, 0)
    return {
        "data_files": int(files),
        "bytes": int(size),
        "rows": int(rows),
        "max_level": int(level),
        "compactions": compactions,
        "dir": str(files_dir),
    }
