"""A workload as its file declares it: the table, and each column's type and source.

These Structs are the file's schema: ``load`` converts the parsed YAML into them
(unknown keys are refused) and then checks what a schema cannot say (``check``). A
column has exactly one *source*, the key that says where its values come from:

==============  ==============================================================
``choice``      weighted values, optionally with weights that depend on the value
                of an earlier choice column (``by`` + ``cases``)
``range``       uniform numbers (or dates) from ``min`` to ``max``; NUMBER's scale
                comes from the type, FLOAT's and a VARIANT field's from ``scale``
``text``        strings of ``min_length`` to ``max_length`` characters of
                ``alphabet``, after an optional ``prefix``
``constant``    one value in every row
``object``      a VARIANT object: each field a source of its own (nested)
``array``       a VARIANT array: fixed ``items``, or ``of`` repeated
                ``min_length`` to ``max_length`` times
``builtin``     a field of a table the package resolves itself (``resort-sales``)
``unique_id``   ``<run_id>-<worker_id>-<seq>``, unique in the run (``{}``)
``send_time``   when the batch is made (``{}``), as SALE_TIME is
``run_id``      the run's id (``{}``)
``worker_id``   the worker's index (``{}``)
==============  ==============================================================

The first six resolve once, in Python, into a table of ``entries`` rows that every
worker replays (row ``seq`` of worker ``w`` is entry ``(w * stride + seq) % entries``);
the last four are the row's dynamic fields, filled in as rows are written.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .types import SnowflakeType

#: The replay table's default length, and the limits on what a file may ask for.
DEFAULT_ENTRIES = 8192
MAX_ENTRIES = 65536
MAX_COLUMNS = 1000
MAX_NAME_CHARS = 255
#: Column names no workload may declare, whatever their case: the emulator's landing
#: tables add ``_COMMIT_TIME`` (each row's commit time) after the workload's columns.
RESERVED_COLUMNS = ("_COMMIT_TIME",)
#: Snowflake's metadata columns (``METADATA$ROW_LAST_COMMIT_TIME``, ...) start so.
RESERVED_COLUMN_PREFIX = "METADATA$"
#: The emulator's own tables start so (its bookkeeping, in the landing tables' schema).
RESERVED_TABLE_PREFIX = "_EMULATOR_"

#: Sources a column or VARIANT field resolves into the table (no per-row input).
TABLE_SOURCES = ("choice", "range", "text", "constant", "object", "array", "builtin")
#: Sources filled in as rows are written (columns only, never inside a VARIANT).
DYNAMIC_SOURCES = ("unique_id", "send_time", "run_id", "worker_id")
SOURCES = TABLE_SOURCES + DYNAMIC_SOURCES


class _Strict(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    pass


class Weighted(_Strict, frozen=True, kw_only=True):
    """Values and their weights (equal weights when ``weights`` is left out)."""

    values: list[Any]
    weights: list[int | float] | None = None


class Choice(Weighted, frozen=True, kw_only=True):
    """Weighted values. With ``by``, the weights (and values) depend on the value the
    earlier choice column ``by`` took in the same row: ``cases`` maps each of its
    values to a :class:`Weighted`, and ``default`` covers the values ``cases`` leaves out.
    """

    values: list[Any] = []
    by: str | None = None
    cases: dict[Any, Weighted] | None = None
    default: Weighted | None = None

    def alternatives(self) -> list[tuple[Weighted, tuple[Any, ...]]]:
        """Every list of weighted values the choice holds, with its key path under it."""
        if self.by is None:
            return [(self, ())]
        found: list[tuple[Weighted, tuple[Any, ...]]] = [
            (case, ("cases", key)) for key, case in (self.cases or {}).items()
        ]
        if self.default is not None:
            found.append((self.default, ("default",)))
        return found


class Range(_Strict, frozen=True, kw_only=True):
    """Uniform values from ``min`` to ``max``, both included, in steps of
    ``10**-scale`` (dates: in days)."""

    min: Any
    max: Any
    scale: int | None = None


#: The characters of ``text`` when neither ``alphabet`` nor ``words`` is given.
DEFAULT_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class Text(_Strict, frozen=True, kw_only=True):
    """Random strings: ``prefix`` then ``min_length`` to ``max_length`` characters drawn
    from ``alphabet``, or (with ``words``) that many words drawn from ``words``, joined
    by spaces. With ``distinct``, only that many strings are made, and the entries share
    them equally (how often a value repeats is what compression and caches see)."""

    min_length: int
    max_length: int
    alphabet: str | None = None
    words: list[str] | None = None
    prefix: str = ""
    distinct: int | None = None


class Builtin(_Strict, frozen=True, kw_only=True):
    """Field ``field`` of the package's own resolved table ``table``; every column of a
    workload that names one table reads the same entry of it."""

    table: str
    field: str


class Dynamic(_Strict, frozen=True, kw_only=True):
    """The argument of a dynamic source: none (``{}``)."""


class Field(_Strict, frozen=True, kw_only=True):
    """A value source: one of the keys below, set. A VARIANT field is one of these."""

    choice: Choice | UnsetType = UNSET
    range: Range | UnsetType = UNSET
    text: Text | UnsetType = UNSET
    constant: Any = UNSET
    object: dict[str, Field] | UnsetType = UNSET
    array: ArrayTemplate | UnsetType = UNSET

    def sources(self) -> list[str]:
        """The source keys this declaration sets."""
        return [s for s in SOURCES if getattr(self, s, UNSET) is not UNSET]

    @property
    def source(self) -> str:
        """The one source key (``check`` has made sure there is exactly one)."""
        return self.sources()[0]


class ArrayTemplate(_Strict, frozen=True, kw_only=True):
    """A VARIANT array: the fixed ``items``, or ``of`` repeated ``min_length`` to
    ``max_length`` times."""

    items: list[Field] | None = None
    of: Field | None = None
    min_length: int | None = None
    max_length: int | None = None


class Column(Field, frozen=True, kw_only=True):
    """One column: its name, its Snowflake type (``VARCHAR``, ``NUMBER(p,s)``, ...) and
    its source."""

    name: str
    type: str
    builtin: Builtin | UnsetType = UNSET
    # A dynamic source is set by its key alone: ``unique_id: {}``, or ``unique_id:``.
    unique_id: Dynamic | UnsetType | None = UNSET
    send_time: Dynamic | UnsetType | None = UNSET
    run_id: Dynamic | UnsetType | None = UNSET
    worker_id: Dynamic | UnsetType | None = UNSET

    @property
    def dynamic(self) -> bool:
        """Whether the value is filled in per row or batch (not from the table)."""
        return self.source in DYNAMIC_SOURCES


class Workload(_Strict, frozen=True, kw_only=True):
    """A workload file: what the rows imitate, the table they land in, its columns.

    ``entries`` is the replay table's length and ``seed`` seeds its resolution; a
    workload whose columns read a ``builtin`` table takes that table's length.
    """

    name: str
    description: str
    table: str
    columns: list[Column]
    pipe: str | None = None
    entries: int | None = None
    seed: int = 1


class CheckedColumn(msgspec.Struct, frozen=True):
    """A column after ``check``: its declaration and its parsed type."""

    spec: Column
    type: SnowflakeType

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def source(self) -> str:
        return self.spec.source


class CheckedWorkload(msgspec.Struct, frozen=True):
    """A workload that passed every check: what the rest of the package and its callers
    use. ``origin`` is the file it came from (or a label, for one built in code)."""

    spec: Workload
    columns: tuple[CheckedColumn, ...]
    origin: str

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def table(self) -> str:
        """The landing table's name."""
        return self.spec.table

    @property
    def pipe(self) -> str:
        """The pipe's name: as declared, else ``<table>_PIPE``."""
        return self.spec.pipe or f"{self.spec.table}_PIPE"

    @property
    def sql_columns(self) -> tuple[tuple[str, str], ...]:
        """``(name, Snowflake type)`` per column, in order (as ``model.COLUMNS``)."""
        return tuple((c.name, c.type.sql) for c in self.columns)

    def columns_with(self, source: str) -> tuple[CheckedColumn, ...]:
        """The columns whose source is ``source`` (e.g. ``"send_time"``)."""
        return tuple(c for c in self.columns if c.source == source)

    @property
    def unique_id_column(self) -> str | None:
        """The column holding ``<run_id>-<worker_id>-<seq>``, or None (loss unknown)."""
        found = self.columns_with("unique_id")
        return found[0].name if found else None
