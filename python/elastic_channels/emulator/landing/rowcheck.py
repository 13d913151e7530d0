"""Check NDJSON against a table's columns without landing it: the same parse path the
lander uses (``parse_backends.py``: native or sql, ``lines.py`` for what neither can
read), into a private in-memory database. For tests, and for finding out why rows were
rejected.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import duckdb

from ..storage.schema import column_type, quote_ident
from .batch_sql import Body
from .lines import clean_lines
from .parse_backends import make_parse

__all__ = ["RowChecker", "RowError"]


class RowError(NamedTuple):
    line: int  # 1-based line number in the body
    message: str
    excerpt: str  # the start of the offending line


class RowChecker:
    """``check(data) -> (good rows as NDJSON, rows parsed, errors)``; blank lines are not
    rows. ``parse`` is the parse path (None: the default one)."""

    def __init__(
        self,
        columns: Sequence[tuple[str, str]],
        *,
        check_keys: bool = True,
        parse: str | None = None,
    ) -> None:
        self._columns = tuple(columns)
        self.parse = make_parse(columns, check_keys=check_keys, backend=parse)

    def check(self, data: bytes) -> tuple[bytes, int, list[RowError]]:
        raw, early = clean_lines(data)
        names = ", ".join(quote_ident(n) for n, _ in self._columns)
        typed = ", ".join(f"{quote_ident(n)} {column_type(t).duckdb}" for n, t in self._columns)
        with tempfile.TemporaryDirectory(prefix="rowcheck-") as tmp:
            con = duckdb.connect()
            try:
                con.execute("SET TimeZone = 'UTC'")
                con.execute(f"CREATE TEMP TABLE p ({typed})")

                def insert(rows: str) -> int:
                    count = con.execute(f"INSERT INTO p SELECT {names} FROM ({rows})").fetchone()
                    return int(count[0]) if count else 0

                body = Body(Path(tmp) / "body.ndjson", raw)
                got = self.parse.land(con, {"body": body}, insert)["body"]
                good = con.execute(f"SELECT to_json(struct_pack({names})) FROM p").fetchall()
            finally:
                con.close()
        errors = sorted(RowError(*e) for e in [*early, *got.errors])
        lines = b"".join(str(g[0]).encode() + b"\n" for g in good)
        return lines, got.parsed + len(early), errors
