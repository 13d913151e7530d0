"""What the file's schema cannot say: one source per column, sources that fit the type,
values that fit the type, weights that add up, ``by`` columns that exist, sizes that fit.

``check(spec, origin)`` returns the :class:`CheckedWorkload` or raises the first
:class:`WorkloadError`, naming the column and the key.
"""

from __future__ import annotations

import msgspec

from . import sizes
from .builtin import NAMES as BUILTIN_NAMES
from .builtin import builtin_table
from .errors import Path, WorkloadError
from .model import (
    DEFAULT_ENTRIES,
    MAX_COLUMNS,
    MAX_ENTRIES,
    MAX_NAME_CHARS,
    RESERVED_COLUMN_PREFIX,
    RESERVED_COLUMNS,
    RESERVED_TABLE_PREFIX,
    ArrayTemplate,
    Builtin,
    CheckedColumn,
    CheckedWorkload,
    Choice,
    Column,
    Field,
    Range,
    Text,
    Workload,
)
from .sources import check_choice, check_range, check_text_source
from .types import (
    DATE,
    FLOAT,
    NUMBER,
    TIMESTAMP_NTZ,
    TIMESTAMP_TZ,
    VARCHAR,
    VARIANT,
    SnowflakeType,
    TypeSpellingError,
    parse_type,
)
from .values import check_text, coerce

#: The types each column source may fill (None: every type).
SOURCE_TYPES: dict[str, tuple[str, ...] | None] = {
    "choice": None,
    "constant": None,
    "builtin": None,
    "range": (NUMBER, FLOAT, DATE, VARIANT),
    "text": (VARCHAR, VARIANT),
    "object": (VARIANT,),
    "array": (VARIANT,),
    "unique_id": (VARCHAR,),
    "run_id": (VARCHAR,),
    "worker_id": (NUMBER, VARCHAR),
    "send_time": (TIMESTAMP_TZ, TIMESTAMP_NTZ, DATE, VARCHAR),
}
MAX_ARRAY_LENGTH = 1000


