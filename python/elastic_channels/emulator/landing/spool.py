"""The spool: where an append is kept, durably, from before its ack until it has landed.

The wire body (zstd as the SDK sent it, ~1/10 of the raw bytes) is written and, unless
disabled, fsync'd; then a small ``.meta.json`` beside it is renamed into place; only then
is the request acked. A body without its meta file was never acked and is discarded at
start. An entry is removed once ``_EMULATOR_LANDED`` holds its sequence number (committed
with its rows), so an entry found at start that has already landed is removed, not landed
again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from .crashpoints import crash_point

__all__ = ["Spool", "SpoolEntry", "SpoolError", "work_dir_of"]

_SUFFIX = {"zstd": ".zst", "gzip": ".gz", "deflate": ".zz", "identity": ".ndjson"}


class SpoolError(ValueError):
    """A spool file that cannot be read back; the message names it and what to do."""


@dataclass
class SpoolEntry:
    seq: int
    data_file: str
    channel: tuple[str, str, str, str]
    request_id: str
    wire_bytes: int
    raw_bytes: int
    encoding: str = "zstd"
    offset_token: str | None = None
    queued_at: float = 0.0  # time.monotonic() when acked; 0 for entries recovered at start
    #: The raw NDJSON while it is held in memory (not written to the meta file).
    raw: bytes | None = field(default=None, repr=False)

    def meta(self) -> dict:
        d = asdict(self)
        del d["raw"], d["queued_at"]
        return d


#: The fields a meta file holds (``SpoolEntry.meta``).
_META_FIELDS = {f.name for f in fields(SpoolEntry)} - {"raw", "queued_at"}


def work_dir_of(spool_dir: Path) -> Path:
    """Where the lander writes raw NDJSON for DuckDB to read: beside the spool."""
    spool_dir = Path(spool_dir)
    return spool_dir.with_name(spool_dir.name + "-work")


def _write(path: Path, data: bytes, fsync: bool) -> None:
    with open(path, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


class Spool:
    def __init__(self, directory: Path, *, fsync: bool = True) -> None:
        self.dir = Path(directory)
        self.work_dir = work_dir_of(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.work_dir.mkdir(exist_ok=True)
        self._fsync = fsync

    def write(self, entry: SpoolEntry, body: bytes) -> None:
        """Make ``entry`` durable; when this returns the request may be acked."""
        _write(self.dir / entry.data_file, body, self._fsync)
        crash_point("spool:after-data")
        meta = self.dir / f"{entry.seq:012d}.meta.json"
        tmp = meta.with_suffix(".tmp")
        _write(tmp, json.dumps(entry.meta()).encode(), self._fsync)
        os.replace(tmp, meta)
        if self._fsync:
            fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        crash_point("spool:after-meta")

    @staticmethod
    def data_name(seq: int, encoding: str) -> str:
        return f"{seq:012d}{_SUFFIX[encoding]}"

    def read(self, entry: SpoolEntry) -> bytes:
        return (self.dir / entry.data_file).read_bytes()

    def recover(self) -> list[SpoolEntry]:
        """Acked entries left from an earlier run, in order; unacked bodies are removed."""
        entries = [_read_meta(meta) for meta in sorted(self.dir.glob("*.meta.json"))]
        acked = {e.data_file for e in entries}
        for f in self.dir.iterdir():
            if f.is_file() and not f.name.endswith(".meta.json") and f.name not in acked:
                f.unlink()
        for f in self.work_dir.iterdir():
            f.unlink()
        return sorted(entries, key=lambda e: e.seq)

    def remove(self, entry: SpoolEntry) -> None:
        (self.dir / f"{entry.seq:012d}.meta.json").unlink(missing_ok=True)
        (self.dir / entry.data_file).unlink(missing_ok=True)
        self.work_path(entry).unlink(missing_ok=True)

    def work_path(self, entry: SpoolEntry) -> Path:
        """Where the entry's raw NDJSON is written for DuckDB to read (not durable)."""
        return self.work_dir / f"{entry.seq:012d}.ndjson"


def _read_meta(path: Path) -> SpoolEntry:
    """The entry a meta file describes; :class:`SpoolError` naming the file if it is
    damaged (not JSON, a field missing, unknown or of the wrong type).
    An acked request is not dropped silently: start-up stops and says which file."""
    try:
        d = json.loads(path.read_bytes())
        if not isinstance(d, dict):
            raise ValueError("not a JSON object")
        unknown = set(d) - _META_FIELDS
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
        channel = d.get("channel")
        if not (isinstance(channel, list) and len(channel) == 4
                and all(isinstance(c, str) for c in channel)):  # fmt: skip
            raise ValueError(f"channel {channel!r} is not [database, schema, pipe, channel]")
        entry = SpoolEntry(**{**d, "channel": tuple(channel)})
        _check_types(entry, path)
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as e:
        raise SpoolError(
            f"spool meta file {path} is damaged ({e}); the request it records was acked "
            "but has not landed: repair it, or move it and its data file away to start "
            "without that request"
        ) from None
    return entry


def _check_types(entry: SpoolEntry, path: Path) -> None:
    ints = {"seq": entry.seq, "wire_bytes": entry.wire_bytes, "raw_bytes": entry.raw_bytes}
    for name, value in ints.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} {value!r} is not a count")
    if entry.encoding not in _SUFFIX:
        raise ValueError(f"encoding {entry.encoding!r} is not one of {', '.join(_SUFFIX)}")
    if not isinstance(entry.request_id, str):
        raise ValueError(f"request_id {entry.request_id!r} is not text")
    if entry.offset_token is not None and not isinstance(entry.offset_token, str):
        raise ValueError(f"offset_token {entry.offset_token!r} is not text")
    name = entry.data_file
    if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(f"data_file {name!r} is not a file name in {path.parent}")
