"""Check NDJSON against a table's columns without landing it: the same parse path the
lander uses (``rowparse.py`` in DuckDB, ``lines.py`` for what DuckDB cannot read), on a
private in-memory database. For tests, and for finding out why rows were rejected.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import duckdb

from .lines import clean_lines, line_numbers
from .rowparse import SOURCE, parse_sql

__all__ = ["RowChecker", "RowError"]


class RowError(NamedTuple):
    line: int  # 1-based line number in the body
    message: str
    excerpt: str  # the start of the offending line


class RowChecker:
    """``check(data) -> (good rows as NDJSON, rows parsed, errors)``; blank lines are not rows."""

    def __init__(self, columns: Sequence[tuple[str, str]], *, check_keys: bool = True) -> None:
        self._columns = tuple(columns)
        self._sql = parse_sql(columns, check_keys=check_keys)

    def check(self, data: bytes) -> tuple[bytes, int, list[RowError]]:
        raw, early = clean_lines(data)
        names = ", ".join(f'"{n}"' for n, _ in self._columns)
        with tempfile.TemporaryDirectory(prefix="rowcheck-") as tmp:
            path = Path(tmp) / "body.ndjson"
            path.write_bytes(raw)
            source = (
                f"read_csv('{path}', columns={{'_SRC': 'VARCHAR'}}, delim='\\x01', quote='', "
                "escape='', header=false, auto_detect=false, new_line='\\n', filename=true, "
                "max_line_size=67108864, strict_mode=false)"
            )
            con = duckdb.connect()
            try:
                con.execute("SET TimeZone = 'UTC'")
                con.execute(f"CREATE TEMP TABLE p AS {self._sql.replace(SOURCE, source)}")
                good = con.execute(
                    f"SELECT to_json(struct_pack({names})) FROM p WHERE _ERR IS NULL"
                ).fetchall()
                bad = con.execute(
                    "SELECT _ERR, _EXCERPT, _MD5 FROM p WHERE _ERR IS NOT NULL"
                ).fetchall()
                (parsed,) = con.execute("SELECT count(*) FROM p").fetchone() or (0,)
            finally:
                con.close()
        numbers = line_numbers(raw, [d for _, _, d in bad])
        errors = [RowError(*e) for e in early]
        errors += [RowError(numbers[i], msg, exc) for i, (msg, exc, _) in enumerate(bad)]
        body = b"".join(str(g[0]).encode() + b"\n" for g in good)
        return body, int(parsed) + len(early), sorted(errors)
