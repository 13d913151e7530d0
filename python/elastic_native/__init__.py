"""Native resort-sales generator: rows generated and written as NDJSON in Rust.

``ResortGenerator.next_batch`` returns exactly the bytes that
``elastic_channels.rows.ResortGenerator.next_batch`` returns for the same arguments,
and ``ResortGenerator.batch_len`` their length, without making them. Both raise the
same exception classes with the same messages as the Python generator.
``TABLES_FINGERPRINT`` identifies the model the tables were baked from; compare it
with ``elastic_channels.model.table_fingerprint()`` to tell a stale build from a
current one.

``RowParser`` is the emulator's landing parse: NDJSON lines into a table's typed columns
(Arrow buffers), by the casting rules of ``elastic_channels.emulator.rowparse``; the lines
it leaves go to that SQL path (``elastic_channels.emulator.batch_native``).
"""

from elastic_native._elastic_native import (
    MAX_BATCH_ROWS,
    TABLE_LENGTH,
    TABLES_FINGERPRINT,
    ResortGenerator,
    RowParser,
    __version__,
)

__all__ = [
    "MAX_BATCH_ROWS",
    "TABLES_FINGERPRINT",
    "TABLE_LENGTH",
    "ResortGenerator",
    "RowParser",
    "__version__",
]
