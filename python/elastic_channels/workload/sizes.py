"""Bounds: a range's ends, and what a row and the replay table may take at most.

The bounds are upper bounds on the rendered JSON, checked before anything is resolved,
so a file asking for 8192 entries of 16 MB strings is refused with a message rather
than exhausting memory.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import msgspec

from .builtin import builtin_table
from .errors import Path, WorkloadError
from .model import DEFAULT_ALPHABET, ArrayTemplate, Builtin, Choice, Range, Text
from .types import DATE, FLOAT, NUMBER, SnowflakeType
from .values import EXACT, FLOAT_DIGITS, _date, coerce, fits_scale, number_value, to_decimal

if TYPE_CHECKING:
    from .model import CheckedWorkload, Field

#: At most this many bytes of rendered values per row, and in the whole replay table.
MAX_ROW_BYTES = 16 * 2**20
MAX_TABLE_BYTES = 512 * 2**20
#: Bytes a dynamic value renders to at most: quotes, a 128-character run id escaped
#: as \u00XX, separators, a worker id and a 19-digit sequence number.
DYNAMIC_BYTES = {"unique_id": 2 + 128 * 6 + 32, "run_id": 2 + 128 * 6, "worker_id": 12}
DYNAMIC_BYTES["send_time"] = 32


def range_scale(r: Range, t: SnowflakeType | None) -> int:
    """Digits after the point of a range's values: NUMBER's scale, else ``scale`` or 0."""
    if t is not None and t.kind == NUMBER:
        assert t.scale is not None
        return t.scale
    return r.scale or 0


def range_bound(r: Range, t: SnowflakeType | None, path: Path, value: Any) -> Any:
    """``value`` (a range's min or max) checked: a date for DATE, else a Decimal with at
    most the range's scale, that the column holds exactly."""
    if t is not None and t.kind == DATE:
        return _date(value, path)
    d = to_decimal(value, path)
    scale = range_scale(r, t)
    if not fits_scale(d, scale):
        raise WorkloadError(f"{d} has more decimal places than the scale ({scale})", path=path)
    if t is not None and t.kind == NUMBER:
        number_value(d, t, path)
    floats = scale > 0 or (t is not None and t.kind == FLOAT)
    if floats and abs(d.scaleb(scale, context=EXACT)) >= 10**FLOAT_DIGITS:
        raise WorkloadError(
            f"{d} at scale {scale} needs more than {FLOAT_DIGITS} digits; range values "
            "are written as JSON floats, exact to that",
            path=path,
        )
    return d


def _rendered(value: Any) -> int:
    return len(msgspec.json.encode(value))


def max_len(f: Field, t: SnowflakeType | None) -> int:
    """An upper bound on the bytes a value of ``f`` renders to."""
    source = f.source
    if source in DYNAMIC_BYTES:
        return DYNAMIC_BYTES[source]
    if source == "constant":
        return _rendered(coerce(t, f.constant, ()))
    if source == "choice":
        assert isinstance(f.choice, Choice)
        alternatives = f.choice.alternatives()
        return max(_rendered(coerce(t, v, ())) for w, _ in alternatives for v in w.values)
    if source == "range":
        assert isinstance(f.range, Range)
        if isinstance(f.range.min, dt.date) or (t is not None and t.kind == DATE):
            return 12
        ends = [to_decimal(f.range.min, ()), to_decimal(f.range.max, ())]
        return max(len(str(abs(e))) for e in ends) + 24
    if source == "text":
        assert isinstance(f.text, Text)
        x = f.text
        if x.words is not None:
            widest = max(_rendered(word) - 1 for word in x.words)  # a space for a quote
        else:
            widest = max(_rendered(ch) - 2 for ch in x.alphabet or DEFAULT_ALPHABET)
        return _rendered(x.prefix) + x.max_length * widest
    if source == "object":
        assert isinstance(f.object, dict)
        fields = f.object.items()
        return 2 + sum(_rendered(k) + 2 + max_len(v, None) for k, v in fields)
    if source == "array":
        a = f.array
        assert isinstance(a, ArrayTemplate)
        if a.items is not None:
            return 2 + sum(max_len(item, None) + 1 for item in a.items)
        assert a.of is not None and a.max_length is not None
        return 2 + a.max_length * (max_len(a.of, None) + 1)
    if source == "builtin":
        spec = getattr(f, "builtin", None)
        assert isinstance(spec, Builtin)
        table = builtin_table(spec.table)
        assert table is not None
        return max(_rendered(v) for v in set(table.column(spec.field)))
    raise AssertionError(source)


def check_sizes(w: CheckedWorkload, entries: int) -> None:
    """Refuses a workload whose rows or replay table could outgrow the limits, naming
    the column that takes the most."""
    row = table = 0
    widest: tuple[int, int] = (0, 0)  # (bytes, column index) of the widest table column
    for i, c in enumerate(w.columns):
        n = max_len(c.spec, c.type) + _rendered(c.name) + 2
        row += n
        if not c.spec.dynamic:
            table += n
            widest = max(widest, (n, i))
        if row > MAX_ROW_BYTES:
            raise WorkloadError(
                f"a row could take more than {MAX_ROW_BYTES // 2**20} MiB by this column",
                path=("columns", i, c.source),
                column=c.name,
            )
    if table * entries > MAX_TABLE_BYTES:
        n, i = widest
        raise WorkloadError(
            f"the replay table could take {table * entries / 2**20:.0f} MiB ({entries} entries "
            f"of up to {table} bytes, {n} of them this column's), more than "
            f"{MAX_TABLE_BYTES // 2**20} MiB: use shorter values or fewer entries",
            path=("columns", i, w.columns[i].source),
            column=w.columns[i].name,
        )
