"""A query and the values bound to it: no value the dashboard sends is ever part of the
SQL text.

Every query function returns a :class:`Statement`: SQL with a ``?`` for each value, and
the values, in order. The targets bind them: DuckDB's ``?`` parameters on the emulator's
files, the SQL API's ``bindings`` on an account (``account.py``). A :class:`Binder`
collects values while a query is written, so the ``?`` and its value are written in one
place::

    b = Binder()
    sql = f"SELECT count(*) FROM T WHERE RUN_ID = {b(run_id)}"
    Statement(sql, b.params)

One target cannot bind yet: the emulator's control query endpoint (``POST
/_emulator/query``, the path while an emulator serves the data dir) takes SQL text only.
For it :func:`duckdb_text` writes the values in as DuckDB literals by DuckDB's complete
rules (a string's ``'`` doubled; DuckDB reads a backslash in a string as itself, so
``a\\' OR 1=1 --`` stays one string), numbers and booleans as their literals, anything
else refused.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

__all__ = ["Binder", "Statement", "duckdb_text"]


class Statement(NamedTuple):
    """SQL with a ``?`` per bound value, and the values in the order of the ``?``."""

    sql: str
    params: tuple[Any, ...] = ()


class Binder:
    """Collects the values of one statement: ``b(value)`` returns ``?`` and keeps it."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any) -> str:
        self.values.append(value)
        return "?"

    @property
    def params(self) -> tuple[Any, ...]:
        return tuple(self.values)


def _duckdb_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value!r} as a SQL literal")
        return repr(float(value))
    if isinstance(value, dt.datetime):
        value = value.isoformat()
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"cannot write a {type(value).__name__} as a SQL literal")


def _placeholders(sql: str) -> list[int]:
    """Offsets of the ``?`` outside string literals, quoted names and comments."""
    out: list[int] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            end = sql.find(c, i + 1)
            while end != -1 and end + 1 < n and sql[end + 1] == c:  # a doubled quote
                end = sql.find(c, end + 2)
            if end == -1:
                raise ValueError("unterminated quote in SQL")
            i = end + 1
            continue
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end + 1
            continue
        if sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end == -1 else end + 2
            continue
        if c == "?":
            out.append(i)
        i += 1
    return out


def duckdb_text(stmt: Statement) -> str:
    """``stmt`` as one DuckDB SQL text, each value written in as a literal (for a target
    that takes no parameters)."""
    spots = _placeholders(stmt.sql)
    params: Sequence[Any] = stmt.params
    if len(spots) != len(params):
        raise ValueError(f"{len(spots)} '?' in the SQL, {len(params)} value(s) given")
    parts, last = [], 0
    for at, value in zip(spots, params, strict=True):
        parts += [stmt.sql[last:at], _duckdb_literal(value)]
        last = at + 1
    parts.append(stmt.sql[last:])
    return "".join(parts)
