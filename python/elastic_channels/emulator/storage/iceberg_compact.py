"""Small-file compaction for the emulator's Iceberg table.

Every landed flush is its own commit and so its own data file: at 20 MB/s of NDJSON and
one flush a second that is a ~2-3 MB Parquet file a second. After each commit the
compactor (a background thread, landing priority) looks at the current snapshot: once
:data:`MIN_FILES` files are under :data:`SMALL_FILE_BYTES`, it reads the smallest of them
(at most :data:`MAX_INPUT_BYTES`), streams them into one file (a row group at a time, so
memory stays small whatever the rows compress to) and commits one snapshot that
replaces them (Iceberg ``overwrite``: delete those files, add the new one; no row
changes). Reading and writing happen outside the commit lock; only the commit holds it,
so landing goes on meanwhile. Then older snapshots are expired and files no snapshot
refers to are deleted, those just replaced after :data:`GRACE_S` (a query may still be
reading them) or when the emulator stops.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import TYPE_CHECKING, Protocol

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from .background import BackgroundSteps

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile

    from .iceberg_table import IcebergTable

__all__ = [
    "GRACE_S",
    "MAX_INPUT_BYTES",
    "MIN_FILES",
    "ROW_GROUP_ROWS",
    "SMALL_FILE_BYTES",
    "Compactor",
]

log = logging.getLogger("elastic_channels.emulator")

#: Data files under this size (Parquet bytes) are merged ...
SMALL_FILE_BYTES = 16 << 20
#: ... once there are this many of them ...
MIN_FILES = 8
#: ... at most this much per merge (it is streamed, a row group at a time).
MAX_INPUT_BYTES = 128 << 20
#: Rows per row group of a merged file (what a merge holds in memory at once).
ROW_GROUP_ROWS = 262_144
#: Replaced files stay on disk this long for queries that planned them.
GRACE_S = 60.0


class MergedTable(Protocol):
    """What the compactor needs of the store whose table it merges (``IcebergStore``),
    so the store imports its compactor and not the other way round."""

    commit_lock: threading.Lock
    iceberg: IcebergTable

    @property
    def connection(self) -> duckdb.DuckDBPyConnection: ...

    @property
    def may_expire(self) -> bool: ...

    def refresh_view(self, cur: duckdb.DuckDBPyConnection) -> None: ...


class Compactor(BackgroundSteps):
    """Merges small data files of an Iceberg store's table in the background."""

    failure = "Iceberg compaction failed; the table is unchanged"

    def __init__(self, store: MergedTable) -> None:
        super().__init__()
        self._store = store
        self._replaced: list[tuple[float, list[str]]] = []
        self.compactions = 0

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the thread; then drop old snapshots and files nobody can be reading now."""
        if not self.join(timeout):
            return  # still merging (files being written): the next start tidies up
        store = self._store
        try:
            with store.commit_lock:
                snap = store.iceberg.table.current_snapshot()
                if snap is not None and store.may_expire:
                    store.iceberg.expire_before(snap.snapshot_id)
                    store.iceberg.remove_unreferenced()
        except Exception:
            log.exception("could not tidy the Iceberg table at stop; the next start will")

    def step(self) -> bool:
        return self.compact_once()

    def _merge(self, paths: list[str]) -> DataFile:
        """Stream ``paths`` into one new Parquet file in the table's data directory (a
        row group at a time: memory stays at about :data:`ROW_GROUP_ROWS` rows), and
        describe it for Iceberg (its statistics read from the footer, as ``add_files``)."""
        from pyiceberg.io.pyarrow import parquet_file_to_data_file

        ice = self._store.iceberg
        ice.data_dir.mkdir(parents=True, exist_ok=True)
        target = ice.data_dir / f"{uuid.uuid4()}-compacted.parquet"
        schema = ice.arrow_schema
        pending: list[pa.RecordBatch] = []
        rows = 0
        with pq.ParquetWriter(target, schema, compression="zstd") as writer:
            for path in paths:
                for batch in pq.ParquetFile(path).iter_batches(batch_size=65536):
                    pending.append(batch)
                    rows += batch.num_rows
                    if rows >= ROW_GROUP_ROWS:
                        writer.write_table(pa.Table.from_batches(pending).cast(schema))
                        pending, rows = [], 0
            if pending:
                writer.write_table(pa.Table.from_batches(pending).cast(schema))
        return parquet_file_to_data_file(ice.table.io, ice.table.metadata, f"file://{target}")

    def compact_once(self) -> bool:
        """One merge if enough small files wait; whether one was committed."""
        store = self._store
        ice = store.iceberg
        with store.commit_lock:
            small = [f for f in ice.data_files() if f.file_size_in_bytes < SMALL_FILE_BYTES]
        if len(small) < MIN_FILES:
            return False
        chosen: list[DataFile] = []
        size = 0
        # Smallest first: fresh flush files merge with each other before a merged file is
        # read again, so a byte is rewritten about log(size) times, not once per merge.
        for f in sorted(small, key=lambda f: f.file_size_in_bytes):
            if chosen and size + f.file_size_in_bytes > MAX_INPUT_BYTES:
                break
            chosen.append(f)
            size += f.file_size_in_bytes
        if len(chosen) < 2:
            return False
        paths = [f.file_path.removeprefix("file://") for f in chosen]
        new = [self._merge(paths)]
        with store.commit_lock:
            ice.replace_files(chosen, new)
            self.compactions += 1
            cur = store.connection.cursor()
            try:
                store.refresh_view(cur)
            finally:
                cur.close()
            self._replaced.append((time.monotonic(), paths))
            if store.may_expire:
                snap = ice.table.current_snapshot()
                assert snap is not None
                ice.expire_before(snap.snapshot_id)
                self._replaced = [
                    (t, p) for t, p in self._replaced if time.monotonic() - t < GRACE_S
                ]
                ice.remove_unreferenced(p for _, ps in self._replaced for p in ps)
        log.info(
            "compacted %d Iceberg data files (%.1f MB) into %d", len(chosen), size / 1e6, len(new)
        )
        return True
