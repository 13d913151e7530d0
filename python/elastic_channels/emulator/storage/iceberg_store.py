"""Landing into an Apache Iceberg table (``--table-format iceberg``), same SQL on top.

A batch is parsed exactly as for the native table (the one typed path, ``rowparse.py``,
in DuckDB: same casts, same errors), but its good rows come out as an Arrow table and
land as **one Iceberg commit** (pyiceberg, ``iceberg_table.py``): Parquet data files, a
manifest, a snapshot. That commit's summary also carries the batch's ``_EMULATOR_LANDED``
records (and kept errors), so rows and "these requests landed" commit together, as the
native path's single DuckDB transaction does. Right after, under the same lock, the
records are copied into DuckDB's ``_EMULATOR_LANDED``/``_EMULATOR_ERRORS`` and the view
``RESORT_SALES`` is re-pointed at the new snapshot's data files; at start, records of
snapshots that committed just before a crash (the copy lost) are copied from the
snapshots first. So an acked request lands exactly once whatever instant the emulator
dies at, and queries (CLI, control API, SQL API, monitor, dashboard) read the committed
Iceberg table: ``RESORT_SALES`` is ``read_parquet`` over exactly the current snapshot's
files. ``_COMMIT_TIME`` is the time the commit began (it must be in the Parquet file
before the commit exists).

Small files: each flush writes its own file (visible = committed, as on Snowflake), and
a background compactor (``iceberg_compact.py``) merges small ones into bigger files in
one replacing commit; only the last few snapshots are kept, and files no snapshot
refers to any more are deleted.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from .iceberg_compact import Compactor
from .iceberg_table import ERRORS_PROPERTY, LANDED_PROPERTY, CommitFailedException, IcebergTable
from .schema import COMMIT_TIME_COLUMN, iceberg_duckdb_type, quote_ident, typed_select
from .store import (
    ERRORS_TABLE,
    FILES_TABLE,
    ICEBERG_DIR,
    LANDED_TABLE,
    Body,
    LandedFile,
    Store,
    StoreError,
    log_landed,
    relation_arrow,
)

__all__ = ["KEEP_SNAPSHOTS", "IcebergStore"]

log = logging.getLogger("elastic_channels.emulator")

#: Snapshots kept in the table's metadata (each commit's summary is rewritten with them).
KEEP_SNAPSHOTS = 8

_TS = pa.timestamp("us", tz="UTC")


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _read_as(name: str, duck_type: str) -> str:
    """A column of the view: as the files hold it, but a VARIANT's text read as JSON."""
    if duck_type == "JSON":
        return f"CAST({quote_ident(name)} AS JSON) AS {quote_ident(name)}"
    return quote_ident(name)


