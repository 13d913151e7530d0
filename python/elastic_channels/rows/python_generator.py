"""The pure-Python row generator: the fallback path and the byte-parity oracle.

It builds msgspec Structs and encodes them with ``encode_lines``, exactly as the SDK's
public ``append_rows`` would; the native ``elastic_native.ResortGenerator`` must write
the same bytes. Its argument checks raise the same classes as the native one.
"""

from __future__ import annotations

import datetime as _dt
import functools
import operator

import msgspec

from ..billable import rendered_value_bytes
from ..model.schema import (
    EPOCH,
    MAX_BATCH_ROWS,
    MAX_RUN_ID_CHARS,
    MAX_SALE_TIME_US,
    MAX_SEQ,
    MAX_WORKER_ID,
    MIN_SALE_TIME_US,
    TXID_SEPARATOR,
    ResortSale,
)
from ..model.table import ROW_FIELDS, TABLE_LENGTH, WORKER_STRIDE


def _int_arg(name: str, value: object, lo: int, hi: int) -> int:
    try:
        v = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, got {v}")
    return v


def _check_run_id(run_id: object) -> str:
    if not isinstance(run_id, str):
        raise TypeError(f"run_id must be a str, got {type(run_id).__name__}")
    try:
        run_id.encode("utf-8")
    except UnicodeEncodeError as e:
        raise UnicodeEncodeError(
            e.encoding, e.object, e.start, e.end, f"run_id: {e.reason}"
        ) from None
    if len(run_id) > MAX_RUN_ID_CHARS:
        raise ValueError(f"run_id must be at most {MAX_RUN_ID_CHARS} characters, got {len(run_id)}")
    return run_id


def check_generator_args(run_id: object, worker_id: object) -> None:
    """Raise as the generators would for this ``run_id`` and ``worker_id``."""
    _check_run_id(run_id)
    _int_arg("worker_id", worker_id, 0, MAX_WORKER_ID)


def sale_time(sale_time_us: object) -> _dt.datetime:
    """The UTC datetime of ``sale_time_us`` (Unix epoch microseconds), checked."""
    us = _int_arg("sale_time_us", sale_time_us, MIN_SALE_TIME_US, MAX_SALE_TIME_US)
    return EPOCH + _dt.timedelta(microseconds=us)


# --- the generator ----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _middle_len_prefix_sums() -> list[int]:
    """Prefix sums of each entry's rendered length (its eight values, as one JSON
    array, which adds the same brackets and commas every row's keys replace)."""
    sums = [0]
    for fields in ROW_FIELDS:
        sums.append(sums[-1] + len(_ENCODER.encode(fields)))
    return sums


@functools.lru_cache(maxsize=1)
def _values_prefix_sums() -> list[int]:
    """Prefix sums of each entry's billable bytes (its eight values, by the rule of
    :mod:`..billable`)."""
    sums = [0]
    for fields in ROW_FIELDS:
        sums.append(sums[-1] + sum(rendered_value_bytes(_ENCODER.encode(v)) for v in fields))
    return sums


def span(sums: list[int], entries: int, start: int, n: int) -> int:
    """The sum over the ``n`` entries from ``start`` (wrapping round ``entries``) of what
    the prefix sums ``sums`` add up."""
    full, rest = divmod(n, entries)
    end = start + rest
    part = (
        sums[end] - sums[start]
        if end <= entries
        else sums[entries] - sums[start] + sums[end - entries]
    )
    return full * sums[entries] + part


def _digits_in_range(start: int, n: int) -> int:
    """Total decimal digits of the integers ``start .. start + n - 1``."""
    total, lo, end = 0, start, start + n
    while lo < end:
        width = len(str(lo))
        hi = min(end, 10**width)
        total += (hi - lo) * width
        lo = hi
    return total


_ENCODER = msgspec.json.Encoder()


