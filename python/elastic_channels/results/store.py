"""The results directory: one JSON file per run, written once, never overwritten.

A file is named ``<UTC start, YYYYmmddTHHMMSSZ>-<run id>.json`` (the run id's characters
other than letters, digits, ``_``, ``.`` and ``-`` written as ``_``); when that name is
taken (the same run id recorded twice in one second) the new file gets ``-2``, ``-3``,
... before ``.json``. A file is created only if its name is free (a hard link from a
temporary file in the same directory, or an exclusive create where links do not work),
so two runs recording at once never write over each other, and a reader never sees a
file half written.

Files are read within bounds (:mod:`..bounded_read`): at most :data:`MAX_RESULT_BYTES`,
lists and objects nested at most :data:`MAX_DEPTH` deep; a file past either is refused
with one line naming it, and ``runs`` skips it. ``scan`` (what ``runs`` lists and
``latest`` picks from) reads each file's keys but ``run`` (the windows and summaries, by
far the biggest part), so listing a directory of long runs costs little memory.
"""

from __future__ import annotations

import datetime as dt
import json
import mmap
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from ..bounded_read import FileRefused, check_depth, read_json, size_text

__all__ = [
    "DEFAULT_HOME",
    "FORMAT",
    "MAX_DEPTH",
    "MAX_RESULT_BYTES",
    "Entry",
    "ResultError",
    "file_name",
    "find",
    "load",
    "results_dir",
    "safe_name",
    "scan",
    "write",
]

#: Where ``run`` keeps what it makes (as ``fleet.run.DEFAULT_HOME``); results in results/.
DEFAULT_HOME = Path(".elastic-channels")
#: The version of the result file's layout (its ``format`` key).
FORMAT = 1
#: How many ``-N`` suffixes are tried before a clash is an error.
MAX_SUFFIX = 1000
#: The largest result file read. A fleet window with its two histograms is some 6 KB,
#: kept twice (windows, metrics_windows): a day at 5 s windows is some 200 MB.
MAX_RESULT_BYTES = 512 << 20
#: How deep lists and objects may nest in a result file (``record`` writes 6 or so).
MAX_DEPTH = 64
#: The keys ``scan`` reads (what ``runs`` lists, sorts on and matches run ids with).
HEAD_KEYS = (
    "format", "kind", "run_id", "started_at", "ended_at", "started_at_utc",
    "ended_at_utc", "recorded_at_utc", "scenario", "figures", "thresholds",
    "thresholds_held", "thresholds_error", "outcome",
)  # fmt: skip
_Head = msgspec.defstruct("_Head", [(k, Any, msgspec.UNSET) for k in HEAD_KEYS])
_LATEST = re.compile(r"latest(?:~(\d+))?")


class ResultError(ValueError):
    """A result file that cannot be read or found; the message names it."""


@dataclass(frozen=True)
class Entry:
    """One readable result file: its whole document (:func:`load`, :func:`find`), or
    the keys of it :func:`scan` reads (:data:`HEAD_KEYS`)."""

    path: Path
    doc: dict[str, Any]

    @property
    def started_at(self) -> float:
        value = self.doc.get("started_at")
        return float(value) if isinstance(value, (int, float)) else 0.0


def results_dir(home: Path) -> Path:
    return Path(home) / "results"


