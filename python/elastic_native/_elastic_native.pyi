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
]

TABLES_FINGERPRINT: str
TABLE_LENGTH: int
MAX_BATCH_ROWS: int
__version__: str

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
