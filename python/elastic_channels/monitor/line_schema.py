"""What a worker's window and summary lines may hold: each field's type and range.

The ranges are those of a real worker (its meter: :mod:`elastic_channels.worker.meter`)
with room to spare, and they fit the metrics table's columns (``NUMBER(10,0)`` worker
ids, ``NUMBER(19,0)`` counts, finite ``FLOAT``s, ``TIMESTAMP_TZ`` times), also once a
fleet row adds up ten thousand workers' lines. A field that is absent or null is not
checked unless the line needs it; a field not listed here is kept as it is (in RAW), and
:mod:`.records` has checked its shape (depth, finite numbers). :func:`check` raises
:class:`~.records.LineError` naming the first field that does not fit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import histogram

__all__ = [
    "EPOCH_MAX",
    "EPOCH_MIN",
    "MAX_COUNT",
    "MAX_WORKER_ID",
    "SUMMARY_FIELDS",
    "WINDOW_FIELDS",
    "Field",
    "check",
]

#: Window times: epoch seconds from 2000-01-01 to 2100-01-01 (UTC).
EPOCH_MIN = 946_684_800.0
EPOCH_MAX = 4_102_444_800.0
#: A worker id is a Job's completion index; the column is NUMBER(10,0).
MAX_WORKER_ID = 2**31 - 1
#: Rows, bytes, acks ... of one line: a petabyte a window. Ten thousand workers' lines
#: still add up within a NUMBER(19,0) fleet row.
MAX_COUNT = 10**15
#: A stage index (-1: warmup); the STAGE column is NUMBER(10,0).
MAX_STAGE = 2**31 - 1
#: Entries of a summary's ``stages``: a worker takes at most this many stages
#: (``worker.schedule.MAX_STAGES``).
MAX_STAGES = 1000
#: A window's start and end may stray this far out of it (rounding, a clock's step).
WINDOW_SLACK_S = 1.0


@dataclass(frozen=True)
class Field:
    """One field: ``kind`` is ``int``, ``number`` (an int or a finite float), ``bool``,
    ``name`` (printable text, not empty), ``text``, ``histogram`` (an encoded
    HdrHistogram the monitor can merge) or ``stages`` (a summary's per-stage totals, each
    entry as :data:`STAGE_FIELDS` says); numbers, lengths and list sizes lie in ``low`` ..
    ``high``."""

    kind: str
    low: float = 0
    high: float = math.inf
    required: bool = False
    unit: str = ""

    def describe(self) -> str:
        if self.kind == "bool":
            return "true or false"
        if self.kind == "histogram":
            return "an encoded HdrHistogram of the monitor's settings"
        if self.kind == "stages":
            return f"a list of at most {self.high:,.0f} stage totals"
        if self.kind in ("name", "text"):
            return f"text of {self.low:,.0f} to {self.high:,.0f} {self.unit or 'characters'}"
        what = "an int" if self.kind == "int" else "a number"
        unit = f" ({self.unit})" if self.unit else ""
        return f"{what} >= {_num(self.low)} and <= {_num(self.high)}{unit}"


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e16 else f"{x:g}"


def _count(required: bool = False) -> Field:
    return Field("int", 0, MAX_COUNT, required)


_EPOCH = Field("number", EPOCH_MIN, EPOCH_MAX, True, "epoch seconds, 2000 to 2100")
_SOME_EPOCH = Field("number", EPOCH_MIN, EPOCH_MAX, False, "epoch seconds, 2000 to 2100")
_MS = Field("number", 0, 1e9, unit="ms")
_RATE = Field("number", 0, 1e18)
_MIB = Field("number", 0, 1e7, unit="MiB")
_SECONDS = Field("number", 0, 1e9, unit="seconds")
_NAME = Field("name", 1, 253)  # a Kubernetes object name

_LATENCIES = (
    "ack_p50_ms", "ack_p95_ms", "ack_p99_ms", "ack_max_ms", "behind_p99_ms", "behind_max_ms",
)  # fmt: skip
_WINDOW_COUNTS = (
    "acked_rows", "acked_bytes", "acks", "in_flight_batches", "in_flight_bytes",
    "resent_batches", "sdk_retries", "errors", "channels", "billable_bytes",
)  # fmt: skip
_SUMMARY_COUNTS = (
    "rows_sent", "rows_acked", "bytes_sent", "bytes_acked", "resent_batches", "resent_rows",
    "channel_reopens", "sdk_retries", "errors", "unacked_rows", "rows_generated", "channels",
    "warmup_rows_sent", "warmup_rows_acked", "warmup_bytes_sent", "warmup_bytes_acked",
    "billable_bytes", "warmup_billable_bytes",
)  # fmt: skip
_SUMMARY_RATES = ("mb_per_s", "rows_per_s", "cpu_s_per_gb", "target_bps", "short_mb")
_SUMMARY_CPU = ("cpu_s", "gen_cpu_s", "loop_cpu_s", "sdk_append_cpu_s")

COMMON_FIELDS: dict[str, Field] = {
    "worker_id": Field("int", 0, MAX_WORKER_ID, True),
    "run_id": Field("name", 1, 256, True),
    "pod_name": _NAME,
    "node_name": _NAME,
    "host": _NAME,  # where the worker runs (its pod's name on Kubernetes)
    "scenario": Field("name", 1, 64),
    "scenario_hash": Field("name", 1, 128),
}
WINDOW_FIELDS: dict[str, Field] = {
    **COMMON_FIELDS,
    "window_start": _EPOCH,
    "window_seconds": Field("number", 0.001, 86_400.0, True, "seconds"),
    "start": _EPOCH,
    "end": _EPOCH,
    "partial": Field("bool"),
    "rows": _count(required=True),
    "bytes": _count(required=True),
    **{k: _count() for k in _WINDOW_COUNTS},
    "mb_per_s": _RATE,
    "rows_per_s": _RATE,
    **dict.fromkeys(_LATENCIES, _MS),
    "ack_hist_us": Field("histogram"),
    "behind_hist_us": Field("histogram"),
    "cpu_pct": _RATE,  # a window cut short at once divides by a tiny time
    "rss_mib": _MIB,
    "target_bps": _RATE,
    "stage": Field("int", -1, MAX_STAGE),
    "warmup": Field("bool"),
}
SUMMARY_FIELDS: dict[str, Field] = {
    **COMMON_FIELDS,
    **{k: _count() for k in _SUMMARY_COUNTS},
    "first_seq": Field("int", 0, 2**63 - 1),
    "next_seq": Field("int", 0, 2**63 - 1),
    "seconds": _SECONDS,
    "drain_seconds": _SECONDS,
    "warmup_seconds": _SECONDS,
    "send_start": _SOME_EPOCH,
    "send_end": _SOME_EPOCH,
    **dict.fromkeys(_SUMMARY_RATES, _RATE),
    **dict.fromkeys(_LATENCIES, _MS),
    "ack_hist_us": Field("histogram"),
    **dict.fromkeys(_SUMMARY_CPU, _SECONDS),
    # The loop's CPU less the SDK's, each measured apart: a hair below 0 happens.
    "own_cpu_s": Field("number", -1e9, 1e9, unit="seconds"),
    "append_own_cpu_s": Field("number", -1e9, 1e9, unit="seconds"),
    "peak_rss_mib": _MIB,
    "under_target": Field("bool"),
    "encoder": Field("text", 0, 256),
    "append_mode": Field("text", 0, 256),
    "error": Field("text", 0, math.inf),
    "stages": Field("stages", 0, MAX_STAGES),
}
#: Each entry of a summary's ``stages`` (its totals per stage of the schedule).
STAGE_FIELDS: dict[str, Field] = {
    "stage": Field("int", 0, MAX_STAGE, True),
    "seconds": _SECONDS,
    "target_bps": _RATE,
    **{k: _count() for k in ("rows", "bytes", "acked_rows", "acked_bytes")},
}


def problem(value: Any, f: Field, *, counts: bool = True) -> str | None:
    """What is wrong with ``value`` for ``f`` (None: nothing); ``counts``: a histogram's
    counts are read too, not only its headers and size."""
    if value is None and not f.required:
        return None
    if f.kind == "histogram":
        try:
            histogram.decode(value) if counts else histogram.check_encoded(value)
        except histogram.HistogramError as e:
            return f"must be {f.describe()}: {e}"
        return None
    if f.kind == "stages":
        return _stages_problem(value, f)
    if f.kind == "bool":
        ok = isinstance(value, bool)
    elif f.kind in ("name", "text"):
        ok = isinstance(value, str) and f.low <= len(value) <= f.high and _clean(value, f)
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        ok = False
    elif f.kind == "int":
        ok = isinstance(value, int) and f.low <= value <= f.high
    else:
        ok = math.isfinite(value) and f.low <= value <= f.high
    return None if ok else f"must be {f.describe()}, got {show(value)}"


def _stages_problem(value: Any, f: Field) -> str | None:
    """What is wrong with a summary's ``stages`` (None: nothing), naming the entry."""
    if not isinstance(value, list) or len(value) > f.high:
        return f"must be {f.describe()}, got {show(value)}"
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            return f"[{i}] must be an object, got {show(entry)}"
        wrong = check(entry, STAGE_FIELDS, "stage")
        if wrong is not None:
            return f"[{i}] {wrong}"
    return None


