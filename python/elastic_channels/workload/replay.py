"""A resolved workload: the replay table the native generator takes, and the values the
msgspec generator builds its rows from.

A row is the *template*'s tokens in order:

- ``("text", b"...")``: bytes written as they are;
- ``("slot", b"")``: the next table column's piece for the row's entry (the k-th slot
  token is column k of ``ids``);
- ``("seq", b"")``: the row's sequence number, in decimal;
- ``("run_id", b"")``: the run id, JSON-escaped, without quotes;
- ``("worker_id", b"")``: the worker id, in decimal;
- ``("send_time", b"tz" | b"ntz" | b"date")``: the batch's send time, quoted, as msgspec
  writes a UTC datetime (``tz``), a naive one (``ntz``) or a date.

The last token is text ending in the row's newline, and no other byte of the row is one.
A piece is a column's value rendered by msgspec, with the keys and punctuation around it
that do not depend on the row's inputs folded in (``,"DEVICE_ID":"dev-0012"``), so the
native side only copies bytes: it never renders a number and holds no business logic.
"""

from __future__ import annotations

import array
import ctypes
import datetime as dt
from typing import Any

import msgspec

from ..billable import rendered_value_bytes
from .builtin import builtin_table
from .check import entries_of
from .model import Builtin, CheckedWorkload
from .resolve import default_stride, iter_columns
from .types import DATE, TIMESTAMP_NTZ, VARCHAR
from .values import coerce

TEXT, SLOT, SEQ, RUN_ID, WORKER_ID, SEND_TIME = (
    "text",
    "slot",
    "seq",
    "run_id",
    "worker_id",
    "send_time",
)
#: How a send-time column of each type is written: ``tz`` for TIMESTAMP_TZ and VARCHAR.
SEND_TIME_FORMS = {TIMESTAMP_NTZ: b"ntz", DATE: b"date"}

Token = tuple[str, bytes]
_encode = msgspec.json.encode


class ReplayTable(msgspec.Struct, frozen=True):
    """What ``elastic_native.WorkloadTable`` takes: ``entries`` resolved entries, each
    ``slots`` piece ids (``ids``: native-endian unsigned 32-bit, entry after entry) into
    ``pieces``, and the row ``template``. Row ``seq`` of worker ``w`` replays entry
    ``(w * stride + seq) % entries``. What its values bill (``elastic_channels/billable.py``):
    ``value_bytes[k]`` the billable bytes of piece ``k``'s value, ``const_value_bytes``
    those of a row's text tokens (constants, a unique id's separators)."""

    entries: int
    stride: int
    pieces: list[bytes]
    ids: bytes
    template: list[Token]
    value_bytes: list[int] = []
    const_value_bytes: int = 0

    @property
    def slots(self) -> int:
        return sum(1 for kind, _ in self.template if kind == SLOT)

    def entry_ids(self, i: int) -> list[int]:
        """The piece ids of entry ``i``."""
        ids = array.array("I")
        ids.frombytes(self.ids)
        return list(ids[i * self.slots : (i + 1) * self.slots])


class ResolvedWorkload:
    """A workload resolved: the native side's ``table``; per entry the table columns'
    values (``entry_values``, slot order) and the rendered length of its pieces
    (``entry_lengths`` as prefix sums) and its billable bytes (``entry_billable``, prefix
    sums) for the msgspec side; and for each column how its
    value is made (``parts``: ``("entry", k)``, ``("constant", value)``,
    ``("unique_id", None)``, ``("run_id", None)``, ``("worker_id", quoted)``,
    ``("send_time", form)``)."""

    __slots__ = ("_native", "entry_billable", "entry_lengths", "entry_values", "parts", "table",
                 "workload")  # fmt: skip

    def __init__(
        self,
        workload: CheckedWorkload,
        table: ReplayTable,
        entry_values: list[tuple[Any, ...]],
        entry_lengths: list[int],
        parts: list[tuple[str, Any]],
        entry_billable: list[int] | None = None,
    ) -> None:
        self.workload = workload
        self.table = table
        self.entry_values = entry_values
        self.entry_lengths = entry_lengths
        self.entry_billable = entry_billable or [0] * len(entry_lengths)
        self.parts = parts
        self._native: Any = None

    def native_table(self) -> Any:
        """The table as ``elastic_native.WorkloadTable``, made on first use and kept (every
        native generator of this workload shares it). Raises ImportError without the
        native module."""
        if self._native is None:
            self._native = native_table(self.table)
        return self._native


