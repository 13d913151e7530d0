"""What a row generator provides: the one interface both backends satisfy."""

from __future__ import annotations

from typing import Any, Literal, Protocol

#: The two implementations: ``native`` (``elastic_native``, Rust) and ``python``
#: (msgspec, the parity oracle).
Backend = Literal["native", "python"]


class RowGenerator(Protocol):
    """Deterministic rows of one worker, from sequence number ``seq`` on."""

    @property
    def seq(self) -> int:
        """The sequence number of the next row."""
        ...

    def next_batch(self, n: int, sale_time_us: int) -> bytes:
        """The next ``n`` rows as NDJSON, all stamped ``sale_time_us``."""
        ...

    def batch_len(self, n: int, sale_time_us: int) -> int:
        """``len(next_batch(n, sale_time_us))``, without making the rows or
        consuming them."""
        ...

    def billable_len(self, n: int, sale_time_us: int) -> int | None:
        """The billable bytes (the values' bytes: ``elastic_channels.billable``) of
        ``next_batch(n, sale_time_us)``, without making the rows or consuming them."""
        ...

    @property
    def last_billable_bytes(self) -> int | None:
        """The billable bytes of the last batch made, counted as it was made (None
        before the first)."""
        ...


class RowObjectGenerator(RowGenerator, Protocol):
    """A generator that can also hand out row objects, for the SDK's public
    ``append_rows`` (only the Python backend)."""

    def next_rows(self, n: int, sale_time_us: int) -> list[Any]:
        """The next ``n`` rows as objects the SDK encodes itself."""
        ...
