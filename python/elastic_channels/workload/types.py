"""Snowflake column types a workload may declare, parsed from their SQL spelling.

``parse_type("number(12, 2)")`` gives ``SnowflakeType("NUMBER", precision=12, scale=2)``;
``str()`` of it is the canonical spelling (``NUMBER(12,2)``) the DDL uses. The types are
the ones Snowpipe Streaming's JSON rows map onto directly: VARCHAR (optionally with a
length), NUMBER(p,s), FLOAT, BOOLEAN, DATE, TIMESTAMP_TZ, TIMESTAMP_NTZ and VARIANT.
"""

from __future__ import annotations

import re

import msgspec

#: Kinds, as they are spelled in the DDL.
VARCHAR, NUMBER, FLOAT, BOOLEAN, DATE, TIMESTAMP_TZ, TIMESTAMP_NTZ, VARIANT = KINDS = (
    "VARCHAR",
    "NUMBER",
    "FLOAT",
    "BOOLEAN",
    "DATE",
    "TIMESTAMP_TZ",
    "TIMESTAMP_NTZ",
    "VARIANT",
)

#: Snowflake's limits: NUMBER has at most 38 digits; VARCHAR at most 16 MiB.
MAX_PRECISION = 38
MAX_VARCHAR_LENGTH = 16_777_216

_TYPE = re.compile(
    r"^\s*(?P<kind>[A-Za-z_]+)\s*(?:\(\s*(?P<a>\d+)\s*(?:,\s*(?P<b>\d+)\s*)?\))?\s*$"
)


class TypeSpellingError(ValueError):
    """A type string that is not one of the supported types (the message says why)."""


class SnowflakeType(msgspec.Struct, frozen=True):
    """A column's Snowflake type. ``precision``/``scale`` are NUMBER's, ``length``
    VARCHAR's (``None``: the default, 16 MiB)."""

    kind: str
    precision: int | None = None
    scale: int | None = None
    length: int | None = None

    def __str__(self) -> str:
        if self.kind == NUMBER:
            return f"NUMBER({self.precision},{self.scale})"
        if self.kind == VARCHAR and self.length is not None:
            return f"VARCHAR({self.length})"
        return self.kind

    @property
    def sql(self) -> str:
        """The canonical spelling, as ``CREATE TABLE`` takes it."""
        return str(self)

    @property
    def max_integer_digits(self) -> int:
        """Digits NUMBER allows before the decimal point."""
        assert self.precision is not None and self.scale is not None
        return self.precision - self.scale


def parse_type(text: str) -> SnowflakeType:
    """``text`` as a :class:`SnowflakeType`; raises :class:`TypeSpellingError` naming the
    problem (an unknown name, arguments a type does not take, out-of-range digits)."""
    m = _TYPE.match(text)
    if m is None:
        raise TypeSpellingError(
            f"{text!r} is not a type; write one of {', '.join(KINDS)} "
            "(NUMBER(p,s) and VARCHAR(n) take arguments)"
        )
    kind, a, b = m["kind"].upper(), m["a"], m["b"]
    if kind not in KINDS:
        raise TypeSpellingError(f"unknown type {m['kind']!r}; supported: {', '.join(KINDS)}")
    if kind == NUMBER:
        precision = MAX_PRECISION if a is None else int(a)
        scale = 0 if b is None else int(b)
        if not 1 <= precision <= MAX_PRECISION:
            raise TypeSpellingError(
                f"NUMBER precision must be between 1 and {MAX_PRECISION}, got {precision}"
            )
        if scale > precision:
            raise TypeSpellingError(
                f"NUMBER scale must be at most its precision ({precision}), got {scale}"
            )
        return SnowflakeType(NUMBER, precision=precision, scale=scale)
    if kind == VARCHAR:
        if b is not None:
            raise TypeSpellingError("VARCHAR takes one argument, its length: VARCHAR(n)")
        if a is None:
            return SnowflakeType(VARCHAR)
        length = int(a)
        if not 1 <= length <= MAX_VARCHAR_LENGTH:
            raise TypeSpellingError(
                f"VARCHAR length must be between 1 and {MAX_VARCHAR_LENGTH}, got {length}"
            )
        return SnowflakeType(VARCHAR, length=length)
    if a is not None:
        raise TypeSpellingError(f"{kind} takes no arguments")
    return SnowflakeType(kind)
