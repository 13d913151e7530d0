"""The spool (where an append is queued before it is acked) and the thread that lands it.

An append is acked only after its body is in the spool: the wire body (zstd as the SDK
sent it, so the spool costs ~1/10 of the raw bytes) is written and, unless disabled,
fsync'd, and then a small ``.meta.json`` beside it is renamed into place. A spool entry
without its meta file was never acked and is discarded at start; entries with one are
landed, also after a crash or restart. The lander thread takes entries in order,
batches them (bulk landing), and deletes them once their rows are committed.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import zstandard

from .schema import RowChecker, RowError
from .stats import MAX_KEPT_ERRORS, Stats
from .store import Store

__all__ = ["Lander", "SpoolEntry"]

log = logging.getLogger("elastic_channels.emulator")

_SUFFIX = {"zstd": ".ndjson.zst", "gzip": ".ndjson.gz", "identity": ".ndjson"}
#: A bulk landing batch stops growing at this many requests or raw bytes.
MAX_BATCH_FILES = 256
MAX_BATCH_RAW_BYTES = 256 << 20
#: The lander waits for this much queued data before landing (bigger transactions cost
#: DuckDB far less per MB: ~23 ms/MB at 5 MB, ~8 ms/MB at 200 MB on this 2-core box) ...
MIN_BATCH_RAW_BYTES = 128 << 20
#: ... but never holds an acked append longer than this before landing it.
LINGER_S = 1.0


@dataclass
class SpoolEntry:
    seq: int
    data_file: str
    channel: tuple[str, str, str, str]
    request_id: str
    wire_bytes: int
    raw_bytes: int
    queued_at: float = 0.0  # time.monotonic() when acked; 0 for entries recovered at start


def _write(path: Path, data: bytes, fsync: bool) -> None:
    with open(path, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


class Lander:
    """Owns the spool directory and the landing thread."""

    def __init__(
        self,
        spool_dir: Path,
        store: Store,
        stats: Stats,
        *,
        fsync: bool = True,
        threads: int = 2,
        check_keys: bool = True,
    ) -> None:
        self.spool_dir = spool_dir
        self._check_keys = check_keys
        self._n_threads = threads
        self._store = store
        self._stats = stats
        self._fsync = fsync
        self._checker = RowChecker(store.columns)
        self._queue: deque[SpoolEntry] = deque()
        self._cond = threading.Condition()
        self._in_flight = 0
        self._queued_bytes = 0
        self._waiters = 0
        self._stopping = False
        self._threads: list[threading.Thread] = []
        spool_dir.mkdir(parents=True, exist_ok=True)
        self._seq = itertools.count(self._recover())
        self._seq_lock = threading.Lock()

    def _recover(self) -> int:
        """Queue acked entries left from an earlier run; drop unacked ones. The next seq."""
        entries = []
        for meta in sorted(self.spool_dir.glob("*.meta.json")):
            d = json.loads(meta.read_text())
            d["channel"] = tuple(d["channel"])
            d["queued_at"] = 0.0
            entries.append(SpoolEntry(**d))
        acked = {e.data_file for e in entries}
        for f in self.spool_dir.iterdir():
            if not f.name.endswith(".meta.json") and f.name not in acked:
                f.unlink()
        self._queue.extend(sorted(entries, key=lambda e: e.seq))
        self._queued_bytes = sum(e.raw_bytes for e in entries)
        return max((e.seq for e in entries), default=0) + 1

    # --- the ack side -------------------------------------------------------------

    def put(
        self,
        channel: tuple[str, str, str, str],
        request_id: str,
        body: bytes,
        encoding: str,
        raw_bytes: int,
    ) -> None:
        """Spool one append durably; when this returns, the request may be acked."""
        with self._seq_lock:
            seq = next(self._seq)
        name = f"{seq:012d}{_SUFFIX[encoding]}"
        _write(self.spool_dir / name, body, self._fsync)
        entry = SpoolEntry(seq, name, channel, request_id, len(body), raw_bytes, time.monotonic())
        meta = self.spool_dir / f"{seq:012d}.meta.json"
        tmp = meta.with_suffix(".tmp")
        _write(tmp, json.dumps(asdict(entry)).encode(), self._fsync)
        os.replace(tmp, meta)
        with self._cond:
            self._queue.append(entry)
            self._queued_bytes += raw_bytes
            self._cond.notify_all()

    # --- the landing side ---------------------------------------------------------

    def start(self) -> None:
        # Two landers overlap one batch's scan with another's commit; DuckDB appends from
        # concurrent transactions to one table without conflict.
        for i in range(self._n_threads):
            t = threading.Thread(target=self._run, name=f"emulator-lander-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 30.0) -> None:
        """Land what is queued (up to ``timeout``), then stop the thread."""
        self.wait_idle(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout)

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
            batch, raw = [], 0
            while self._queue and len(batch) < MAX_BATCH_FILES and raw < MAX_BATCH_RAW_BYTES:
                entry = self._queue.popleft()
                batch.append(entry)
                raw += entry.raw_bytes
                self._queued_bytes -= entry.raw_bytes
            self._in_flight += len(batch)
            return batch

    def _run(self) -> None:
        while True:
            batch = self._take_batch()
            if batch is None:
                return
            try:
                self._land(batch)
            except Exception:  # never let the thread die silently; keep the entries
                log.exception("landing failed; retrying in 1 s")
                with self._cond:
                    self._queue.extendleft(reversed(batch))
                    self._queued_bytes += sum(e.raw_bytes for e in batch)
                    self._in_flight -= len(batch)
                time.sleep(1)
                continue
            with self._cond:
                self._in_flight -= len(batch)
                self._cond.notify_all()

    def _land(self, batch: list[SpoolEntry]) -> None:
        t0 = time.monotonic()
        files = [self.spool_dir / e.data_file for e in batch]
        channels = {e.channel for e in batch}
        if not self._check_keys and len(channels) == 1:
            n = self._store.land_unchecked(files)
            if n is not None:
                raw = sum(e.raw_bytes for e in batch)
                elapsed = time.monotonic() - t0
                self._stats.landed(batch[0].channel, n, n, [], elapsed, raw, len(batch))
                for entry in batch:
                    self._remove(entry)
                return
        counts = self._store.land_bulk(files)
        if counts is not None:
            share = (time.monotonic() - t0) / len(batch)
            for entry, f in zip(batch, files):
                self._stats.landed(
                    entry.channel, counts[str(f)], counts[str(f)], [], share, entry.raw_bytes
                )
                self._remove(entry)
            return
        for entry in batch:
            self._land_one(entry)

    def _land_one(self, entry: SpoolEntry) -> None:
        t0 = time.monotonic()
        path = self.spool_dir / entry.data_file
        counts = self._store.land_bulk([path])
        if counts is not None:
            n = counts[str(path)]
            self._stats.landed(entry.channel, n, n, [], time.monotonic() - t0, entry.raw_bytes)
            self._remove(entry)
            return
        data = _decode(path.read_bytes(), path.name)
        good, parsed, errors = self._checker.check(data)
        inserted, cast_errors = self._land_good(entry, good)
        errors = sorted(errors + cast_errors)
        kept = max(0, MAX_KEPT_ERRORS - self._stats.channel(entry.channel).rows_error_count)
        self._store.keep_errors(entry.channel, entry.request_id, errors[:kept])
        messages = [f"line {e.line}: {e.message}" for e in errors]
        elapsed = time.monotonic() - t0
        self._stats.landed(entry.channel, parsed, inserted, messages, elapsed, entry.raw_bytes)
        self._remove(entry)

    def _land_good(self, entry: SpoolEntry, good: bytes) -> tuple[int, list[RowError]]:
        """Land checked rows; halve on a DuckDB cast error until the bad rows are isolated."""
        lines = good.splitlines(keepends=True)
        errors: list[RowError] = []

        def land(part: Sequence[bytes]) -> int:
            if not part:
                return 0
            tmp = self.spool_dir / f"{entry.seq:012d}.checked.ndjson"
            tmp.write_bytes(b"".join(part))
            try:
                return self._store.land_checked(tmp)
            except duckdb.Error as e:
                if len(part) == 1:
                    errors.append(RowError(0, f"cannot convert: {e}", part[0][:200].decode()))
                    return 0
            finally:
                tmp.unlink(missing_ok=True)
            mid = len(part) // 2
            return land(part[:mid]) + land(part[mid:])

        return land(lines), errors

    def _remove(self, entry: SpoolEntry) -> None:
        (self.spool_dir / f"{entry.seq:012d}.meta.json").unlink(missing_ok=True)
        (self.spool_dir / entry.data_file).unlink(missing_ok=True)


def _decode(body: bytes, name: str) -> bytes:
    if name.endswith(".zst"):
        return zstandard.ZstdDecompressor().decompressobj().decompress(body)
    if name.endswith(".gz"):
        import gzip

        return gzip.decompress(body)
    return body