def native_table(t: ReplayTable) -> Any:
    """``t`` as an ``elastic_native.WorkloadTable`` (ImportError without the module)."""
    import elastic_native

    return elastic_native.WorkloadTable(
        t.entries,
        t.stride,
        t.pieces,
        t.ids,
        t.template,
        value_bytes=t.value_bytes,
        const_value_bytes=t.const_value_bytes,
    )


class WorkloadReplay:
    """What every generator of one workload in a process shares, each part made when
    first asked for: the msgspec path's :class:`ResolvedWorkload` (``resolved()``), the
    native path's ``WorkloadTable`` (``native_table()``). A process that only writes
    natively resolves once and keeps only the native table, not the Python values."""

    __slots__ = ("_native", "_resolved", "workload")

    def __init__(self, workload: CheckedWorkload) -> None:
        self.workload = workload
        self._resolved: ResolvedWorkload | None = None
        self._native: Any = None

    def resolved(self) -> ResolvedWorkload:
        """The workload resolved (once) for the msgspec path."""
        if self._resolved is None:
            self._resolved = resolve(self.workload)
        return self._resolved

    def native_table(self) -> Any:
        """The workload's ``elastic_native.WorkloadTable`` (made once; ImportError
        without the native module)."""
        if self._native is None:
            if self._resolved is not None:
                self._native = self._resolved.native_table()
            else:
                self._native = native_table(resolve(self.workload, keep_values=False).table)
                _return_freed_memory()
        return self._native


def _return_freed_memory() -> None:
    """Hands the heap's free memory back to the OS where the C library keeps it
    (glibc's ``malloc_trim``): resolving a wide workload makes and drops ~100 MB of
    Python objects once, which would otherwise stay in the worker's RSS."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def _column_tokens(kind: str, sql_kind: str) -> tuple[list[Token], tuple[str, Any]]:
    """The tokens of a dynamic column's value, and its part."""
    if kind == "unique_id":
        tokens = [(TEXT, b'"'), (RUN_ID, b""), (TEXT, b"-"), (WORKER_ID, b"")]
        return [*tokens, (TEXT, b"-"), (SEQ, b""), (TEXT, b'"')], ("unique_id", None)
    if kind == "run_id":
        return [(TEXT, b'"'), (RUN_ID, b""), (TEXT, b'"')], ("run_id", None)
    if kind == "worker_id":
        if sql_kind == VARCHAR:
            return [(TEXT, b'"'), (WORKER_ID, b""), (TEXT, b'"')], ("worker_id", True)
        return [(WORKER_ID, b"")], ("worker_id", False)
    form = SEND_TIME_FORMS.get(sql_kind, b"tz")
    return [(SEND_TIME, form)], ("send_time", form.decode())


def _fold(tokens: list[Token], slots: int) -> tuple[list[Token], list[bytes], list[bytes]]:
    """Folds text into the slots beside it: text before a slot becomes its prefix, text
    between a slot and a dynamic token its suffix; the rest stays text. Returns the
    template and each slot's prefix and suffix."""
    out: list[Token] = []
    prefix, suffix = [b""] * slots, [b""] * slots
    pending, k = b"", 0
    for kind, payload in tokens:
        if kind == TEXT:
            pending += payload
        elif kind == SLOT:
            prefix[k], pending, k = pending, b"", k + 1
            out.append((SLOT, b""))
        else:
            if pending and out and out[-1][0] == SLOT:
                suffix[k - 1] += pending
            elif pending:
                out.append((TEXT, pending))
            pending = b""
            out.append((kind, payload))
    out.append((TEXT, pending))
    return out, prefix, suffix


