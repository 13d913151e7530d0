"""The emulator's Apache Iceberg table: a pyiceberg SQL catalog on SQLite in the data dir.

``DATA_DIR/iceberg/`` holds the catalog (``catalog.db``: the pointer to the current
metadata file, swapped atomically by each commit) and the warehouse
(``PUBLIC/RESORT_SALES/{data,metadata}``: Parquet data files, Avro manifests, JSON
table metadata), readable by any Iceberg engine. The schema is ``model.COLUMNS`` in the
Iceberg types Snowflake writes for a Snowflake-managed table (``NUMBER(p,s)`` ->
decimal(p,s), also for s = 0; ``VARCHAR`` -> string, ``TIMESTAMP_TZ`` -> timestamptz,
microseconds) plus ``_COMMIT_TIME`` (timestamptz), every field required.

A commit can carry string properties in its snapshot summary: the store puts there the
requests a commit lands (:data:`LANDED_PROPERTY`), so the rows and the record that they
landed are one atomic commit, read back by :meth:`IcebergTable.landed_since`.

Callers serialise every method that commits (one writer); reads of the metadata are
cheap and local.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.manifest import DataFile
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IcebergType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)

from .schema import COMMIT_TIME_COLUMN, iceberg_duckdb_type

__all__ = [
    "LANDED_PROPERTY",
    "CommitFailedException",
    "IcebergTable",
    "iceberg_schema",
]

log = logging.getLogger("elastic_channels.emulator")

NAMESPACE = "PUBLIC"
#: Snapshot summary property: JSON ``[_EMULATOR_LANDED row, ...]`` of the requests landed.
LANDED_PROPERTY = "elastic-emulator.landed"
#: Snapshot summary property: JSON ``[_EMULATOR_ERRORS row, ...]`` kept with them.
ERRORS_PROPERTY = "elastic-emulator.errors"
#: Table properties: old metadata JSON files are deleted (the catalog points at the last).
TABLE_PROPERTIES = {
    "write.metadata.delete-after-commit.enabled": "true",
    "write.metadata.previous-versions-max": "8",
    "write.parquet.compression-codec": "zstd",
}


def _iceberg_type(sf_type: str) -> IcebergType:
    duck = iceberg_duckdb_type(sf_type)
    simple: dict[str, IcebergType] = {
        "VARCHAR": StringType(),
        # VARIANT: its JSON text (Snowflake writes Iceberg v3's variant; pyiceberg's
        # writer here has none), which the table's view reads back as JSON.
        "JSON": StringType(),
        "DOUBLE": DoubleType(),
        "BOOLEAN": BooleanType(),
        "DATE": DateType(),
        "TIMESTAMPTZ": TimestamptzType(),
        "TIMESTAMP": TimestampType(),
    }
    if duck in simple:
        return simple[duck]
    if duck.startswith("DECIMAL("):
        p, s = duck[len("DECIMAL(") : -1].split(",")
        return DecimalType(int(p), int(s))
    raise ValueError(f"no Iceberg type for column type {sf_type!r}")


def iceberg_schema(columns: Sequence[tuple[str, str]]) -> Schema:
    """The table's schema: the columns, then ``_COMMIT_TIME``; all required (NOT NULL)."""
    fields = [
        NestedField(i, name, _iceberg_type(sf_type), required=True)
        for i, (name, sf_type) in enumerate(columns, start=1)
    ]
    fields.append(
        NestedField(len(fields) + 1, COMMIT_TIME_COLUMN, TimestamptzType(), required=True)
    )
    return Schema(*fields)


def _local(path: str) -> str:
    return path.removeprefix("file://")


