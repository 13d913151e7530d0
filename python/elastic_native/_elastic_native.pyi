from typing import final

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

TABLES_FINGERPRINT: str
TABLE_LENGTH: int
MAX_BATCH_ROWS: int
__version__: str

def billable_bytes(body: bytes) -> int:
    """The billable bytes of an NDJSON body (Snowflake bills the values' bytes, not the
    keys): the top-level values of every line that is a JSON object."""

@final
class ResortGenerator:
    """Deterministic resort sales for one worker, generated and written as NDJSON."""

    def __new__(cls, run_id: str, worker_id: int, *, start_seq: int = 0) -> ResortGenerator: ...
    @property
    def seq(self) -> int:
        """The sequence number of the next row."""

    def next_batch(self, n: int, sale_time_us: int) -> bytes:
        """The next ``n`` rows stamped ``sale_time_us`` (Unix epoch microseconds), as NDJSON."""

    def batch_len(self, n: int, sale_time_us: int) -> int:
        """``len(self.next_batch(n, sale_time_us))``, with the same checks, computed
        without writing the rows or advancing ``seq``."""

    def billable_len(self, n: int, sale_time_us: int) -> int | None:
        """The billable bytes (the values' bytes) of ``self.next_batch(n, sale_time_us)``,
        with the same checks, computed without writing the rows or advancing ``seq``."""

    @property
    def last_billable_bytes(self) -> int | None:
        """The billable bytes of the last batch written (None before the first)."""

@final
class WorkloadTable:
    """A workload's replay table, checked and laid out once; any number of
    ``WorkloadGenerator``s share it."""

    def __new__(
        cls,
        entries: int,
        stride: int,
        pieces: list[bytes],
        ids: bytes,
        template: list[tuple[str, bytes]],
        *,
        value_bytes: list[int] | None = None,
        const_value_bytes: int = 0,
    ) -> WorkloadTable: ...
    @property
    def entries(self) -> int:
        """Number of entries."""

    @property
    def slots(self) -> int:
        """Pieces (slots) per row."""

@final
class WorkloadGenerator:
    """Deterministic rows of a workload for one worker, generated and written as NDJSON."""

    def __new__(
        cls, table: WorkloadTable, run_id: str, worker_id: int, *, start_seq: int = 0
    ) -> WorkloadGenerator: ...
    @property
    def seq(self) -> int:
        """The sequence number of the next row."""

    def next_batch(self, n: int, sale_time_us: int) -> bytes:
        """The next ``n`` rows sent at ``sale_time_us`` (Unix epoch microseconds), as NDJSON."""

    def batch_len(self, n: int, sale_time_us: int) -> int:
        """``len(self.next_batch(n, sale_time_us))``, with the same checks, computed
        without writing the rows or advancing ``seq``."""

    def billable_len(self, n: int, sale_time_us: int) -> int | None:
        """The billable bytes of ``self.next_batch(n, sale_time_us)``; None when the
        table was made without ``value_bytes``."""

    @property
    def last_billable_bytes(self) -> int | None:
        """The billable bytes of the last batch written (None before the first, or
        when the table was made without ``value_bytes``)."""

@final
class RowParser:
    """NDJSON bodies into a table's typed columns, by the emulator's casting rules."""

    def __new__(
        cls, columns: list[tuple[str, str, int, int, int]], *, check_keys: bool = True
    ) -> RowParser: ...
    @property
    def names(self) -> list[str]:
        """The column names, in order."""

    def parse(self, body: bytes) -> tuple[int, list[list[bytes]], bytes, list[int]]:
        """``(rows, buffers, deferred, deferred_lines)``: the rows landed, each column's
        Arrow buffers, and the lines left to the SQL path with their line numbers."""