def _clean(text: str, f: Field) -> bool:
    """Text the target stores as it is: UTF-8 (no lone surrogates); a name is printable."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return f.kind != "name" or text.isprintable()


def show(value: Any) -> str:
    """``value`` for a message: a long one cut, with its length."""
    text = repr(value)
    if len(text) <= 60:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    return f"{text[:48]}...{size}"


def check(
    record: Mapping[str, Any], fields: Mapping[str, Field], kind: str, *, counts: bool = True
) -> str | None:
    """The first problem of a ``kind`` line (``window``/``summary``) as ``'field' ...``,
    or None when every field fits (``counts``: see :func:`problem`)."""
    for key, f in fields.items():
        wrong = problem(record.get(key), f, counts=counts)
        if wrong is not None:
            return f"{key!r} {wrong}"
    if kind == "window":
        return _window_times(record)
    return None


def _window_times(record: Mapping[str, Any]) -> str | None:
    ws, secs = record["window_start"], record["window_seconds"]
    start, end = record["start"], record["end"]
    low, high = ws - WINDOW_SLACK_S, ws + secs + WINDOW_SLACK_S
    if not low <= start <= high:
        return f"'start' must be within its window ({_num(ws)} + {secs:g} s), got {start!r}"
    if not low <= end <= high:
        return f"'end' must be within its window ({_num(ws)} + {secs:g} s), got {end!r}"
    if end < start:
        return "'end' is before 'start'"
    return None
