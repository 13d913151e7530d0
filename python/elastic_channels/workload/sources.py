"""Checks of the sources that fill values: choices, ranges and text (``check`` runs them
on every column and VARIANT field)."""

from __future__ import annotations

import msgspec

from . import sizes
from .errors import Path, WorkloadError
from .model import Choice, Range, Text, Weighted
from .types import DATE, FLOAT, NUMBER, SnowflakeType
from .values import check_text, coerce, to_decimal

MAX_SCALE = 15


def check_weighted(w: Weighted, t: SnowflakeType | None, path: Path) -> None:
    """Values that fit the type, and one non-negative weight for each, not all zero."""
    if not w.values:
        raise WorkloadError("needs at least one value", path=(*path, "values"))
    for i, v in enumerate(w.values):
        coerce(t, v, (*path, "values", i))
    if w.weights is None:
        return
    if len(w.weights) != len(w.values):
        raise WorkloadError(
            f"{len(w.weights)} weights for {len(w.values)} values; give one per value",
            path=(*path, "weights"),
        )
    for i, weight in enumerate(w.weights):
        if to_decimal(weight, (*path, "weights", i)) < 0:
            raise WorkloadError(f"must not be negative, got {weight}", path=(*path, "weights", i))
    if sum(to_decimal(x, path) for x in w.weights) <= 0:
        raise WorkloadError("must not all be zero", path=(*path, "weights"))


def check_choice(
    c: Choice,
    t: SnowflakeType | None,
    path: Path,
    choices: dict[str, tuple[SnowflakeType, set[bytes]]],
) -> None:
    """A choice, plain or by an earlier choice column (``choices``: name -> its type and
    the rendered values it can take), with a case for every value that column takes."""
    if c.by is None:
        for key in ("cases", "default"):
            if getattr(c, key) is not None:
                raise WorkloadError(f"{key} needs by: the column it depends on", path=(*path, key))
        check_weighted(c, t, path)
        return
    if c.values or c.weights is not None:
        key = "values" if c.values else "weights"
        raise WorkloadError("with by, values and weights go in cases", path=(*path, key))
    parent = choices.get(c.by)
    if parent is None:
        raise WorkloadError(
            f"{c.by!r} is not an earlier choice column; by names one declared above",
            path=(*path, "by"),
        )
    parent_type, parent_values = parent
    covered = set()
    for key in c.cases or {}:
        rendered = msgspec.json.encode(coerce(parent_type, key, (*path, "cases", key)))
        if rendered not in parent_values:
            raise WorkloadError(f"{key!r} is not a value of {c.by}", path=(*path, "cases", key))
        covered.add(rendered)
    for w, sub in c.alternatives():
        check_weighted(w, t, (*path, *sub))
    missing = parent_values - covered
    if missing and c.default is None:
        names = ", ".join(sorted(m.decode() for m in missing)[:5])
        raise WorkloadError(
            f"no case for {len(missing)} value(s) of {c.by} ({names}); add them or a default",
            path=(*path, "cases"),
        )


def check_range(r: Range, t: SnowflakeType | None, path: Path) -> None:
    """Ends that fit the column, in the scale it takes, the lower first."""
    if t is not None and t.kind == NUMBER:
        if r.scale is not None and r.scale != t.scale:
            raise WorkloadError(f"{t} has scale {t.scale}; leave scale out", path=(*path, "scale"))
    elif t is not None and t.kind == DATE:
        if r.scale is not None:
            raise WorkloadError("a DATE range takes no scale", path=(*path, "scale"))
    elif t is not None and t.kind == FLOAT and r.scale is None:
        raise WorkloadError("a FLOAT range needs scale: digits after the point", path=path)
    if r.scale is not None and not 0 <= r.scale <= MAX_SCALE:
        raise WorkloadError(f"must be between 0 and {MAX_SCALE}", path=(*path, "scale"))
    lo, hi = (sizes.range_bound(r, t, (*path, k), v) for k, v in (("min", r.min), ("max", r.max)))
    if lo > hi:
        raise WorkloadError(f"must be at most max ({r.min} > {r.max})", path=(*path, "min"))


def check_text_source(x: Text, t: SnowflakeType | None, path: Path) -> None:
    """Characters or words to draw from, lengths in order, no longer than VARCHAR(n)."""
    check_text(x.prefix, (*path, "prefix"))
    if x.alphabet is not None and x.words is not None:
        raise WorkloadError("give alphabet or words, not both", path=(*path, "words"))
    if x.alphabet is not None:
        check_text(x.alphabet, (*path, "alphabet"))
        if not x.alphabet:
            raise WorkloadError("needs at least one character", path=(*path, "alphabet"))
    if x.words is not None:
        if not x.words:
            raise WorkloadError("needs at least one word", path=(*path, "words"))
        for i, word in enumerate(x.words):
            check_text(word, (*path, "words", i))
    if not 0 <= x.min_length <= x.max_length:
        raise WorkloadError(
            f"need 0 <= min_length <= max_length, got {x.min_length} and {x.max_length}",
            path=(*path, "min_length"),
        )
    if x.distinct is not None and x.distinct < 1:
        raise WorkloadError(f"must be at least 1, got {x.distinct}", path=(*path, "distinct"))
    longest = len(x.prefix) + x.max_length
    if x.words is not None:
        longest = len(x.prefix) + x.max_length * (1 + max(map(len, x.words))) - 1
    if t is not None and t.length is not None and longest > t.length:
        raise WorkloadError(f"prefix + max_length is longer than {t}", path=(*path, "max_length"))
