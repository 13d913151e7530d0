"""The statements of a SQL script (``elastic-channels setup --sql-file``): split at ``;``
outside quotes and comments, each with the line it starts on."""

from __future__ import annotations

from pathlib import Path

from .ddl import SetupError

__all__ = ["read_sql_file", "split_statements"]


def split_statements(text: str) -> list[tuple[int, str]]:
    """The statements of a SQL script as ``(line, statement)``, in order.

    Statements end at ``;`` outside quotes; comments (``--``, ``//``, ``/* */``) outside
    quotes are dropped; ``'...'`` (with ``''`` or a backslash escaping a quote),
    ``"..."`` and ``$$...$$`` are kept whole. ``line`` is where the statement starts
    (1-based); empty statements are skipped."""
    found: list[tuple[int, str]] = []
    buf: list[str] = []
    line = start = 1
    started = False  # a non-blank character of the current statement seen
    i, n = 0, len(text)
    while i < n:
        c, pair = text[i], text[i : i + 2]
        if pair in ("--", "//"):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif pair == "/*":
            end = text.find("*/", i + 2)
            if end < 0:
                raise SetupError(f"line {line}: a /* comment is never closed")
            line += text.count("\n", i, end)
            buf.append(" ")
            i = end + 2
        elif c == ";":
            if stmt := "".join(buf).strip():
                found.append((start, stmt))
            buf.clear()
            started = False
            i += 1
        else:
            quoted = c in "'\"" or (pair == "$$" and not _in_identifier(text, i))
            end = _quote_end(text, i, line) if quoted else i + 1
            if not started and not c.isspace():
                start, started = line, True
            buf.append(text[i:end])
            line += text.count("\n", i, end)
            i = end
    if stmt := "".join(buf).strip():
        found.append((start, stmt))
    return found


def _in_identifier(text: str, i: int) -> bool:
    """True if ``text[i]`` continues a word (``A$$B`` is a name, not a ``$$`` string)."""
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_$")


def _quote_end(text: str, i: int, line: int) -> int:
    """The index just past the quoted text that starts at ``i``."""
    if text.startswith("$$", i):
        end = text.find("$$", i + 2)
        if end < 0:
            raise SetupError(f"line {line}: a $$ string is never closed")
        return end + 2
    quote, j = text[i], i + 1
    while j < len(text):
        if quote == "'" and text[j] == "\\":
            j += 2
        elif text[j] == quote and text.startswith(quote * 2, j):
            j += 2
        elif text[j] == quote:
            return j + 1
        else:
            j += 1
    raise SetupError(f"line {line}: a {quote} quote is never closed")


def read_sql_file(path: str) -> list[tuple[int, str]]:
    """The statements of the SQL file at ``path`` (see :func:`split_statements`)."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise SetupError(f"--sql-file {path}: cannot read it: {e.strerror or e}") from e
    try:
        stmts = split_statements(text)
    except SetupError as e:
        raise SetupError(f"--sql-file {path}: {e}") from e
    if not stmts:
        raise SetupError(f"--sql-file {path}: no SQL statement in it (only blanks or comments)")
    return stmts
