"""Native row generators: rows generated and written as NDJSON in Rust.

``ResortGenerator.next_batch`` returns exactly the bytes that
``elastic_channels.rows.ResortGenerator.next_batch`` returns for the same arguments,
and ``ResortGenerator.batch_len`` their length, without making them. Both raise the
same exception classes with the same messages as the Python generator.
``TABLES_FINGERPRINT`` identifies the model the tables were baked from; compare it
with ``elastic_channels.model.table_fingerprint()`` to tell a stale build from a
current one.

``WorkloadTable`` takes a workload's replay table as Python resolved it
(``elastic_channels.workload.replay.ReplayTable``: rendered pieces, piece numbers, the row
template), checks it once, and ``WorkloadGenerator(table, run_id, worker_id, *,
start_seq=0)`` writes its rows with ``ResortGenerator``'s batch API, exactly the bytes
``elastic_channels.rows.WorkloadGenerator`` makes; the same engine writes both.

Every generator also counts a batch's *billable bytes* (Snowflake bills the values'
bytes, not the keys: ``elastic_channels.billable`` states the rule and its source)
as it sizes it: ``billable_len(n, sale_time_us)`` and ``last_billable_bytes``, the same
count as the Python generators'. ``billable_bytes(body)`` counts an NDJSON body by the
same rule (the emulator's count of what landed).

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
    WorkloadGenerator,
    WorkloadTable,
    __version__,
    billable_bytes,
)

__all__ = [
    "MAX_BATCH_ROWS",
    "TABLES_FINGERPRINT",
    "TABLE_LENGTH",
    "ResortGenerator",
    "RowParser",
    "WorkloadGenerator",
    "WorkloadTable",
    "__version__",
    "billable_bytes",
]