def _stride(w: CheckedWorkload, entries: int) -> int:
    for c in w.columns:
        if isinstance(c.spec.builtin, Builtin):
            table = builtin_table(c.spec.builtin.table)
            assert table is not None
            return table.stride
    return default_stride(entries)


def resolve(w: CheckedWorkload, *, keep_values: bool = True) -> ResolvedWorkload:
    """``w`` resolved into its replay table and row values (deterministic: every worker
    that resolves the same workload gets the same table). Without ``keep_values`` the
    values are let go column by column as they are rendered (``entry_values`` is then
    empty): for a table made only to hand to the native side."""
    entries = entries_of(w)
    tokens: list[Token] = []
    parts: list[tuple[str, Any]] = []
    slot_of: dict[str, int] = {}
    const_values = 0  # billable bytes of the values the text tokens hold
    for i, c in enumerate(w.columns):
        tokens.append((TEXT, (b"{" if i == 0 else b",") + _encode(c.name) + b":"))
        if c.spec.dynamic:
            more, part = _column_tokens(c.source, c.type.kind)
            tokens += more
            parts.append(part)
            if c.source == "unique_id":  # its two separators; run id, ids: the generator's
                const_values += sum(len(p) for k, p in more if k == TEXT and p != b'"')
        elif c.source == "constant":
            value = coerce(c.type, c.spec.constant, ())
            tokens.append((TEXT, _encode(value)))
            parts.append(("constant", value))
            const_values += rendered_value_bytes(_encode(value))
        else:
            tokens.append((SLOT, b""))
            parts.append(("entry", len(slot_of)))
            slot_of[c.name] = len(slot_of)
    tokens.append((TEXT, b"}\n"))
    slots = len(slot_of)
    template, prefix, suffix = _fold(tokens, slots)

    pieces: list[bytes] = []
    piece_values: list[int] = []
    index: dict[bytes, int] = {}
    ids = array.array("I", bytes(4 * entries * slots))
    lengths = [0] * entries
    billable = [0] * entries
    kept: list[list[Any]] = []
    for name, column in iter_columns(w):
        k = slot_of.get(name)
        if k is None:
            continue  # a constant: in the template
        rendered: dict[int, tuple[bytes, int]] = {}  # by id(): a choice's values repeat
        for i, value in enumerate(column):
            got = rendered.get(id(value))
            if got is None:
                json = _encode(value)
                got = rendered[id(value)] = (
                    prefix[k] + json + suffix[k],
                    rendered_value_bytes(json),
                )
            text, value_bytes = got
            piece = index.get(text)
            if piece is None:
                piece = index[text] = len(pieces)
                pieces.append(text)
                piece_values.append(value_bytes)
            ids[i * slots + k] = piece
            lengths[i] += len(text)
            billable[i] += value_bytes
        if keep_values:
            kept.append(column)
    sums = [0] * (entries + 1)
    for i, n in enumerate(lengths):
        sums[i + 1] = sums[i] + n
    billable_sums = [0] * (entries + 1)
    for i, n in enumerate(billable):
        billable_sums[i + 1] = billable_sums[i] + n
    rows: list[tuple[Any, ...]] = []
    if keep_values:
        rows = list(zip(*kept, strict=True)) or [() for _ in range(entries)]
    table = ReplayTable(
        entries, _stride(w, entries), pieces, ids.tobytes(), template, piece_values, const_values
    )
    return ResolvedWorkload(w, table, rows, sums, parts, billable_sums)


def send_time_value(form: str, sale_time: dt.datetime) -> Any:
    """The Python value msgspec renders as a send time of ``form`` (``sale_time`` is UTC)."""
    if form == "ntz":
        return sale_time.replace(tzinfo=None)
    if form == "date":
        return sale_time.date()
    return sale_time
