"""A multi-row ``VALUES`` list of bind variables, read once instead of once per row.

A client that writes many rows in one statement binds them as ``VALUES (?, ?, ...),
(?, ?, ...), ...`` (the monitor's MERGE: 100 and more rows of ~45 bind variables).
Translating that text with ``sqlglot`` and reading it again in the guard cost ~14 ms a
row, 90% of such a statement's time, though every row after the first says nothing
new. So a statement whose ``VALUES`` is a run of identical tuples of bare ``?`` is read
with its first tuple only (:func:`collapse`): translated and checked as that one-row
statement, whose DuckDB text then gets the run back (:func:`expand`). Tuples of bare
bind variables name no relation and call no function, so the guard's verdict on the
one-row statement is its verdict on the whole one; anything else (a tuple with a
literal, a ``VALUES`` inside a string or a comment, a translation where the tuple is
not found exactly once) takes the full path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

__all__ = ["ValuesRows", "collapse", "expand"]

#: ``VALUES`` then a tuple of bare ``?``, then at least one more of the same text.
_RUN = re.compile(r"\bVALUES(\s*)(\((?:\s*\?\s*,)*\s*\?\s*\))((?:\s*,\s*\2)+)", re.I)
_SNOWFLAKE = Dialect.get_or_raise("snowflake")


@dataclass(frozen=True)
class ValuesRows:
    """``statement`` with its run of tuples cut to the first: ``rows`` of ``width``."""

    statement: str
    width: int
    rows: int


def collapse(statement: str) -> ValuesRows | None:
    """``statement`` with one tuple of its ``VALUES`` run, or None if it has no run of
    bare bind variables right after a ``VALUES`` keyword (not in a string or comment)."""
    match = _RUN.search(statement)
    if match is None:
        return None
    try:  # the keyword is SQL, not text inside a literal or a comment
        tokens = _SNOWFLAKE.tokenize(statement[: match.start(1)])
    except sqlglot.errors.TokenError:
        return None
    if not tokens or tokens[-1].token_type != TokenType.VALUES:
        return None
    rows = 1 + match.group(3).count("(")
    one = statement[: match.start(3)] + statement[match.end(3) :]
    return ValuesRows(one, match.group(2).count("?"), rows)


def expand(sql: str, n_params: int, cut: ValuesRows) -> tuple[str, int] | None:
    """The translation ``sql`` (of ``cut.statement``, with ``n_params`` bind variables)
    with the run of tuples back, and its bind variables; None unless the one tuple is
    found exactly once."""
    one = "(" + ", ".join("?" for _ in range(cut.width)) + ")"
    needle = f"VALUES {one}"
    if sql.count(needle) != 1:
        return None
    run = "VALUES " + ", ".join(one for _ in range(cut.rows))
    return sql.replace(needle, run), n_params + (cut.rows - 1) * cut.width
