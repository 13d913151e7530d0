"""The landing threads: take acked requests from the spool in order and land them.

A batch waits up to :data:`LINGER_S` or until :data:`MIN_BATCH_RAW_BYTES` are queued (a
big DuckDB transaction costs far less per MB), then every line of every request in it goes
through the one typed parse path in one transaction that also records the requests as
landed (``Store.land``). A request that cannot be landed at all (a spool file that no
longer inflates, a DuckDB failure on that request alone) is recorded as landed with every
row rejected and the reason: nothing is retried forever, nothing blocks the requests
after it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from ...billable import body_counter
from ..api.stats import MAX_KEPT_ERRORS, Stats
from ..http.bodies import MAX_RAW_BYTES, BadBody, BodyTooLarge, inflate
from ..storage.store import LandedFile, Store, StoreError
from .batch_sql import Body, LineError
from .crashpoints import crash_point
from .lines import clean_lines
from .priority import lower_thread_priority
from .spool import Spool, SpoolEntry

__all__ = ["Lander", "SpoolEntry", "lower_thread_priority"]

log = logging.getLogger("elastic_channels.emulator")

#: Counts a landed body's billable bytes (natively when built: one pass, GIL released).
_count_billable = body_counter()

#: A landing batch stops growing at this many requests or raw bytes.
MAX_BATCH_FILES = 256
MAX_BATCH_RAW_BYTES = 256 << 20
#: The lander waits for this much queued data before landing ...
MIN_BATCH_RAW_BYTES = 128 << 20
#: ... but never holds an acked append longer than this before landing it.
LINGER_S = 1.0
#: Raw bodies are kept in memory (not inflated again) while the queue holds less than this.
MAX_HELD_RAW_BYTES = 256 << 20


class Lander:
    """Owns the spool and the landing threads."""

    def __init__(
        self,
        spool_dir: Path,
        store: Store,
        stats: Stats,
        *,
        fsync: bool = True,
        threads: int = 2,
    ) -> None:
        self.spool = Spool(spool_dir, fsync=fsync)
        self.spool_dir = self.spool.dir
        self._store, self._stats, self._n_threads = store, stats, threads
        self._queue: deque[SpoolEntry] = deque()
        self._cond = threading.Condition()
        self._in_flight = 0
        self._held_bytes = 0
        self._waiters = 0
        self._stopping = False
        self._threads: list[threading.Thread] = []
        self._seq_lock = threading.Lock()
        self._queue.extend(recover_spool(self.spool, store))
        self._queued_bytes = sum(e.raw_bytes for e in self._queue)
        self._next_seq = max([e.seq for e in self._queue] + [store.max_landed_seq()]) + 1

    # --- the ack side -------------------------------------------------------------

    def put(
        self,
        channel: tuple[str, str, str, str],
        request_id: str,
        body: bytes,
        encoding: str,
        raw_bytes: int,
        *,
        raw: bytes | None = None,
        offset_token: str | None = None,
    ) -> None:
        """Spool one append durably; when this returns, the request may be acked."""
        with self._seq_lock:
            seq = self._next_seq
            self._next_seq += 1
        entry = SpoolEntry(
            seq, Spool.data_name(seq, encoding), channel, request_id, len(body), raw_bytes,
            encoding, offset_token, time.monotonic(),
        )  # fmt: skip
        self.spool.write(entry, body)
        with self._cond:
            if raw is not None and self._held_bytes + len(raw) <= MAX_HELD_RAW_BYTES:
                entry.raw = raw
                self._held_bytes += len(raw)
            self._queue.append(entry)
            self._queued_bytes += raw_bytes
            self._cond.notify_all()

    # --- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        for i in range(self._n_threads):
            t = threading.Thread(target=self._run, name=f"emulator-lander-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 30.0) -> None:
        """Land what is queued (up to ``timeout``), then stop the threads."""
        self.wait_idle(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout)

    def queued_request_ids(self) -> list[str]:
        """Request ids of the spooled requests not landed yet."""
        with self._cond:
            return [e.request_id for e in self._queue]

    def pending(self) -> int:
        with self._cond:
            return len(self._queue) + self._in_flight

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every spooled append has landed; False if ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiters += 1  # land now, do not linger
            self._cond.notify_all()
            try:
                while self._queue or self._in_flight:
                    left = deadline - time.monotonic()
                    if left <= 0 or not any(t.is_alive() for t in self._threads):
                        return False
                    self._cond.wait(left)
            finally:
                self._waiters -= 1
        return True

    # --- the landing side ---------------------------------------------------------

    def _take_batch(self) -> list[SpoolEntry] | None:
        with self._cond:
            while True:
                if not self._queue:
                    if self._stopping:
                        return None
                    self._cond.wait()
                    continue
                linger = self._queue[0].queued_at + LINGER_S - time.monotonic()
                if (
                    self._queued_bytes >= MIN_BATCH_RAW_BYTES
                    or linger <= 0
                    or self._waiters
                    or self._stopping
                ):
                    break
                self._cond.wait(linger)
            batch: list[SpoolEntry] = []
            raw = 0
            while self._queue and len(batch) < MAX_BATCH_FILES and raw < MAX_BATCH_RAW_BYTES:
                entry = self._queue.popleft()
                batch.append(entry)
                raw += entry.raw_bytes
                self._queued_bytes -= entry.raw_bytes
            self._in_flight += len(batch)
            return batch

    def _run(self) -> None:
        lower_thread_priority()
        while True:
            batch = self._take_batch()
            if batch is None:
                return
            try:
                self._land_or_split(batch)
            finally:
                with self._cond:
                    self._in_flight -= len(batch)
                    self._held_bytes -= sum(len(e.raw) for e in batch if e.raw is not None)
                    for e in batch:
                        e.raw = None
                    self._cond.notify_all()

    def _land_or_split(self, batch: list[SpoolEntry]) -> None:
        try:
            self._land(batch)
            return
        except (duckdb.Error, StoreError, OSError) as e:
            if len(batch) > 1:
                log.warning("a batch of %d failed to land (%s); landing each alone", len(batch), e)
            else:
                log.error("request %s could not be landed: %s", batch[0].request_id, e)
                try:
                    self._land(batch, failure=f"the emulator could not land this request: {e}")
                except (duckdb.Error, StoreError, OSError):
                    # The database itself is failing: keep the spool entry for the next
                    # start rather than lose it, and let the requests after it go on.
                    log.exception("request %s stays in the spool", batch[0].request_id)
                return
        for entry in batch:
            self._land_or_split([entry])

    def _land(self, batch: Sequence[SpoolEntry], failure: str | None = None) -> None:
        t0 = time.monotonic()
        bodies, early = prepare_batch(self.spool, batch, failure)
        outcome: dict[int, LandedFile] = {}

        def record(results: dict[str, LandedFile]) -> tuple[list[tuple], list[tuple]]:
            landed_rows, error_rows = [], []
            for entry in batch:
                got = results[str(entry.seq)]
                errors = sorted(early[entry.seq] + got.errors)
                got.parsed += len(early[entry.seq])
                outcome[entry.seq] = got
                got.errors = errors
                landed_rows.append(
                    (entry.seq, entry.request_id, *entry.channel, entry.offset_token,
                     got.parsed, got.inserted)
                )  # fmt: skip
                for line, message, excerpt in kept_errors(self._stats, entry.channel, errors):
                    error_rows.append((*entry.channel, entry.request_id, line, message, excerpt))
            return landed_rows, error_rows

        self._store.land(bodies, record, crash_point)
        share = (time.monotonic() - t0) / len(batch)
        for entry in batch:
            got = outcome[entry.seq]
            messages = [f"line {line}: {msg}" for line, msg, _ in got.errors]
            # the values' bytes of the rows landed: a body none of whose rows landed bills
            # nothing; one with refused rows is counted whole (a refused row is an error)
            body = bodies[str(entry.seq)].raw
            billable = _count_billable(body) if got.inserted else 0
            self._stats.landed(
                entry.channel, got.parsed, got.inserted, messages, share, entry.raw_bytes,
                offset_token=entry.offset_token, billable_bytes=billable,
            )  # fmt: skip
            self.spool.remove(entry)


_KEPT_LOCK = threading.Lock()


def kept_errors(stats: Stats, channel: Any, errors: list[tuple[int, str, str]]) -> list[tuple]:
    """The rejected rows still to keep for this channel (the first MAX_KEPT_ERRORS)."""
    with _KEPT_LOCK:
        room = max(0, MAX_KEPT_ERRORS - stats.kept_errors(channel))
        kept = errors[:room]
        stats.keep_errors(channel, len(kept))
    return kept


def recover_spool(spool: Spool, store: Store) -> list[SpoolEntry]:
    """The spooled requests still to land after a restart, in order; those that landed
    before a crash (only their clean-up was lost) are removed from the spool."""
    entries = spool.recover()
    done = store.landed_seqs([e.seq for e in entries])
    for e in entries:
        if e.seq in done:
            spool.remove(e)
    return [e for e in entries if e.seq not in done]


def prepare_batch(
    spool: Spool, batch: Sequence[SpoolEntry], failure: str | None
) -> tuple[dict[str, Body], dict[int, list[LineError]]]:
    """Each request's clean lines with its work file (name -> body), and the lines
    refused before parsing (per request seq). An unreadable spooled body, or a batch-wide
    ``failure``, leaves no lines and one error for the whole request."""
    bodies: dict[str, Body] = {}
    early: dict[int, list[LineError]] = {}
    for entry in batch:
        try:
            raw = entry.raw if entry.raw is not None else read_raw(spool, entry)
            raw, early[entry.seq] = clean_lines(raw)
        except (BadBody, BodyTooLarge, OSError) as e:
            raw, early[entry.seq] = b"", [(0, f"spooled body unreadable: {e}", "")]
        if failure is not None:
            raw, early[entry.seq] = b"", [(0, failure, "")]
        bodies[str(entry.seq)] = Body(spool.work_path(entry), raw)
    return bodies, early


def read_raw(spool: Spool, entry: SpoolEntry) -> bytes:
    """A spooled request's raw NDJSON. A file-mode fragment's frame is inflated here, not
    when it was registered (it was checked in pieces then), under a cap that fits it: the
    bytes it was counted to inflate to, however far over the inline bodies' cap."""
    cap = entry.raw_bytes if entry.request_id.startswith("file:") else MAX_RAW_BYTES
    return inflate(spool.read(entry), entry.encoding, cap=cap)
