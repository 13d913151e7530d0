"""A value from a workload file, as the Python value a row carries for its column.

``coerce(type, value, path)`` checks that ``value`` (as YAML parsed it) can be a value
of a column of ``type`` and returns what msgspec then renders: ``str``, ``int``,
``float``, ``bool``, ``datetime.date``, ``datetime.datetime``, or (VARIANT, and every
field inside one: ``type`` None) JSON values: ``None``, lists and str-keyed dicts too.
Anything else raises a :class:`WorkloadError` naming the key and saying how to fix it.

NUMBER values with a scale are written as floats, as the resort sales' prices are: a
float renders as the shortest decimal that reads back to it, which is the value itself
when it has at most 15 significant digits, so wider ones are refused.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

from .errors import Path, WorkloadError
from .types import (
    BOOLEAN,
    DATE,
    FLOAT,
    NUMBER,
    TIMESTAMP_NTZ,
    TIMESTAMP_TZ,
    VARCHAR,
    VARIANT,
    SnowflakeType,
)

#: Significant digits a float holds exactly (every decimal of 15 digits round-trips).
FLOAT_DIGITS = 15
#: Decimal arithmetic exact for any number a workload may hold (NUMBER has 38 digits;
#: the default context rounds to 28).
EXACT = decimal.Context(prec=200)


def fits_scale(d: decimal.Decimal, scale: int) -> bool:
    """Whether ``d`` has at most ``scale`` digits after the point."""
    exponent = d.normalize(context=EXACT).as_tuple().exponent
    return isinstance(exponent, int) and exponent >= -scale


_YAML_BOOL_HINT = " (YAML reads unquoted yes/no/on/off/true/false as booleans: quote it)"


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names.update({type(None): "null", list: "a list", dict: "a mapping"})
    names.update({dt.date: "a date", dt.datetime: "a timestamp"})
    return names.get(type(value), type(value).__name__)


def check_text(value: str, path: Path) -> str:
    """``value``, which must encode as UTF-8 (no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise WorkloadError(
            f"holds a lone surrogate at character {e.start}; text must be valid Unicode",
            path=path,
        ) from None
    return value


def to_decimal(value: Any, path: Path) -> decimal.Decimal:
    """A number (or a string spelling one) as an exact, finite Decimal."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        hint = _YAML_BOOL_HINT if isinstance(value, bool) else ""
        raise WorkloadError(f"expected a number, got {_kind(value)}{hint}", path=path)
    try:
        d = decimal.Decimal(repr(value) if isinstance(value, float) else value)
    except decimal.InvalidOperation:
        raise WorkloadError(f"expected a number, got {value!r}", path=path) from None
    if not d.is_finite():
        raise WorkloadError(f"must be a finite number, got {value!r}", path=path)
    return d


def number_value(d: decimal.Decimal, t: SnowflakeType, path: Path) -> int | float:
    """``d`` as a NUMBER(p,s) value: an int when s is 0, else a float (see the module)."""
    assert t.precision is not None and t.scale is not None
    if not fits_scale(d, t.scale):
        raise WorkloadError(f"{d} has more decimal places than {t} allows ({t.scale})", path=path)
    if abs(d) >= decimal.Decimal(10) ** t.max_integer_digits:
        raise WorkloadError(
            f"{d} has more than {t.max_integer_digits} digits before the point, "
            f"more than {t} holds",
            path=path,
        )
    if t.scale == 0:
        return int(d)
    return decimal_float(d, path)


def decimal_float(d: decimal.Decimal, path: Path) -> float:
    """``d`` as the float msgspec writes back as ``d`` (at most 15 significant digits)."""
    digits = len(d.normalize().as_tuple().digits)
    if digits > FLOAT_DIGITS:
        raise WorkloadError(
            f"{d} has {digits} significant digits; values with a fraction are written "
            f"as JSON floats, exact to {FLOAT_DIGITS} digits",
            path=path,
        )
    return float(d)


def _timestamp(value: Any, aware: bool, path: Path) -> dt.datetime:
    if isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
        try:
            value = dt.datetime.fromisoformat(text)
        except ValueError:
            raise WorkloadError(
                f"{value!r} is not an ISO 8601 timestamp (e.g. 2025-11-30T02:44:06Z)", path=path
            ) from None
    if not isinstance(value, dt.datetime):
        raise WorkloadError(f"expected a timestamp, got {_kind(value)}", path=path)
    if aware and value.tzinfo is None:
        raise WorkloadError(
            f"{value.isoformat()} has no UTC offset; TIMESTAMP_TZ needs one (add Z)", path=path
        )
    if not aware and value.tzinfo is not None:
        raise WorkloadError(
            f"{value.isoformat()} has a UTC offset; TIMESTAMP_NTZ takes none", path=path
        )
    return value


def _date(value: Any, path: Path) -> dt.date:
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise WorkloadError(f"{value!r} is not a date (YYYY-MM-DD)", path=path) from None
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
        raise WorkloadError(f"expected a date (YYYY-MM-DD), got {_kind(value)}", path=path)
    return value


def json_value(value: Any, path: Path) -> Any:
    """``value`` if it is JSON (inside a VARIANT): null, booleans, finite numbers,
    strings, lists and mappings with string keys, nested."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise WorkloadError(f"must be a finite number, got {value!r}", path=path)
        return value
    if isinstance(value, str):
        return check_text(value, path)
    if isinstance(value, list):
        return [json_value(v, (*path, i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise WorkloadError(f"key {k!r} is not a string; JSON keys are", path=path)
            out[check_text(k, path)] = json_value(v, (*path, k))
        return out
    raise WorkloadError(
        f"{_kind(value)} is not a JSON value; quote it to make it a string", path=path
    )


def coerce(t: SnowflakeType | None, value: Any, path: Path) -> Any:
    """``value`` as a value of a column of type ``t`` (None: inside a VARIANT)."""
    if t is not None and t.kind == VARIANT and value is None:
        raise WorkloadError(
            "null is not a column's value (every column of the landing table is NOT NULL, "
            "the emulator refuses it); a VARIANT may hold null inside an object or array",
            path=path,
        )
    if t is None or t.kind == VARIANT:
        return json_value(value, path)
    if t.kind == VARCHAR:
        if not isinstance(value, str):
            hint = _YAML_BOOL_HINT if isinstance(value, bool) else " (quote it)"
            raise WorkloadError(f"expected a string, got {_kind(value)}{hint}", path=path)
        check_text(value, path)
        if t.length is not None and len(value) > t.length:
            raise WorkloadError(f"{len(value)} characters is longer than {t}", path=path)
        return value
    if t.kind == NUMBER:
        return number_value(to_decimal(value, path), t, path)
    if t.kind == FLOAT:
        f = float(to_decimal(value, path))
        if not math.isfinite(f):
            raise WorkloadError(f"{value!r} is out of a FLOAT's range", path=path)
        return f
    if t.kind == BOOLEAN:
        if not isinstance(value, bool):
            raise WorkloadError(f"expected true or false, got {_kind(value)}", path=path)
        return value
    if t.kind == DATE:
        return _date(value, path)
    if t.kind in (TIMESTAMP_TZ, TIMESTAMP_NTZ):
        return _timestamp(value, t.kind == TIMESTAMP_TZ, path)
    raise AssertionError(f"unhandled type {t}")
