"""Reading a worker's output lines: window lines and summary lines, checked.

A worker prints one JSON object per line. Anything else on a log stream (the SDK's
own log lines, a line cut short by a dying pod, a reconnect's partial line) is not a
record: :func:`parse` raises :class:`LineError` saying why, and the monitor counts it
and goes on.
"""

from __future__ import annotations

import json
import math
from typing import Any

from . import histogram

__all__ = ["LineError", "parse"]

_WINDOW_NUMBERS = ("window_start", "window_seconds", "start", "end", "rows", "bytes")
_WINDOW_COUNTS = ("rows", "bytes", "acked_rows", "acks", "resent_batches", "sdk_retries", "errors")


class LineError(ValueError):
    """A line that is not a usable worker record; the message says why."""


def _number(record: dict[str, Any], key: str) -> float:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LineError(f"{record.get('type')} line: {key!r} must be a number, got {value!r}")
    return float(value)


def parse(line: str | bytes | dict[str, Any]) -> dict[str, Any]:
    """A worker's window or summary record, checked; LineError for anything else."""
    if isinstance(line, dict):
        record = line
    else:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        text = text.strip()
        if not text.startswith("{"):
            raise LineError(f"not a JSON object: {text[:60]!r}")
        try:
            record = json.loads(text)
        except ValueError as e:
            raise LineError(f"malformed JSON ({e}): {text[:60]!r}") from None
        if not isinstance(record, dict):
            raise LineError(f"not a JSON object: {text[:60]!r}")
    kind = record.get("type")
    if kind not in ("window", "summary"):
        raise LineError(f"not a worker record (type {kind!r})")
    if not isinstance(record.get("run_id"), str) or not record["run_id"]:
        raise LineError(f"{kind} line without a run_id")
    worker = record.get("worker_id")
    if isinstance(worker, bool) or not isinstance(worker, int) or worker < 0:
        raise LineError(f"{kind} line: worker_id must be an int >= 0, got {worker!r}")
    if kind == "window":
        for key in _WINDOW_NUMBERS:
            _number(record, key)
        if not record["window_seconds"] > 0:
            raise LineError(f"window line: window_seconds must be > 0: {record['window_seconds']}")
        if record["end"] < record["start"]:
            raise LineError("window line: end before start")
        for key in _WINDOW_COUNTS:
            value = record.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise LineError(f"window line: {key!r} must be an int >= 0, got {value!r}")
        for key in ("ack_hist_us", "behind_hist_us"):
            if record.get(key) is not None:
                try:
                    histogram.decode(record[key])
                except histogram.HistogramError as e:
                    raise LineError(f"window line: {key}: {e}") from None
    return record
