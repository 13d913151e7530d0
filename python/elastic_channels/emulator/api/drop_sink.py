"""The drop sink: check every row of every request, ack it, and keep nothing.

``elastic-channels emulator serve --sink drop`` (``EmulatorConfig(sink="drop")``) serves
the same endpoints, credentials, Content-Types, caps and streaming decompression as the
landing emulator, but a rows request is not spooled or landed: every line is typed
against the table's columns by one msgspec decode of the whole body, the good rows are
counted and discarded, and the request is acked. The channel's status moves on as if
the rows had landed (``rows_inserted``, ``rows_parsed``, ``last_committed_offset_token``;
a bad line is counted in ``rows_error_count`` with ``last_error_message`` = ``line N:
why``), so the SDK is content. This is the "drop sink" of streaming benchmarks: the
client side can then be measured flat out without a database behind it.

The sink's own time for each request (decompressing, checking, bookkeeping; not the
HTTPS transfer, not an answer delay) is measured and reported by :meth:`DropSink.snapshot`
(``drop_sink`` in ``emulator stats``): per request and per MB, split into inflate and
check.

The check is msgspec's typed decode (C, one call per request) of a Struct built from
the columns: NUMBER(p,s) a number (or numeric string) of at most ``p - s`` integer
digits, VARCHAR(n) a string of at most ``n`` characters (or a number or boolean),
TIMESTAMP_* an RFC 3339 timestamp or an integer epoch, BOOLEAN, FLOAT, DATE; every
column present and not null; unknown keys refused unless ``check_keys`` is off. It is
the landing path's rules for the rows a client sends, not every lax conversion of
``rowparse.py`` (a date-only timestamp, a numeric string with blanks round it and a
duplicated key are not its business; land the rows to check those).
"""

from __future__ import annotations

import datetime
import threading
import time
from collections import deque
from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any, Union

import msgspec

from ...measures import percentile
from ..storage.schema import column_type
from .stats import MAX_KEPT_ERRORS, Stats

__all__ = ["SINKS", "DropSink", "RowTypeChecker"]

#: What ``--sink`` may name: ``land`` (spool, then DuckDB) or ``drop`` (check, discard).
SINKS = ("land", "drop")
#: Request times kept for the percentiles in the snapshot (the newest ones).
KEPT_TIMES = 4096


def _field_type(sf_type: str) -> Any:
    """The msgspec type a column's JSON value must decode as."""
    ct = column_type(sf_type)
    if ct.precision is not None:
        p, s = ct.precision, ct.scale or 0
        # Rounded to s decimals it must fit p - s integer digits.
        edge = float(Decimal(10) ** (p - s) - Decimal(5) / Decimal(10) ** (s + 1))
        return Annotated[float, msgspec.Meta(gt=-edge, lt=edge)]
    duck = ct.duckdb
    if duck in ("TIMESTAMPTZ", "TIMESTAMP"):
        return Union[datetime.datetime, int]  # noqa: UP007 (a runtime type expression)
    if duck == "VARCHAR":
        text: Any = str if ct.length is None else Annotated[str, msgspec.Meta(max_length=ct.length)]
        return Union[text, int, float, bool]  # noqa: UP007
    if duck == "BOOLEAN":
        return Union[bool, float]  # noqa: UP007
    if duck == "DOUBLE":
        return float
    if duck == "DATE":
        return datetime.date
    if duck == "JSON":  # VARIANT: any JSON value but null
        return Union[str, int, float, bool, list[Any], dict[str, Any]]  # noqa: UP007
    raise ValueError(f"no drop-sink check for column type {sf_type!r}")


def _ms_at(times: list[float], q: float) -> float | None:
    """The ``q``-th percentile (the project's one rule) of sorted ``times``, in ms to the
    microsecond (a request's sink time is often under 0.1 ms)."""
    at = percentile(times, q)
    return None if at is None else round(at * 1e3, 3)


