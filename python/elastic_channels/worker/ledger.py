"""The batch ledger: every batch appended and not yet acked, and the bytes in flight."""

from __future__ import annotations

from collections.abc import Iterator


class Batch:
    """One append's worth of rows, tracked until acked.

    It holds no payload: generation is deterministic, so rows ``seq_start ..
    seq_start + n_rows`` stamped ``sale_time_us`` are made again, byte for byte, if
    the batch has to be resent. Unacked data is held once, by the SDK, not twice.
    """

    __slots__ = ("appended_at", "bid", "billable", "channel_epoch", "n_rows", "nbytes",
                 "sale_time_us", "sends", "seq_start", "stage")  # fmt: skip

    def __init__(
        self,
        bid: int,
        seq_start: int,
        n_rows: int,
        sale_time_us: int,
        nbytes: int,
        billable: int = 0,
    ) -> None:
        self.bid = bid
        self.seq_start = seq_start
        self.n_rows = n_rows
        self.sale_time_us = sale_time_us
        self.nbytes = nbytes
        #: The billable bytes of its values (Snowflake bills those: elastic_channels/billable.py).
        self.billable = billable
        self.appended_at = 0.0
        #: The channel (session number) it was last appended on; -1: never appended.
        self.channel_epoch = -1
        self.sends = 0
        #: The stage of the schedule it was first sent in (-1: warmup); its ack counts there.
        self.stage = 0


class Ledger:
    """Batches sent and not yet acked, by id."""

    def __init__(self) -> None:
        self._pending: dict[int, Batch] = {}
        self.in_flight_bytes = 0
        self._next_bid = 0

    def new_batch(
        self, seq_start: int, n_rows: int, sale_time_us: int, nbytes: int, billable: int = 0
    ) -> Batch:
        """A new batch, entered as pending."""
        batch = Batch(self._next_bid, seq_start, n_rows, sale_time_us, nbytes, billable)
        self._next_bid += 1
        self._pending[batch.bid] = batch
        self.in_flight_bytes += nbytes
        return batch

    def holds(self, batch: Batch) -> bool:
        return self._pending.get(batch.bid) is batch

    def settle(self, batch: Batch) -> None:
        """``batch`` was acked: it leaves the ledger."""
        del self._pending[batch.bid]
        self.in_flight_bytes -= batch.nbytes

    def __len__(self) -> int:
        return len(self._pending)

    def __iter__(self) -> Iterator[Batch]:
        """The pending batches, oldest first (a copy: safe to settle while iterating)."""
        return iter(list(self._pending.values()))

    def unacked_rows(self) -> int:
        return sum(b.n_rows for b in self._pending.values())

    def oldest_append(self, channel_epoch: int) -> float | None:
        """When the longest-waiting batch on channel ``channel_epoch`` was appended."""
        times = [b.appended_at for b in self._pending.values() if b.channel_epoch == channel_epoch]
        return min(times) if times else None
