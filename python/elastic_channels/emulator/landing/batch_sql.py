"""The SQL parse path of a landing batch: every line through ``rowparse.py``'s query in
DuckDB (read from work files by ``read_csv``), inside the caller's transaction.

It is the fallback when the native parser is not built, the oracle the native one is
tested against, and where the native path sends the lines it leaves (``batch_native.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from .lines import for_line_reader, line_numbers
from .rowparse import NOT_BLANK, SOURCE, parse_sql

__all__ = ["Body", "LandedFile", "LineError", "RowSink", "SqlParse"]

#: A refused line: (1-based line number, message, excerpt).
LineError = tuple[int, str, str]
#: Takes a SELECT of the good rows' typed columns (by name); returns how many it took.
RowSink = Callable[[str], int]


@dataclass
class Body:
    """One request's lines (NDJSON, unreadable lines already blanked, ``lines.py``) and
    the work file the SQL path may write them to for DuckDB to read."""

    path: Path
    raw: bytes


@dataclass
class LandedFile:
    """What one request's lines came to: rows parsed and inserted, and the refused ones."""

    parsed: int = 0
    inserted: int = 0
    errors: list[LineError] = field(default_factory=list)


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class SqlParse:
    """Parses a batch with one DuckDB query (``rowparse.parse_sql``)."""

    name = "sql"

    def __init__(self, columns: Sequence[tuple[str, str]], *, check_keys: bool = True) -> None:
        self._names = ", ".join('"' + n.replace('"', '""') + '"' for n, _ in columns)
        self._sql = parse_sql(columns, check_keys=check_keys)

    def land(
        self, cur: duckdb.DuckDBPyConnection, bodies: dict[str, Body], sink: RowSink
    ) -> dict[str, LandedFile]:
        """Each body's lines parsed; the good rows handed to ``sink`` in one SELECT."""
        read = {name: for_line_reader(body.raw) for name, body in bodies.items()}
        for name, body in bodies.items():
            body.path.write_bytes(read[name])
        parse, results, by_path = count_lines(cur, bodies, self._sql)
        inserted = sink(f"SELECT {self._names} FROM ({parse}) WHERE _ERR IS NULL")
        explain_refused(cur, parse, results, by_path, inserted)
        for name, got in results.items():
            if got.errors:
                found = got.errors
                got.errors = _numbered(bodies[name].raw, read[name], found)  # type: ignore[arg-type]
        return results


def count_lines(
    cur: duckdb.DuckDBPyConnection, bodies: dict[str, Body], parse_sql: str
) -> tuple[str, dict[str, LandedFile], dict[str, str]]:
    """The parse query over the bodies' work files and each body's rows (all counted as
    landed until ``explain_refused`` says otherwise)."""
    paths = ", ".join(_sql_str(str(b.path)) for b in bodies.values())
    source = (
        f"read_csv([{paths}], columns={{'_SRC': 'VARCHAR'}}, delim='\\x01', quote='', "
        "escape='', header=false, auto_detect=false, new_line='\\n', filename=true, "
        "max_line_size=67108864, strict_mode=false)"
    )
    by_path = {str(b.path): name for name, b in bodies.items()}
    results = {name: LandedFile() for name in bodies}
    for path, n in cur.execute(
        f"SELECT filename, count(*) FROM {source} WHERE {NOT_BLANK} GROUP BY 1"
    ).fetchall():
        results[by_path[path]] = LandedFile(int(n), int(n))
    return parse_sql.replace(SOURCE, source), results, by_path


def explain_refused(
    cur: duckdb.DuckDBPyConnection,
    parse: str,
    results: dict[str, LandedFile],
    by_path: dict[str, str],
    inserted: int,
) -> None:
    """If fewer rows landed than were parsed (rare), parse again for why, and where:
    each refused line as ``(message, excerpt, md5)`` until ``_numbered`` numbers it."""
    if inserted == sum(r.parsed for r in results.values()):
        return
    for path, err, excerpt, digest in cur.execute(
        f"SELECT _FILE, _ERR, _EXCERPT, _MD5 FROM ({parse}) WHERE _ERR IS NOT NULL"
    ).fetchall():
        got = results[by_path[path]]
        got.errors.append((err, excerpt, digest))  # type: ignore[arg-type]
        got.inserted -= 1


def _numbered(raw: bytes, read: bytes, found: list[tuple[str, str, str]]) -> list[LineError]:
    """``found`` numbered by the md5s of the lines of ``read`` (``raw`` as the reader got
    it, ``lines.for_line_reader``); where ``read`` is not ``raw``, each excerpt is taken
    again from ``raw``, as long, so that it shows the line as sent."""
    numbers = line_numbers(read, [digest for _, _, digest in found])
    lines = None if read is raw else raw.split(b"\n")
    out = []
    for n, (msg, excerpt, _) in zip(numbers, found, strict=True):
        if lines is not None and n:
            excerpt = lines[n - 1].decode("utf-8", "replace")[: len(excerpt)]
        out.append((n, msg, excerpt))
    return sorted(out)
