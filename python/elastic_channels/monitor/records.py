"""Reading a worker's output lines: window lines and summary lines, checked.

A worker prints one JSON object per line. Anything else on a log stream (the SDK's
own log lines, a line cut short by a dying pod, a reconnect's partial line) is not a
record: :func:`parse` raises :class:`LineError` saying why (``noise``), and the monitor
counts it and goes on. A worker record that cannot be used is a *bad* line: one over
MAX_LINE_BYTES, nested deeper than MAX_DEPTH, holding a number JSON cannot carry
(NaN, Infinity, an int past 64 bits), or with a field of the wrong type or out of its
range (:mod:`.line_schema`). It is checked whole before any of it reaches a window or
a row, and its error names the field and, where it can be told, the worker.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from . import line_schema

__all__ = ["MAX_DEPTH", "MAX_LINE_BYTES", "LineError", "parse"]

#: The longest line taken. A worker's lines are a few kB as a rule; one whose two
#: histograms count every bucket (~180 kB each) fits, and so does its row (the line in
#: RAW and its histograms again) in one statement under the emulator's 1 MiB request cap.
MAX_LINE_BYTES = 512 * 1024
#: How deep a line's objects and arrays may nest (a worker's own nest 3 deep).
MAX_DEPTH = 16
_INT64 = 2**63
_WORKER_ID = re.compile(r'"worker_id"\s*:\s*(\d{1,10})(?![\d.eE])')


class LineError(ValueError):
    """A line that is not a usable worker record; the message says why. ``noise``: not
    a worker record at all (an SDK log line); else a bad worker line, of ``worker_id``
    (None: not known) and ``run_id`` (None: not known)."""

    def __init__(
        self,
        message: str,
        *,
        noise: bool = False,
        worker_id: int | None = None,
        run_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.noise = noise
        self.worker_id = worker_id
        self.run_id = run_id


def parse(line: str | bytes | dict[str, Any], *, held: bool = False) -> dict[str, Any]:
    """A worker's window or summary record, checked; LineError for anything else.
    ``held``: a line the metrics table holds (written by a monitor, which checked it),
    read back in bulk on a restart: its histograms' headers and sizes are checked, not
    their counts (the costly part)."""
    if isinstance(line, dict):
        record = line
        _check_shape(record)
        _check_size(record)
    else:
        record = _loads(line)
    kind = record.get("type")
    if kind not in ("window", "summary"):
        raise LineError(f"not a worker record (type {line_schema.show(kind)})", noise=True)
    if not isinstance(line, dict):
        _check_shape(record)
    fields = line_schema.WINDOW_FIELDS if kind == "window" else line_schema.SUMMARY_FIELDS
    wrong = line_schema.check(record, fields, kind, counts=not held)
    if wrong is not None:
        raise LineError(f"{kind} line: {wrong}", **_who(record))
    return record


def _loads(line: str | bytes) -> dict[str, Any]:
    size = len(line)  # a str's characters: at most its bytes
    if isinstance(line, str) and size <= MAX_LINE_BYTES < 4 * size:
        size = len(line.encode("utf-8", "surrogatepass"))
    if size > MAX_LINE_BYTES:
        head = line[:4096]
        text = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
        raise LineError(
            f"a line of {size:,} bytes is over the {MAX_LINE_BYTES:,}-byte cap",
            worker_id=_worker_in(text),
        )
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.strip()
    if not text.startswith("{"):
        raise LineError(f"not a JSON object: {text[:60]!r}", noise=True)
    try:
        record = json.loads(text)
    except RecursionError:
        raise LineError(
            f"a line nested deeper than {MAX_DEPTH} levels", worker_id=_worker_in(text[:4096])
        ) from None
    except ValueError as e:
        raise LineError(f"malformed JSON ({e}): {text[:60]!r}", noise=True) from None
    if not isinstance(record, dict):
        raise LineError(f"not a JSON object: {text[:60]!r}", noise=True)
    return record


def _check_shape(record: dict[str, Any]) -> None:
    """Depth, and values JSON (and a VARIANT column) can carry, in every field."""
    stack: list[tuple[Any, int, str]] = [(v, 1, str(k)) for k, v in record.items()]
    if any(not isinstance(k, str) for k in record):
        raise LineError("a line with a key that is not text", **_who(record))
    while stack:
        value, depth, field = stack.pop()
        if isinstance(value, (str, bool)) or value is None:
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise LineError(f"{field!r} holds {value!r}: not a JSON number", **_who(record))
        elif isinstance(value, int):
            if not -_INT64 <= value < _INT64:
                raise LineError(f"{field!r} holds an int past 64 bits", **_who(record))
        elif isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise LineError(f"{field!r} nests deeper than {MAX_DEPTH} levels", **_who(record))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                if not isinstance(k, (str, int)):
                    raise LineError(f"{field!r} has a key that is not text", **_who(record))
                stack.append((v, depth + 1, field))
        else:
            raise LineError(f"{field!r} holds a {type(value).__name__}", **_who(record))


def _check_size(record: dict[str, Any]) -> None:
    """A dict fed in process: its size as a line."""
    try:
        size = len(json.dumps(record, separators=(",", ":"), allow_nan=False).encode())
    except (TypeError, ValueError) as e:
        raise LineError(f"not JSON: {e}", **_who(record)) from None
    if size > MAX_LINE_BYTES:
        raise LineError(
            f"a line of {size:,} bytes is over the {MAX_LINE_BYTES:,}-byte cap", **_who(record)
        )


def _who(record: dict[str, Any]) -> dict[str, Any]:
    """Whose line it is, as far as its ids are usable."""
    wid, run = record.get("worker_id"), record.get("run_id")
    ok = line_schema.problem(wid, line_schema.COMMON_FIELDS["worker_id"]) is None
    return {
        "worker_id": wid if ok and wid is not None else None,
        "run_id": run if isinstance(run, str) else None,
    }


def _worker_in(head: str) -> int | None:
    """The worker id in the head of a line not read whole (a best guess)."""
    found = _WORKER_ID.search(head)
    if found is None or int(found.group(1)) > line_schema.MAX_WORKER_ID:
        return None
    return int(found.group(1))