class RowTypeChecker:
    """``check(raw) -> (rows, [(line number, message)])``; blank lines are not rows."""

    def __init__(self, columns: Sequence[tuple[str, str]], *, check_keys: bool = True) -> None:
        fields = [(name, _field_type(t)) for name, t in columns]
        row = msgspec.defstruct(
            "SinkRow", fields, forbid_unknown_fields=check_keys, gc=False, frozen=True
        )
        self._decoder = msgspec.json.Decoder(row, strict=False)

    def check(self, raw: bytes) -> tuple[int, list[tuple[int, str]]]:
        try:
            return len(self._decoder.decode_lines(raw)), []
        except (msgspec.DecodeError, UnicodeDecodeError):
            pass  # some line is bad: find which, line by line (rare, so slower is fine)
        rows, errors = 0, []
        decode = self._decoder.decode
        for number, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            rows += 1
            try:
                decode(line)
            except msgspec.DecodeError as e:
                errors.append((number, str(e)))
            except UnicodeDecodeError as e:
                errors.append((number, f"DecodeError: invalid UTF-8 at byte {e.start}"))
        return rows, errors


class DropSink:
    """Checks and discards rows requests; counts them and times itself. Thread-safe."""

    def __init__(
        self,
        columns: Sequence[tuple[str, str]],
        stats: Stats,
        *,
        check_keys: bool = True,
        check_rows: bool = True,
    ) -> None:
        """``check_rows`` off: count the lines of each (inflated) body without typing them,
        to measure what the check costs (bad rows then go unreported)."""
        self.checker = RowTypeChecker(columns, check_keys=check_keys)
        self.check_rows = check_rows
        self._stats = stats
        self._lock = threading.Lock()
        self._requests = 0
        self._rows = 0
        self._rejected = 0
        self._wire = 0
        self._raw = 0
        self._inflate_s = 0.0
        self._check_s = 0.0
        self._total_s = 0.0
        self._times: deque[float] = deque(maxlen=KEPT_TIMES)
        self._kept_errors: list[dict[str, Any]] = []

    def take(
        self,
        key: tuple[str, str, str, str],
        raw: bytes,
        *,
        wire_bytes: int,
        offset_token: str | None,
        started: float,
        inflate_s: float,
    ) -> None:
        """Check ``raw`` (the inflated body), count it against channel ``key``, drop it.

        ``started`` is ``time.perf_counter()`` when the handler began and ``inflate_s`` the
        time it took to inflate the body: both go into the sink's own time.
        """
        t0 = time.perf_counter()
        if self.check_rows:
            rows, errors = self.checker.check(raw)
        else:  # lines, less the empty ones (the SDK ends every chunk with a newline)
            rows = raw.count(b"\n") + (not raw.endswith(b"\n")) - raw.count(b"\n\n")
            errors = []
        t1 = time.perf_counter()
        messages = [f"line {n}: {why}" for n, why in errors]
        self._stats.dropped(key, rows, messages, offset_token=offset_token)
        total = time.perf_counter() - started
        with self._lock:
            self._requests += 1
            self._rows += rows - len(errors)
            self._rejected += len(errors)
            self._wire += wire_bytes
            self._raw += len(raw)
            self._inflate_s += inflate_s
            self._check_s += t1 - t0
            self._total_s += total
            self._times.append(total)
            room = MAX_KEPT_ERRORS - len(self._kept_errors)
            self._kept_errors += [
                {"channel": key[3], "line": n, "message": why} for n, why in errors[:room]
            ]

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            times = sorted(self._times)
            n, mb = self._requests, self._raw / 1e6
            return {
                "requests": n,
                "check_rows": self.check_rows,
                "rows_dropped": self._rows,
                "rows_rejected": self._rejected,
                "bytes_wire": self._wire,
                "bytes_raw": self._raw,
                "seconds": round(self._total_s, 4),
                "inflate_seconds": round(self._inflate_s, 4),
                "check_seconds": round(self._check_s, 4),
                "ms_per_request": round(self._total_s * 1e3 / n, 3) if n else None,
                "ms_per_request_p50": _ms_at(times, 50),
                "ms_per_request_p99": _ms_at(times, 99),
                "ms_per_mb": round(self._total_s * 1e3 / mb, 3) if mb else None,
                "inflate_ms_per_mb": round(self._inflate_s * 1e3 / mb, 3) if mb else None,
                "check_ms_per_mb": round(self._check_s * 1e3 / mb, 3) if mb else None,
                "errors": list(self._kept_errors),
            }