class IcebergTable:
    """The landing table in Iceberg; every write is one commit to the SQL catalog."""

    def __init__(self, warehouse: Path, table: str, columns: Sequence[tuple[str, str]]) -> None:
        self.warehouse = Path(warehouse).resolve()
        self.warehouse.mkdir(parents=True, exist_ok=True)
        self.identifier = f"{NAMESPACE}.{table}"
        self.catalog = SqlCatalog(
            "emulator",
            uri=f"sqlite:///{self.warehouse / 'catalog.db'}",
            warehouse=f"file://{self.warehouse}",
        )
        self.catalog.create_namespace_if_not_exists(NAMESPACE)
        schema = iceberg_schema(columns)
        self.table: Table = self.catalog.create_table_if_not_exists(
            self.identifier, schema, properties=TABLE_PROPERTIES
        )
        have = [f.name for f in self.table.schema().fields]
        if have != [f.name for f in schema.fields]:
            raise ValueError(
                f"the Iceberg table {self.identifier} in {self.warehouse} has columns {have}, "
                f"but the schema now says {[f.name for f in schema.fields]}; use a fresh "
                "--data-dir"
            )
        self.arrow_schema: pa.Schema = schema.as_arrow()
        #: Where the table's Parquet data files are.
        self.data_dir = Path(_local(self.table.location())) / "data"
        #: Data files and their bytes written by this process (appends and compaction).
        self.files_written = 0
        self.bytes_written = 0

    def _count_added(self) -> None:
        snap = self.table.current_snapshot()
        props = snap.summary.additional_properties if snap and snap.summary else {}
        self.files_written += int(props.get("added-data-files", 0))
        self.bytes_written += int(props.get("added-files-size", 0))

    # --- writing ------------------------------------------------------------------

    def append(self, rows: pa.Table, properties: dict[str, str]) -> int:
        """Commit ``rows`` (possibly none) as one snapshot with these summary properties;
        the new snapshot's id."""
        self.table.append(rows.cast(self.arrow_schema), snapshot_properties=properties)
        self._count_added()
        snap = self.table.current_snapshot()
        assert snap is not None
        return snap.snapshot_id

    def replace_files(self, old: Sequence[DataFile], new: Sequence[DataFile]) -> None:
        """One commit that swaps ``old`` data files for ``new`` ones (compaction)."""
        props = {"elastic-emulator.compacted-files": str(len(old))}
        with self.table.transaction() as tx:
            with tx.update_snapshot(snapshot_properties=props).overwrite() as overwrite:
                for f in old:
                    overwrite.delete_data_file(f)
                for f in new:
                    overwrite.append_data_file(f)
        self._count_added()

    def expire_before(self, snapshot_id: int) -> int:
        """Drop every snapshot older than ``snapshot_id`` from the metadata; how many."""
        ids = [s.snapshot_id for s in self.table.metadata.snapshots]  # in commit order
        old = ids[: ids.index(snapshot_id)]
        if old:
            self.table.maintenance.expire_snapshots().by_ids(old).commit()
        return len(old)

    def keep_last(self, n: int) -> int:
        """Keep only the last ``n`` snapshots (appends only add files: nothing to delete)."""
        snaps = self.table.metadata.snapshots
        if len(snaps) <= n:
            return 0
        return self.expire_before(snaps[-n].snapshot_id)

    # --- reading ------------------------------------------------------------------

    def data_files(self) -> list[DataFile]:
        """The data files of the current snapshot."""
        if self.table.current_snapshot() is None:
            return []
        return [task.file for task in self.table.scan().plan_files()]

    def data_paths(self) -> list[str]:
        return [_local(f.file_path) for f in self.data_files()]

    def landed_since(self) -> Iterable[tuple[list[Any], list[Any]]]:
        """``(landed rows, error rows)`` recorded by each snapshot still in the metadata."""
        for snap in self.table.metadata.snapshots:
            summary = snap.summary
            props = summary.additional_properties if summary is not None else {}
            if LANDED_PROPERTY in props:
                yield (
                    json.loads(props[LANDED_PROPERTY]),
                    json.loads(props.get(ERRORS_PROPERTY, "[]")),
                )

    def remove_unreferenced(self, grace_paths: Iterable[str] = ()) -> int:
        """Delete data and manifest files no retained snapshot refers to (left by a crash
        mid-write, or replaced by compaction and expired); ``grace_paths`` are kept."""
        io = self.table.io
        used = set(grace_paths)
        for snap in self.table.metadata.snapshots:
            used.add(_local(snap.manifest_list))
            for manifest in snap.manifests(io):
                used.add(_local(manifest.manifest_path))
                for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
                    used.add(_local(entry.data_file.file_path))
        base = self.data_dir.parent
        removed = 0
        for pattern in ("data/*.parquet", "metadata/*.avro"):
            for path in base.glob(pattern):
                if str(path) not in used:
                    path.unlink(missing_ok=True)
                    removed += 1
        return removed

    def summary(self) -> dict[str, Any]:
        """Snapshot id, data files and records of the current snapshot (for reports)."""
        snap = self.table.current_snapshot()
        if snap is None:
            return {"snapshot_id": None, "data_files": 0, "total_records": 0, "snapshots": 0,
                    "files_written": 0, "bytes_written": 0}  # fmt: skip
        props = snap.summary.additional_properties if snap.summary is not None else {}
        return {
            "snapshot_id": snap.snapshot_id,
            "data_files": int(props.get("total-data-files", 0)),
            "total_records": int(props.get("total-records", 0)),
            "snapshots": len(self.table.metadata.snapshots),
            "files_written": self.files_written,
            "bytes_written": self.bytes_written,
            "metadata_location": self.table.metadata_location,
        }
