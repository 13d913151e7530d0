"""Merging the native table's small Parquet files (``parquet_store.py``), in the background.

Each landing batch is its own file (about one a second while a worker streams), and
every query opens every file of the view. Files are merged by level, as a log-structured
store does: once :data:`FAN_IN` files of one level exist, the oldest of them are
streamed, a row group at a time, into one file of the next level, and ONE DuckDB
transaction swaps them in the registry and re-points the view (rows unchanged). So the
view holds at most about ``FAN_IN`` files per level, and a row is rewritten once per
level it climbs (level 1 after ~a minute of streaming, level 2 after about an hour),
not once per merge. The merged-away files are deleted :data:`RETIRE_GRACE_S` later (a
query that bound the old view may still be reading them); a crash before that leaves
them unregistered, and the next start removes them.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Protocol

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from .background import BackgroundSteps
from .parquet_files import ROW_GROUP_ROWS, fsync_path, new_file_name, write_options
from .parquet_registry import registered_name
from .store import FILES_TABLE, transaction

__all__ = ["FAN_IN", "MAX_LEVEL", "RETIRE_GRACE_S", "Compactor"]

log = logging.getLogger("elastic_channels.emulator")

#: Files of one level merged into one of the next.
FAN_IN = 64
#: Files of this level are not merged further (64**2 landing batches: about an hour).
MAX_LEVEL = 2
#: Seconds a merged-away file is kept for queries that were reading it.
RETIRE_GRACE_S = 60.0


class MergedFiles(Protocol):
    """What the compactor needs of the store whose files it merges (``ParquetStore``),
    so the store imports its compactor and not the other way round."""

    files_dir: Path
    commit_lock: threading.Lock
    schema: pa.Schema
    dictionary: list[str] | None
    fsync: bool

    @property
    def connection(self) -> duckdb.DuckDBPyConnection: ...

    def register(
        self, cur: duckdb.DuckDBPyConnection, name: str, rows: int, size: int, level: int = 0
    ) -> None: ...

    def refresh_view(self, cur: duckdb.DuckDBPyConnection) -> None: ...


class Compactor(BackgroundSteps):
    """Merges the store's small files in the background (one thread)."""

    failure = "merging data files failed; the files stay as they are"

    def __init__(self, store: MergedFiles) -> None:
        super().__init__(period_s=RETIRE_GRACE_S / 4)  # also to delete retired files
        self._store = store
        self._retired: list[tuple[float, list[Path]]] = []
        self.compactions = 0

    def stop(self, timeout: float = 60.0) -> None:
        """Stop merging (a merge under way finishes) and delete every retired file."""
        self.join(timeout)
        self.delete_retired(grace_s=0.0)

    def step(self) -> bool:
        return self.compact_once()

    def idle(self) -> None:
        self.delete_retired()

    def delete_retired(self, grace_s: float = RETIRE_GRACE_S) -> int:
        """Delete the merged-away files retired more than ``grace_s`` ago."""
        now, deleted = time.monotonic(), 0
        keep = []
        for at, paths in self._retired:
            if now - at < grace_s:
                keep.append((at, paths))
                continue
            for p in paths:
                p.unlink(missing_ok=True)
                deleted += 1
        self._retired = keep
        return deleted

    def _candidates(self) -> tuple[int, list[str]] | None:
        """The oldest FAN_IN files of the lowest level that has that many."""
        cur = self._store.connection.cursor()
        try:
            rows = cur.execute(
                f"SELECT NAME, LEVEL FROM {FILES_TABLE} WHERE LEVEL < ? ORDER BY LEVEL, ADDED_AT",
                [MAX_LEVEL],
            ).fetchall()
        finally:
            cur.close()
        by_level: dict[int, list[str]] = {}
        for name, level in rows:
            by_level.setdefault(int(level), []).append(registered_name(name))
        for level in sorted(by_level):
            if len(by_level[level]) >= FAN_IN:
                return level, by_level[level][:FAN_IN]
        return None

    def compact_once(self) -> bool:
        """Merge one set of files if a level has FAN_IN of them; whether it did."""
        found = self._candidates()
        if found is None:
            return False
        level, names = found
        store = self._store
        name = new_file_name("merged")
        path = store.files_dir / name
        try:
            rows = self._merge([store.files_dir / n for n in names], path)
            size = path.stat().st_size
            cur = store.connection.cursor()
            try:
                with store.commit_lock, transaction(cur):
                    gone = cur.execute(
                        f"DELETE FROM {FILES_TABLE} WHERE NAME IN (SELECT unnest(?))", [names]
                    ).fetchone()
                    if not gone or int(gone[0]) != len(names):
                        raise duckdb.InvalidInputException("files changed while merging")
                    store.register(cur, name, rows, size, level + 1)
                    store.refresh_view(cur)
            finally:
                cur.close()
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        self._retired.append((time.monotonic(), [store.files_dir / n for n in names]))
        self.compactions += 1
        log.debug("merged %d level-%d files into %s (%d rows)", len(names), level, name, rows)
        return True

    def _merge(self, sources: list[Path], target: Path) -> int:
        """Stream ``sources`` into one Parquet file at ``target`` (fsynced); its rows."""
        schema = self._store.schema
        rows = 0
        options = write_options(schema, self._store.dictionary)
        with pq.ParquetWriter(target, schema, **options) as writer:  # type: ignore[arg-type]
            for src in sources:
                for batch in pq.ParquetFile(src).iter_batches(batch_size=ROW_GROUP_ROWS):
                    batch = batch.cast(schema) if batch.schema != schema else batch
                    writer.write_batch(batch, row_group_size=ROW_GROUP_ROWS)
                    rows += batch.num_rows
        if self._store.fsync:
            fsync_path(target)
            fsync_path(target.parent)
        return rows
