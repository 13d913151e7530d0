"""The native parse path of a landing batch: each body parsed once by the project's Rust
crate (``elastic_native.RowParser``) into typed columns, wrapped as Arrow arrays without
a copy and handed to DuckDB in one go; the few lines it leaves (malformed, refused, or a
form only the SQL path reads) go through the SQL path (``batch_sql.py``), which decides
them and words their refusals, so both paths land the same rows and refuse the same lines
with the same messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from ..storage.schema import column_type
from .batch_sql import Body, LandedFile, RowSink, SqlParse

__all__ = ["ArrowSink", "NativeParse", "column_specs"]

#: Takes the rows the native parser landed, as one Arrow table.
ArrowSink = Callable[[pa.Table], object]

#: The relation name the Arrow rows are registered under while they are inserted.
_ROWS_VIEW = "_emulator_native_rows"


def column_specs(columns: Sequence[tuple[str, str]]) -> list[tuple[str, str, int, int, int]]:
    """``RowParser``'s column specs: (name, kind, precision, scale, length; 0 = none)."""
    specs = []
    for name, sf_type in columns:
        ct = column_type(sf_type)
        if ct.precision is not None:
            spec = ("number", ct.precision, ct.scale or 0, 0)
        elif ct.duckdb == "VARCHAR":
            spec = ("varchar", 0, 0, ct.length or 0)
        elif ct.duckdb == "JSON":
            spec = ("variant", 0, 0, 0)  # its JSON text (src/landing/variant.rs)
        else:
            kind = {"TIMESTAMPTZ": "timestamp_tz", "TIMESTAMP": "timestamp_ntz"}.get(
                ct.duckdb, ct.duckdb.lower()
            )
            spec = (kind, 0, 0, 0)
        specs.append((name, *spec))
    return specs


def _arrow_type(kind: str, precision: int, scale: int) -> pa.DataType:
    return {
        "varchar": pa.large_string(),
        "variant": pa.large_string(),
        "timestamp_tz": pa.timestamp("us", tz="UTC"),
        "timestamp_ntz": pa.timestamp("us"),
        "boolean": pa.bool_(),
        "double": pa.float64(),
        "date": pa.date32(),
    }.get(kind) or pa.decimal128(precision, scale)


class NativeParse:
    """Parses a batch with ``elastic_native.RowParser``; what it leaves, with SQL."""

    name = "native"

    def __init__(
        self, columns: Sequence[tuple[str, str]], *, check_keys: bool = True, parser: Any = None
    ) -> None:
        from elastic_native import RowParser

        specs = column_specs(columns)
        self._parser = parser or RowParser(specs, check_keys=check_keys)
        self._schema = pa.schema([(s[0], _arrow_type(*s[1:4])) for s in specs])
        self._sql = SqlParse(columns, check_keys=check_keys)
        self._names = ", ".join('"' + n.replace('"', '""') + '"' for n, _ in columns)

    def _batch(self, rows: int, buffers: list[list[bytes]]) -> pa.RecordBatch:
        arrays = [
            pa.Array.from_buffers(f.type, rows, [None, *map(pa.py_buffer, bufs)])
            for f, bufs in zip(self._schema, buffers, strict=True)
        ]
        return pa.RecordBatch.from_arrays(arrays, schema=self._schema)

    def land(
        self,
        cur: duckdb.DuckDBPyConnection,
        bodies: dict[str, Body],
        sink: RowSink,
        arrow_sink: ArrowSink | None = None,
    ) -> dict[str, LandedFile]:
        """Each body's lines parsed; the good rows handed to ``sink`` (Arrow first, then
        the SQL path's rows of the lines left to it). With ``arrow_sink``, the rows this
        parser landed go to it as one Arrow table instead (no DuckDB scan of them), and
        only the SQL path's rows go to ``sink``."""
        results: dict[str, LandedFile] = {}
        batches = []
        left: dict[str, Body] = {}
        numbers: dict[str, list[int]] = {}
        for name, body in bodies.items():
            rows, buffers, deferred, lines = self._parser.parse(body.raw)
            results[name] = LandedFile(rows, rows)
            if rows:
                batches.append(self._batch(rows, buffers))
            if lines:
                left[name] = Body(body.path, deferred)
                numbers[name] = lines
        rows_table = pa.Table.from_batches(batches, schema=self._schema)
        if arrow_sink is not None:
            if rows_table.num_rows:
                arrow_sink(rows_table)
        else:
            cur.register(_ROWS_VIEW, rows_table)
            try:
                sink(f"SELECT {self._names} FROM {_ROWS_VIEW}")
            finally:
                cur.unregister(_ROWS_VIEW)
        if left:
            for name, got in self._sql.land(cur, left, sink).items():
                mine, where = results[name], numbers[name]
                mine.parsed += got.parsed
                mine.inserted += got.inserted
                # A line the SQL path could not place is 0; else its number in the body.
                mine.errors = [(where[n - 1] if n else 0, m, e) for n, m, e in got.errors]
        return results