class ResortGenerator:
    """Deterministic sales for one worker: the pure-Python path.

    Row ``seq`` replays ``TABLE[(worker_offset + seq) % TABLE_LENGTH]`` with TXID
    ``f"{run_id}-{worker_id}-{seq}"``, unique across every (run_id, worker_id, seq).
    """

    __slots__ = ("_last_billable", "_offset", "_run_id", "_seq", "_txid_prefix", "_worker_id")

    def __init__(self, run_id: str, worker_id: int, *, start_seq: int = 0) -> None:
        self._run_id = _check_run_id(run_id)
        self._worker_id = _int_arg("worker_id", worker_id, 0, MAX_WORKER_ID)
        self._seq = _int_arg("start_seq", start_seq, 0, MAX_SEQ)
        self._offset = self._worker_id * WORKER_STRIDE % TABLE_LENGTH
        self._txid_prefix = f"{run_id}{TXID_SEPARATOR}{self._worker_id}{TXID_SEPARATOR}"
        self._last_billable: int | None = None

    @property
    def seq(self) -> int:
        """The sequence number of the next row."""
        return self._seq

    @property
    def last_billable_bytes(self) -> int | None:
        """The billable bytes of the last batch made (None before the first), counted
        from the table's sums as it was made, not by reading its rows again."""
        return self._last_billable

    def _billable(self, n: int, t: _dt.datetime) -> int:
        if n == 0:
            return 0
        # per row: TXID's run id, worker id and separators (its seq digits below),
        # SALE_TIME's text, RUN_ID, WORKER_ID; then the eight table values
        run_id = len(self._run_id.encode("utf-8"))
        worker = len(str(self._worker_id))
        fixed = 2 * run_id + 2 * worker + 2 * len(TXID_SEPARATOR)
        fixed += rendered_value_bytes(_ENCODER.encode(t))
        start = (self._offset + self._seq) % TABLE_LENGTH
        middle = span(_values_prefix_sums(), TABLE_LENGTH, start, n)
        return n * fixed + middle + _digits_in_range(self._seq, n)

    def billable_len(self, n: int, sale_time_us: int) -> int:
        """The billable bytes of ``self.next_batch(n, sale_time_us)`` (the values'
        bytes, by the rule of :mod:`..billable`), computed without making the rows."""
        n = _int_arg("n", n, 0, MAX_BATCH_ROWS)
        t = sale_time(sale_time_us)
        if n > MAX_SEQ + 1 - self._seq:
            raise ValueError(f"n={n} would carry seq past {MAX_SEQ} (next seq is {self._seq})")
        return self._billable(n, t)

    def next_rows(self, n: int, sale_time_us: int) -> list[ResortSale]:
        """The next ``n`` sales, all stamped ``sale_time_us``.

        Arguments are checked in order (``n``, then ``sale_time_us``), then whether
        ``n`` more rows fit below ``MAX_SEQ``; the native generator checks alike.
        """
        n = _int_arg("n", n, 0, MAX_BATCH_ROWS)
        t = sale_time(sale_time_us)
        start = self._seq
        if n > MAX_SEQ + 1 - start:
            raise ValueError(f"n={n} would carry seq past {MAX_SEQ} (next seq is {start})")
        billable = self._billable(n, t)
        prefix, run_id, worker_id = self._txid_prefix, self._run_id, self._worker_id
        base = self._offset
        rows = [
            ResortSale(
                prefix + str(s),
                *ROW_FIELDS[(base + s) % TABLE_LENGTH],
                t,
                run_id,
                worker_id,
            )
            for s in range(start, start + n)
        ]
        self._seq = start + n
        self._last_billable = billable
        return rows

    def batch_len(self, n: int, sale_time_us: int) -> int:
        """``len(self.next_batch(n, sale_time_us))``, computed without making the rows
        (so a caller that sends row objects can still meter exact bytes)."""
        n = _int_arg("n", n, 0, MAX_BATCH_ROWS)
        t = sale_time(sale_time_us)
        if n > MAX_SEQ + 1 - self._seq:
            raise ValueError(f"n={n} would carry seq past {MAX_SEQ} (next seq is {self._seq})")
        if n == 0:
            return 0
        sums = _middle_len_prefix_sums()
        # Everything in a row but TXID's digits and the eight table columns.
        fixed = (
            len(_ENCODER.encode(ResortSale("", *ROW_FIELDS[0], t, self._run_id, self._worker_id)))
            - (sums[1] - sums[0])
            + len(_ENCODER.encode(self._txid_prefix))
            - 2  # the prefix's quotes are the TXID's, already counted
            + 1  # newline
        )
        start = (self._offset + self._seq) % TABLE_LENGTH
        full, rest = divmod(n, TABLE_LENGTH)
        end = start + rest
        span = (
            sums[end] - sums[start]
            if end <= TABLE_LENGTH
            else (sums[TABLE_LENGTH] - sums[start] + sums[end - TABLE_LENGTH])
        )
        middle = full * sums[TABLE_LENGTH] + span
        return n * fixed + middle + _digits_in_range(self._seq, n)

    def next_batch(self, n: int, sale_time_us: int) -> bytes:
        """The next ``n`` sales as NDJSON, exactly as msgspec ``encode_lines`` writes them."""
        return _ENCODER.encode_lines(self.next_rows(n, sale_time_us))
