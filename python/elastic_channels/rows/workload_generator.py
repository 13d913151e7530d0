"""Any workload's rows on the msgspec path: the fallback and the byte-parity oracle.

Rows are msgspec Structs (one Struct type per workload, its fields the columns in order,
named as the columns are; dicts when a name cannot be a field's) encoded with
``encode_lines``, as the SDK's public
``append_rows`` would encode them; ``elastic_native.WorkloadGenerator`` must write the
same bytes. Arguments are checked as the resort generator checks them, with the same
exception classes and messages.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import msgspec

from ..billable import rendered_value_bytes
from ..model.schema import MAX_BATCH_ROWS, MAX_SEQ, MAX_WORKER_ID, TXID_SEPARATOR
from ..workload.replay import (
    RUN_ID,
    SEND_TIME,
    SEQ,
    TEXT,
    WORKER_ID,
    ResolvedWorkload,
    send_time_value,
)
from .python_generator import _check_run_id, _digits_in_range, _int_arg, sale_time, span

_ENCODER = msgspec.json.Encoder()


def row_type(resolved: ResolvedWorkload) -> Callable[..., Any]:
    """What makes a row of ``resolved`` from its values in column order: a Struct with a
    field per column, or (when a column's name holds ``"`` or ``\\``, which msgspec does
    not take as a field name) a function making a dict, which msgspec encodes alike."""
    names = [c.name for c in resolved.workload.columns]
    if any('"' in n or "\\" in n for n in names):
        return lambda *values: dict(zip(names, values, strict=True))
    fields = [f"c{i}" for i in range(len(names))]
    return msgspec.defstruct(
        "WorkloadRow",
        [(f, Any) for f in fields],
        rename=dict(zip(fields, names, strict=True)),
        frozen=True,
        gc=False,
    )


class WorkloadGenerator:
    """Deterministic rows of one worker for a resolved workload: the pure-Python path.

    Row ``seq`` replays entry ``(worker_id * stride + seq) % entries``; its unique id
    (if the workload has one) is ``f"{run_id}-{worker_id}-{seq}"``.
    """

    def __init__(
        self, resolved: ResolvedWorkload, run_id: str, worker_id: int, *, start_seq: int = 0
    ) -> None:
        self._run_id = _check_run_id(run_id)
        self._worker_id = _int_arg("worker_id", worker_id, 0, MAX_WORKER_ID)
        self._seq = _int_arg("start_seq", start_seq, 0, MAX_SEQ)
        self._resolved = resolved
        table = resolved.table
        self._offset = self._worker_id * table.stride % table.entries
        self._prefix = f"{run_id}{TXID_SEPARATOR}{self._worker_id}{TXID_SEPARATOR}"
        self._row = row_type(resolved)
        self._order, self._batch_parts = self._layout()
        self._last_billable: int | None = None

    def _layout(self) -> tuple[Callable[[tuple], Any], list[tuple[str, Any]]]:
        """How a row's values are picked from ``entry + batch values + (unique id,)``."""
        parts = self._resolved.parts
        n_entry = sum(1 for kind, _ in parts if kind == "entry")
        batch = [p for p in parts if p[0] not in ("entry", "unique_id")]
        order, j = [], 0
        for kind, arg in parts:
            if kind == "entry":
                order.append(arg)
            elif kind == "unique_id":
                order.append(n_entry + len(batch))
            else:
                order.append(n_entry + j)
                j += 1
        if len(order) == 1:
            only = order[0]
            return (lambda values: (values[only],)), batch
        return operator.itemgetter(*order), batch

    @property
    def seq(self) -> int:
        """The sequence number of the next row."""
        return self._seq

    @property
    def last_billable_bytes(self) -> int | None:
        """The billable bytes of the last batch made (None before the first), counted
        from the table's sums as it was made, not by reading its rows again."""
        return self._last_billable

    def billable_len(self, n: int, sale_time_us: int) -> int:
        """The billable bytes of ``self.next_batch(n, sale_time_us)`` (the values'
        bytes, by the rule of :mod:`..billable`), computed without making the rows."""
        n, t = self._check_batch(n, sale_time_us)
        return self._billable(n, t)

    def _billable(self, n: int, t: Any) -> int:
        if n == 0:
            return 0
        table = self._resolved.table
        fixed, seqs = table.const_value_bytes, 0
        for kind, payload in table.template:
            if kind == RUN_ID:
                fixed += len(self._run_id.encode("utf-8"))
            elif kind == WORKER_ID:
                fixed += len(str(self._worker_id))
            elif kind == SEND_TIME:
                fixed += rendered_value_bytes(_ENCODER.encode(send_time_value(payload.decode(), t)))
            elif kind == SEQ:
                seqs += 1
        start = (self._offset + self._seq) % table.entries
        values = span(self._resolved.entry_billable, table.entries, start, n)
        return n * fixed + values + seqs * _digits_in_range(self._seq, n)

    def _check_batch(self, n: int, sale_time_us: int) -> tuple[int, Any]:
        n = _int_arg("n", n, 0, MAX_BATCH_ROWS)
        t = sale_time(sale_time_us)
        if n > MAX_SEQ + 1 - self._seq:
            raise ValueError(f"n={n} would carry seq past {MAX_SEQ} (next seq is {self._seq})")
        return n, t

    def next_rows(self, n: int, sale_time_us: int) -> list[Any]:
        """The next ``n`` rows, all sent at ``sale_time_us``, as Structs (or dicts)."""
        n, t = self._check_batch(n, sale_time_us)
        billable = self._billable(n, t)
        batch: list[Any] = []
        for kind, arg in self._batch_parts:
            if kind == "constant":
                batch.append(arg)
            elif kind == "send_time":
                batch.append(send_time_value(arg, t))
            elif kind == "run_id":
                batch.append(self._run_id)
            else:
                batch.append(str(self._worker_id) if arg else self._worker_id)
        fixed = tuple(batch)
        values, entries = self._resolved.entry_values, self._resolved.table.entries
        row, order, prefix, base, start = (
            self._row,
            self._order,
            self._prefix,
            self._offset,
            self._seq,
        )
        rows = [
            row(*order((*values[(base + s) % entries], *fixed, prefix + str(s))))
            for s in range(start, start + n)
        ]
        self._seq = start + n
        self._last_billable = billable
        return rows

    def next_batch(self, n: int, sale_time_us: int) -> bytes:
        """The next ``n`` rows as NDJSON, exactly as msgspec ``encode_lines`` writes them."""
        return _ENCODER.encode_lines(self.next_rows(n, sale_time_us))

    def batch_len(self, n: int, sale_time_us: int) -> int:
        """``len(self.next_batch(n, sale_time_us))``, computed from the replay table's
        template and piece lengths without making the rows."""
        n, t = self._check_batch(n, sale_time_us)
        if n == 0:
            return 0
        run_id = len(_ENCODER.encode(self._run_id)) - 2
        fixed = 0
        seqs = 0
        for kind, payload in self._resolved.table.template:
            if kind == TEXT:
                fixed += len(payload)
            elif kind == RUN_ID:
                fixed += run_id
            elif kind == WORKER_ID:
                fixed += len(str(self._worker_id))
            elif kind == SEND_TIME:
                fixed += len(_ENCODER.encode(send_time_value(payload.decode(), t)))
            elif kind == SEQ:
                seqs += 1
        sums, entries = self._resolved.entry_lengths, self._resolved.table.entries
        start = (self._offset + self._seq) % entries
        full, rest = divmod(n, entries)
        end = start + rest
        span = (
            sums[end] - sums[start]
            if end <= entries
            else sums[entries] - sums[start] + sums[end - entries]
        )
        return n * fixed + full * sums[entries] + span + seqs * _digits_in_range(self._seq, n)
