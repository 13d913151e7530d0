"""Resolving a workload's table columns: ``entries`` values for each, deterministically.

A column's values depend only on the workload's ``seed``, the column's (or VARIANT
field's) key path and its declaration, never on other columns' draws, so adding a
column leaves the others' values as they were. Per source:

- ``choice``: exact shares (each value gets its weight's share of the entries, the
  remainders going to the largest fractions), then shuffled. With ``by``, the same
  within each group of entries whose ``by`` column took one value.
- ``range``: uniform draws of whole steps (``10**-scale``; days for dates).
- ``text``: uniform lengths, uniform characters.
- ``object`` / ``array``: each field or element resolved the same way, then assembled.
- ``constant``: the value; ``builtin``: the builtin table's field, entry for entry.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import msgspec

from .builtin import builtin_table
from .check import entries_of
from .model import (
    DEFAULT_ALPHABET,
    ArrayTemplate,
    Builtin,
    CheckedWorkload,
    Choice,
    Field,
    Range,
    Text,
    Weighted,
)
from .sizes import range_bound, range_scale
from .types import FLOAT, SnowflakeType
from .values import EXACT, coerce


def apportion(total: int, weights: list[Fraction]) -> list[int]:
    """``total`` split by ``weights`` exactly: floors, then one more to the largest
    remainders (ties to the earlier value)."""
    s = sum(weights)
    quotas = [total * w / s for w in weights]
    counts = [math.floor(q) for q in quotas]
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


def default_stride(entries: int) -> int:
    """Worker ``w`` starts at entry ``w * stride % entries``: a stride near the golden
    ratio of the length and coprime with it, so neighbouring workers start far apart and
    never replay in lockstep (8192 entries: 5063, the resort model's)."""
    guess = round(entries * (math.sqrt(5) - 1) / 2)
    for step in range(entries + 1):
        for s in (guess + step, guess - step):
            if 1 <= s and math.gcd(s, entries) == 1:
                return s
    return 1


def _indexes(rng: random.Random, n: int, k: int) -> bytes:
    """``k`` uniform draws from ``range(n)`` (``n`` at most 256) as bytes: random bytes
    with those at or past the last whole multiple of ``n`` dropped (no modulo bias), then
    reduced mod ``n`` by the caller's table."""
    drop = bytes(range(256 - 256 % n, 256))
    out = b""
    while len(out) < k:
        out += rng.randbytes(k - len(out) + 8).translate(None, drop)
    return out[:k]


class _Resolver:
    """Resolves the table columns of one workload."""

    def __init__(self, w: CheckedWorkload) -> None:
        self.w = w
        self.entries = entries_of(w)
        #: Resolved choice columns by name: (type, values per entry), for ``by``.
        self.columns: dict[str, tuple[SnowflakeType, list[Any]]] = {}

    def rng(self, path: str) -> random.Random:
        return random.Random(f"{self.w.spec.seed}/{path}")

    def weighted(self, w: Weighted, t: SnowflakeType | None, n: int, rng: random.Random) -> list:
        values = [coerce(t, v, ()) for v in w.values]
        weights = [Fraction(str(x)) for x in (w.weights or [1] * len(values))]
        out: list[Any] = []
        for value, count in zip(values, apportion(n, weights), strict=True):
            out.extend([value] * count)
        rng.shuffle(out)
        return out

    def choice(self, c: Choice, t: SnowflakeType | None, rows: list[int], path: str) -> list:
        rng = self.rng(path)
        if c.by is None:
            return self.weighted(c, t, len(rows), rng)
        parent_type, parent = self.columns[c.by]
        cases = {
            msgspec.json.encode(coerce(parent_type, key, ())): case
            for key, case in (c.cases or {}).items()
        }
        groups: dict[bytes, list[int]] = {}
        for j, row in enumerate(rows):
            groups.setdefault(msgspec.json.encode(parent[row]), []).append(j)
        out: list[Any] = [None] * len(rows)
        for key in sorted(groups):
            members = groups[key]
            case = cases.get(key, c.default)
            assert case is not None  # check() made sure every value has a case
            for j, value in zip(members, self.weighted(case, t, len(members), rng), strict=True):
                out[j] = value
        return out

    def range(self, r: Range, t: SnowflakeType | None, n: int, path: str) -> list:
        rng = self.rng(path)
        lo, hi = (range_bound(r, t, (), v) for v in (r.min, r.max))
        if isinstance(lo, dt.date):
            days = (hi - lo).days
            return [lo + dt.timedelta(days=rng.randint(0, days)) for _ in range(n)]
        scale = range_scale(r, t)
        k_lo, k_hi = (int(d.scaleb(scale, context=EXACT)) for d in (lo, hi))
        draws = [rng.randint(k_lo, k_hi) for _ in range(n)]
        if scale == 0 and not (t is not None and t.kind == FLOAT):
            return draws
        step = 10**scale
        return [k / step for k in draws]

    def text(self, x: Text, n: int, path: str) -> list[str]:
        rng = self.rng(path)
        if x.distinct is not None and x.distinct < n:
            pool = self.strings(x, x.distinct, rng)
            return self.weighted(Weighted(values=pool), None, n, rng)
        return self.strings(x, n, rng)

    def strings(self, x: Text, n: int, rng: random.Random) -> list[str]:
        """``n`` strings of ``x``, each drawn anew."""
        lengths = [rng.randint(x.min_length, x.max_length) for _ in range(n)]
        options = list(x.words) if x.words is not None else list(x.alphabet or DEFAULT_ALPHABET)
        sep = " " if x.words is not None else ""
        if len(options) > 256:
            return [x.prefix + sep.join(rng.choices(options, k=k)) for k in lengths]
        # Up to 256 options: indexes drawn a batch of random bytes at a time.
        pick = [options[b % len(options)] for b in range(256)]
        return [
            x.prefix + sep.join(map(pick.__getitem__, _indexes(rng, len(options), k)))
            for k in lengths
        ]

    def array(self, a: ArrayTemplate, rows: list[int], path: str) -> list[list]:
        if a.items is not None:
            items = [self.field(f, None, rows, f"{path}/{i}") for i, f in enumerate(a.items)]
            return [list(values) for values in zip(*items, strict=True)] or [[] for _ in rows]
        assert a.of is not None and a.min_length is not None and a.max_length is not None
        rng = self.rng(path + "#length")
        lengths = [rng.randint(a.min_length, a.max_length) for _ in rows]
        owners = [row for row, k in zip(rows, lengths, strict=True) for _ in range(k)]
        flat = iter(self.field(a.of, None, owners, path + "/of"))
        return [[next(flat) for _ in range(k)] for k in lengths]

    def field(self, f: Field, t: SnowflakeType | None, rows: list[int], path: str) -> list:
        """The values of ``f`` for entries ``rows`` (one per item of ``rows``)."""
        n = len(rows)
        if isinstance(f.choice, Choice):
            return self.choice(f.choice, t, rows, path)
        if isinstance(f.range, Range):
            return self.range(f.range, t, n, path)
        if isinstance(f.text, Text):
            return self.text(f.text, n, path)
        if isinstance(f.object, dict):
            keys = list(f.object)
            fields = [self.field(v, None, rows, f"{path}/{k}") for k, v in f.object.items()]
            return [
                dict(zip(keys, values, strict=True)) for values in zip(*fields, strict=True)
            ] or [{} for _ in rows]
        if isinstance(f.array, ArrayTemplate):
            return self.array(f.array, rows, path)
        builtin = getattr(f, "builtin", None)
        if isinstance(builtin, Builtin):
            table = builtin_table(builtin.table)
            assert table is not None
            column = table.column(builtin.field)
            return [coerce(t, column[row % table.length], ()) for row in rows]
        return [coerce(t, f.constant, ())] * n


def iter_columns(w: CheckedWorkload) -> Iterator[tuple[str, list[Any]]]:
    """Each table column's name and value per entry (``entries_of(w)`` of each), in
    order; constants included, dynamic columns left out. Only choice columns are kept
    after they are yielded (for ``by``), so a caller that renders each column and lets
    it go never holds every column's values at once."""
    r = _Resolver(w)
    rows = list(range(r.entries))
    for c in w.columns:
        if c.spec.dynamic:
            continue
        values = r.field(c.spec, c.type, rows, c.name)
        if isinstance(c.spec.choice, Choice):
            r.columns[c.name] = (c.type, values)
        yield c.name, values


def resolve_columns(w: CheckedWorkload) -> dict[str, list[Any]]:
    """Every table column's value per entry, by name (see :func:`iter_columns`)."""
    return dict(iter_columns(w))