def safe_name(run_id: str) -> str:
    """``run_id`` as part of a file name: no path separator or other character a file
    name should not hold (``../../x`` -> ``.._.._x``), at most 80 characters."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)[:80] or "run"


def file_name(run_id: str, started_at: float, suffix: int = 1) -> str:
    stamp = dt.datetime.fromtimestamp(started_at, dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{safe_name(run_id)}" + (f"-{suffix}" if suffix > 1 else "") + ".json"


def write(doc: dict[str, Any], home: Path) -> Path:
    """Write ``doc`` as a new file in ``home``'s results directory; its path. Never
    replaces a file: a name taken gets the next free ``-N`` suffix."""
    folder = results_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    tmp = folder / f".{os.getpid()}-{id(doc)}.tmp"
    tmp.write_text(text)
    try:
        for n in range(1, MAX_SUFFIX + 1):
            path = folder / file_name(str(doc["run_id"]), float(doc["started_at"]), n)
            try:
                if _link_or_create(tmp, path, text):
                    return path
            except FileExistsError:
                continue
        raise ResultError(
            f"{folder}: {MAX_SUFFIX} results of run {doc['run_id']!r} started in the same "
            "second already; not writing another"
        )
    finally:
        tmp.unlink(missing_ok=True)


def _link_or_create(tmp: Path, path: Path, text: str) -> bool:
    """Put ``text`` at ``path`` if no file is there (FileExistsError if one is)."""
    try:
        os.link(tmp, path)  # atomic, and fails if the name is taken
        return True
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: an exclusive create
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return True


def load(path: Path) -> dict[str, Any]:
    """A result file's document; ResultError naming the file if it is not one, or is
    over :data:`MAX_RESULT_BYTES` or :data:`MAX_DEPTH`."""
    try:
        doc = read_json(path, MAX_RESULT_BYTES, MAX_DEPTH)
    except FileRefused as e:
        raise ResultError(f"{path}: {e}") from None
    return _checked(doc, path)


def load_head(path: Path) -> dict[str, Any]:
    """The :data:`HEAD_KEYS` of a result file, read without building the rest (from
    the file mapped in memory); ResultError naming the file as :func:`load`'s."""
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ResultError(f"{path}: not a regular file")
            if info.st_size > MAX_RESULT_BYTES:
                raise ResultError(
                    f"{path}: {info.st_size:,} bytes, over the "
                    f"{size_text(MAX_RESULT_BYTES)} such a file may hold"
                )
            if info.st_size == 0:
                raise ResultError(f"{path}: not a JSON document (an empty file)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                head = msgspec.json.decode(data, type=_Head)
    except OSError as e:
        raise ResultError(f"{path}: cannot read it: {e.strerror or e}") from None
    except RecursionError:
        raise ResultError(
            f"{path}: nested deeper than the {MAX_DEPTH} levels a file may hold"
        ) from None
    except msgspec.ValidationError:
        raise ResultError(f"{path}: not an elastic-channels result (not a JSON object)") from None
    except msgspec.DecodeError as e:
        raise ResultError(f"{path}: not a JSON document ({e})") from None
    doc = {k: v for k in HEAD_KEYS if (v := getattr(head, k)) is not msgspec.UNSET}
    try:
        check_depth(doc, MAX_DEPTH - 1)
    except FileRefused as e:
        raise ResultError(f"{path}: {e}") from None
    return _checked(doc, path)


def _checked(doc: Any, path: Path) -> dict[str, Any]:
    if not isinstance(doc, dict) or "format" not in doc:
        raise ResultError(f"{path}: not an elastic-channels result (no 'format' key)")
    if doc["format"] != FORMAT:
        raise ResultError(
            f"{path}: result format {doc['format']!r}, and this version reads format {FORMAT}"
        )
    for key in ("run_id", "started_at", "figures"):
        if key not in doc:
            raise ResultError(f"{path}: a result without {key!r}")
    return doc


def scan(home: Path) -> tuple[list[Entry], list[ResultError]]:
    """The readable results in ``home`` (their :data:`HEAD_KEYS`), newest first (by
    start time, then the time each was recorded, then name), and what could not be
    read, each error naming its file."""
    folder = results_dir(home)
    entries, errors = [], []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            entries.append(Entry(path, load_head(path)))
        except ResultError as e:
            errors.append(e)
    entries.sort(key=lambda e: (e.started_at, str(e.doc.get("recorded_at_utc")), e.path.name))
    entries.reverse()
    return entries, errors


def find(ref: str, home: Path) -> Entry:
    """The result ``ref`` names: a result file's path, a run id in ``home``'s results, or
    ``latest`` / ``latest~N`` (the newest, the one before it, ...). ResultError naming
    ``ref`` when there is none, or when a run id has several results."""
    folder = results_dir(home)
    latest = _LATEST.fullmatch(ref)
    if latest:
        back = int(latest.group(1) or 0)
        entries, _ = scan(home)
        if back >= len(entries):
            raise ResultError(f"no result {ref!r}: {folder} holds {len(entries)} result(s)")
        return _whole(entries[back])
    path = Path(ref)
    if path.is_file():
        return Entry(path, load(path))
    if ref.endswith(".json") or os.sep in ref:
        raise ResultError(f"no result file {ref!r}")
    entries, _ = scan(home)
    hits = [e for e in entries if e.doc.get("run_id") == ref]
    if not hits:
        raise ResultError(
            f"no result for run id {ref!r} in {folder} (give a result file's path, a run "
            "id, latest or latest~N; `elastic-channels runs` lists them)"
        )
    if len(hits) > 1:
        names = ", ".join(str(e.path) for e in hits)
        raise ResultError(f"run id {ref!r} has {len(hits)} results: {names}; give one's path")
    return _whole(hits[0])


def _whole(entry: Entry) -> Entry:
    return Entry(entry.path, load(entry.path))
