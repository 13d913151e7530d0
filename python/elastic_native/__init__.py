"""Native resort-sales generator: rows generated and written as NDJSON in Rust.

``ResortGenerator.next_batch`` returns exactly the bytes that
``elastic_channels.rows.ResortGenerator.next_batch`` returns for the same arguments,
and ``ResortGenerator.batch_len`` their length, without making them. Both raise the
same exception classes with the same messages as the Python generator.
``TABLES_FINGERPRINT`` identifies the model the tables were baked from; compare it
with ``elastic_channels.model.table_fingerprint()`` to tell a stale build from a
current one.
"""

from elastic_native._elastic_native import (
    MAX_BATCH_ROWS,
    TABLE_LENGTH,
    TABLES_FINGERPRINT,
    ResortGenerator,
    __version__,
)

__all__ = ["MAX_BATCH_ROWS", "TABLES_FINGERPRINT", "TABLE_LENGTH", "ResortGenerator", "__version__"]