class IcebergStore(Store):
    """A :class:`Store` whose landing table is an Iceberg table in ``DATA_DIR/iceberg``."""

    def __init__(
        self,
        db_path: Path,
        table: str,
        columns: Sequence[tuple[str, str]],
        *,
        threads: int = 2,
        work_dir: Path | None = None,
        check_keys: bool = True,
        compact: bool = True,
        parse: str | None = None,
    ) -> None:
        #: Held for every commit to the Iceberg table and the DuckDB copy that follows.
        self.commit_lock = threading.Lock()
        self._unrecorded = False  # a commit whose records did not reach DuckDB
        try:
            self.iceberg = IcebergTable(Path(db_path).parent / ICEBERG_DIR, table, columns)
        except (ValueError, OSError) as e:
            raise StoreError(f"cannot open the Iceberg table: {e}") from None
        # Typed as the table is, whichever parse path's relation the rows come from.
        self._select = typed_select(columns, iceberg_duckdb_type)
        super().__init__(
            db_path, table, columns, threads=threads, work_dir=work_dir, check_keys=check_keys,
            parse=parse,
        )  # fmt: skip
        self.compactor = Compactor(self)
        if compact:
            self.compactor.start()

    # --- opening ------------------------------------------------------------------

    def _create_landing_table(self) -> None:
        """Copy records a crash kept from DuckDB, tidy the table, point the view at it."""
        native = self._con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name IN (?, ?)",
            [self.table, FILES_TABLE],  # a DuckDB table, or the native table's files
        ).fetchone()
        if native and native[0]:
            self._con.close()
            raise StoreError(
                f"{self.table} in {self.db_path} is a native table; start without "
                "--table-format iceberg, or use a fresh --data-dir"
            )
        copied = self._reconcile()
        if copied:
            log.warning(
                "%d landed request(s) recorded from Iceberg snapshots after a crash", copied
            )
        snap = self.iceberg.table.current_snapshot()
        if snap is not None:
            self.iceberg.expire_before(snap.snapshot_id)
        removed = self.iceberg.remove_unreferenced()
        if removed:
            log.info("removed %d Iceberg files no snapshot refers to", removed)
        self.refresh_view(self._con)

    def _reconcile(self) -> int:
        """Record in DuckDB what Iceberg snapshots say landed but DuckDB does not know."""
        copied = 0
        for landed, errors in self.iceberg.landed_since():
            done = self.landed_seqs([int(r[0]) for r in landed])
            missing = [r for r in landed if int(r[0]) not in done]
            if missing:
                self._write_records(
                    self._con, missing, errors if len(missing) == len(landed) else []
                )
                copied += len(missing)
        return copied

    # --- the view -----------------------------------------------------------------

    def view_sql(self) -> str:
        """``CREATE OR REPLACE VIEW`` of the table over the current snapshot's files."""
        cols = [_read_as(n, iceberg_duckdb_type(t)) for n, t in self.columns]
        cols.append(quote_ident(COMMIT_TIME_COLUMN))
        paths = self.iceberg.data_paths()
        if paths:
            files = ", ".join(_sql_str(p) for p in paths)
            body = f"SELECT {', '.join(cols)} FROM read_parquet([{files}])"
        else:
            typed = [
                f"CAST(NULL AS {iceberg_duckdb_type(t)}) AS {quote_ident(n)}"
                for n, t in self.columns
            ]
            typed.append(f"CAST(NULL AS TIMESTAMPTZ) AS {quote_ident(COMMIT_TIME_COLUMN)}")
            body = f"SELECT {', '.join(typed)} WHERE false"
        return f"CREATE OR REPLACE VIEW {quote_ident(self.table)} AS {body}"

    def refresh_view(self, cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(self.view_sql())

    # --- landing ------------------------------------------------------------------

    def land(
        self,
        bodies: dict[str, Body],
        record: Any,
        crash: Any = None,
    ) -> dict[str, LandedFile]:
        """Parse ``bodies`` (the store's parse path) and commit the good rows, with the
        record of the requests, as one Iceberg snapshot; then copy the record to DuckDB."""
        t0 = time.monotonic()
        cur = self._con.cursor()
        try:
            cur.execute("BEGIN")
            try:
                parts: list[pa.Table] = []

                def take(select: str) -> int:
                    parts.append(relation_arrow(cur.sql(self._select.format(rows=select))))
                    return parts[-1].num_rows

                results = self.parse.land(cur, bodies, take)
                rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
                landed_rows, error_rows = record(results)
            finally:
                cur.execute("ROLLBACK")  # it only read
            with self.commit_lock:
                now = dt.datetime.now(dt.timezone.utc)
                rows = rows.append_column(
                    COMMIT_TIME_COLUMN, pa.repeat(pa.scalar(now, type=_TS), rows.num_rows)
                )
                at = now.isoformat()
                landed = [[*r, at] for r in landed_rows]
                errors = [[at, *r] for r in error_rows]
                props = {LANDED_PROPERTY: json.dumps(landed)}
                if errors:
                    props[ERRORS_PROPERTY] = json.dumps(errors)
                if crash is not None:
                    crash("land:before-commit")
                try:
                    self.iceberg.append(rows, props)
                except (CommitFailedException, ValueError, TypeError, pa.ArrowException) as e:
                    raise StoreError(f"the Iceberg commit failed: {e}") from None
                if crash is not None:
                    crash("land:after-commit")  # committed; DuckDB's copy not made yet
                self._after_commit(landed, errors)
        finally:
            cur.close()
        self.compactor.poke()
        log_landed(bodies, results, t0)
        return results

    def _after_commit(self, landed: list[list[Any]], errors: list[list[Any]]) -> None:
        """Copy the records to DuckDB and re-point the view (the rows are committed: a
        failure here is logged, never a reason to land them again)."""
        cur = self._con.cursor()
        try:
            cur.execute("BEGIN")
            self._write_records(cur, landed, errors)
            self.refresh_view(cur)
            cur.execute("COMMIT")
        except duckdb.Error:
            cur.execute("ROLLBACK")
            self._unrecorded = True  # keep the snapshots: the next start copies them
            log.exception("committed to Iceberg, but not recorded in DuckDB; the next start will")
            return
        finally:
            cur.close()
        if not self._unrecorded:
            self.iceberg.keep_last(KEEP_SNAPSHOTS)

    @staticmethod
    def _write_records(
        cur: duckdb.DuckDBPyConnection, landed: list[list[Any]], errors: list[list[Any]]
    ) -> None:
        if landed:
            cur.executemany(
                f"INSERT INTO {LANDED_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::TIMESTAMPTZ)",
                landed,
            )
        if errors:
            cur.executemany(
                f"INSERT INTO {ERRORS_TABLE} VALUES (?::TIMESTAMPTZ, ?, ?, ?, ?, ?, ?, ?, ?)",
                errors,
            )

    @property
    def may_expire(self) -> bool:
        """Whether old snapshots may go (every one's records are in DuckDB)."""
        return not self._unrecorded

    def iceberg_summary(self) -> dict[str, Any]:
        with self.commit_lock:
            out = self.iceberg.summary()
        out["warehouse"] = str(self.iceberg.warehouse)
        out["compactions"] = self.compactor.compactions
        return out

    def close(self) -> None:
        self.compactor.stop()
        super().close()