def _name(value: str, path: Path) -> str:
    """A column's, the table's or the pipe's name: 1 to 255 characters, no control
    characters (they would have to be escaped in every SQL statement and JSON key)."""
    check_text(value, path)
    if not 1 <= len(value) <= MAX_NAME_CHARS:
        raise WorkloadError(
            f"must be 1 to {MAX_NAME_CHARS} characters, got {len(value)}", path=path
        )
    bad = next((ch for ch in value if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    if bad is not None:
        raise WorkloadError(
            f"{value!r} holds the control character {bad!r}; names may not", path=path
        )
    return value


def _not_reserved(name: str, path: Path) -> None:
    """A column's name that the landing table keeps for itself is refused, naming it."""
    upper = name.upper()
    if upper in RESERVED_COLUMNS:
        raise WorkloadError(
            f"{name!r} is reserved: the emulator's landing table adds a column of that "
            "name (each row's commit time); call this column something else",
            path=path,
        )
    if upper.startswith(RESERVED_COLUMN_PREFIX):
        raise WorkloadError(
            f"{name!r} is reserved: names starting {RESERVED_COLUMN_PREFIX} are "
            "Snowflake's metadata columns; call this column something else",
            path=path,
        )


class _Checker:
    """Checks one workload, keeping what later columns may refer to."""

    def __init__(self, spec: Workload) -> None:
        self.spec = spec
        #: Earlier choice columns: name -> (type, rendered values it can take).
        self.choices: dict[str, tuple[SnowflakeType, set[bytes]]] = {}
        self.builtin: str | None = None
        #: The column being checked.
        self.index = 0

    def array(self, a: ArrayTemplate, path: Path) -> None:
        if (a.items is None) == (a.of is None):
            raise WorkloadError("give items (fixed elements) or of (a repeated one)", path=path)
        if a.items is not None:
            for key in ("min_length", "max_length"):
                if getattr(a, key) is not None:
                    raise WorkloadError(f"{key} goes with of, not items", path=(*path, key))
            for i, item in enumerate(a.items):
                self.field(item, None, (*path, "items", i))
            return
        if a.min_length is None or a.max_length is None:
            raise WorkloadError("of needs min_length and max_length", path=path)
        if not 0 <= a.min_length <= a.max_length <= MAX_ARRAY_LENGTH:
            raise WorkloadError(
                f"need 0 <= min_length <= max_length <= {MAX_ARRAY_LENGTH}",
                path=(*path, "min_length"),
            )
        assert a.of is not None
        self.field(a.of, None, (*path, "of"))

    def field(self, f: Field, t: SnowflakeType | None, path: Path) -> None:
        """One source of a column (type ``t``) or of a VARIANT field (``t`` None)."""
        found = f.sources()
        if len(found) != 1:
            what = f"{len(found)} ({', '.join(found)})" if found else "none"
            raise WorkloadError(f"needs exactly one source key, got {what}", path=path)
        source = found[0]
        allowed = SOURCE_TYPES[source]
        if t is not None and allowed is not None and t.kind not in allowed:
            raise WorkloadError(
                f"{source} cannot fill a {t} column (it fills {', '.join(allowed)})",
                path=(*path, source),
            )
        sub = (*path, source)
        if source == "choice":
            assert isinstance(f.choice, Choice)
            check_choice(f.choice, t, sub, self.choices)
        elif source == "range":
            assert isinstance(f.range, Range)
            check_range(f.range, t, sub)
        elif source == "text":
            assert isinstance(f.text, Text)
            check_text_source(f.text, t, sub)
        elif source == "constant":
            coerce(t, f.constant, sub)
        elif source == "object":
            assert isinstance(f.object, dict)
            for key, field in f.object.items():
                check_text(key, sub)
                self.field(field, None, (*sub, key))
        elif source == "array":
            assert isinstance(f.array, ArrayTemplate)
            self.array(f.array, sub)
        elif isinstance(f, Column):
            self.column_only(f, t, sub)

    def column_only(self, c: Column, t: SnowflakeType | None, path: Path) -> None:
        if c.source == "worker_id" and t is not None and t.kind == NUMBER:
            assert t.precision is not None
            if t.scale != 0 or t.precision < 10:
                raise WorkloadError(f"worker ids need NUMBER(p,0) with p >= 10, not {t}", path=path)
        earlier = self.spec.columns[: self.index]
        if c.source == "unique_id" and any(o.source == "unique_id" for o in earlier):
            raise WorkloadError("only one column may be the unique_id", path=path)
        if isinstance(c.builtin, Builtin):
            self.builtin_column(c.builtin.table, c.builtin.field, t, path)

    def builtin_column(self, name: str, field: str, t: SnowflakeType | None, path: Path) -> None:
        table = builtin_table(name)
        if table is None:
            known = ", ".join(BUILTIN_NAMES)
            raise WorkloadError(
                f"no builtin table {name!r} (there is {known})", path=(*path, "table")
            )
        if self.builtin not in (None, name):
            raise WorkloadError(f"another column reads builtin table {self.builtin!r}", path=path)
        self.builtin = name
        if field not in table.fields:
            raise WorkloadError(
                f"{name} has no field {field!r} (it has {', '.join(table.fields)})",
                path=(*path, "field"),
            )
        if self.spec.entries not in (None, table.length):
            raise WorkloadError(
                f"builtin table {name} has {table.length} entries; leave entries out",
                path=("entries",),
            )
        for value in set(table.column(field)):
            coerce(t, value, (*path, "field"))

    def run(self, origin: str) -> CheckedWorkload:
        spec = self.spec
        for key in ("name", "table"):
            _name(getattr(spec, key), (key,))
        if spec.table.upper().startswith(RESERVED_TABLE_PREFIX):
            raise WorkloadError(
                f"{spec.table!r} is reserved: tables starting {RESERVED_TABLE_PREFIX} are "
                "the emulator's own; name the table otherwise",
                path=("table",),
            )
        if spec.pipe is not None:
            _name(spec.pipe, ("pipe",))
        check_text(spec.description, ("description",))
        if not spec.description.strip():
            raise WorkloadError("must say what the workload imitates", path=("description",))
        if not 1 <= len(spec.columns) <= MAX_COLUMNS:
            raise WorkloadError(f"needs 1 to {MAX_COLUMNS} columns", path=("columns",))
        if spec.entries is not None and not 1 <= spec.entries <= MAX_ENTRIES:
            raise WorkloadError(f"must be between 1 and {MAX_ENTRIES}", path=("entries",))
        seen: set[str] = set()
        checked = []
        for i, c in enumerate(spec.columns):
            self.index = i
            path: Path = ("columns", i)
            try:
                name = _name(c.name, (*path, "name"))
                _not_reserved(name, (*path, "name"))
                if name in seen:
                    raise WorkloadError(f"{name!r} is declared twice", path=(*path, "name"))
                seen.add(name)
                try:
                    t = parse_type(c.type)
                except TypeSpellingError as e:
                    raise WorkloadError(str(e), path=(*path, "type")) from None
                self.field(c, t, path)
            except WorkloadError as e:
                raise WorkloadError(e.message, path=e.path, column=c.name) from None
            if isinstance(c.choice, Choice):
                values = {
                    msgspec.json.encode(coerce(t, v, path))
                    for w, _ in c.choice.alternatives()
                    for v in w.values
                }
                self.choices[c.name] = (t, values)
            checked.append(CheckedColumn(c, t))
        out = CheckedWorkload(spec, tuple(checked), origin)
        sizes.check_sizes(out, entries_of(out))
        return out


def entries_of(w: CheckedWorkload) -> int:
    """The replay table's length: the builtin table's, else ``entries``, else the default."""
    for c in w.columns:
        if isinstance(c.spec.builtin, Builtin):
            table = builtin_table(c.spec.builtin.table)
            assert table is not None
            return table.length
    return w.spec.entries or DEFAULT_ENTRIES


def check(spec: Workload, origin: str) -> CheckedWorkload:
    """``spec`` checked in full (see the module), or the first :class:`WorkloadError`."""
    return _Checker(spec).run(origin)
