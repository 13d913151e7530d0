"""Line-level work the lander does in Python: what DuckDB's line reader cannot take, and
finding the line numbers of the rows the parse rejected.

DuckDB reads a request's lines as UTF-8 text split on ``\\n``. A line that is not valid
UTF-8, or holds a NUL or the reader's field separator (\\x01), cannot be JSON anyway: it
is reported here, with its line number, and blanked so the other lines keep theirs.
The reader also ends a line at a ``\\r``: :func:`for_line_reader` hides them from it.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence

__all__ = ["BOM", "EXCERPT_CHARS", "clean_lines", "for_line_reader", "line_numbers"]

EXCERPT_CHARS = 200


def _excerpt(line: bytes) -> str:
    return line[:EXCERPT_CHARS].decode("utf-8", "replace")


def clean_lines(raw: bytes) -> tuple[bytes, list[tuple[int, str, str]]]:
    """``(raw with unreadable lines blanked, [(line number, message, excerpt)])``."""
    ctrl = b"\x00" in raw or b"\x01" in raw
    if not ctrl:
        if raw.isascii():
            return raw, []
        try:
            raw.decode("utf-8")
            return raw, []
        except UnicodeDecodeError:
            pass
    lines = raw.split(b"\n")
    errors = []
    for i, line in enumerate(lines):
        if b"\x00" in line or b"\x01" in line:
            problem = "DecodeError: malformed JSON (a control character outside a string)"
        else:
            try:
                line.decode("utf-8")
                continue
            except UnicodeDecodeError as e:
                problem = f"DecodeError: invalid UTF-8 at byte {e.start} of the line"
        errors.append((i + 1, problem, _excerpt(line)))
        lines[i] = b""
    return b"\n".join(lines), errors


#: UTF-8's byte order mark. RFC 8259 lets a parser ignore one before a JSON text, and
#: each NDJSON line is one: the native parser skips one at the start of a line and
#: leaves a line with more to the SQL path, which skips them all (so both land alike).
BOM = b"\xef\xbb\xbf"
_LEADING_BOMS = re.compile(b"(?m)^(?:" + re.escape(BOM) + b")+")


def for_line_reader(raw: bytes) -> bytes:
    """``raw`` for DuckDB's line reader (``batch_sql.py``): byte order marks at the start
    of a line dropped (the reader skips one only at the start of a file, so one before
    line 2 was refused here and landed on the native path), and each ``\\r`` as a tab.

    The reader ends a line at a ``\\r`` too, even told ``new_line='\\n'``: a line holding
    one was read as two lines, neither of them the line (so its refusal, found by its md5,
    had no line number: 0), and a valid row with a ``\\r`` between its tokens was refused
    as two malformed ones. Outside a JSON string a ``\\r`` and a tab are both whitespace;
    inside one both are control characters JSON refuses raw: every line parses the same.
    """
    if BOM in raw:
        raw = _LEADING_BOMS.sub(b"", raw)
    return raw.replace(b"\r", b"\t") if b"\r" in raw else raw


def line_numbers(raw: bytes, digests: Sequence[str]) -> list[int]:
    """The 1-based line numbers of the lines whose md5 hex digests are given, in order.

    A digest given k times takes the first k lines that have it, in order.
    """
    wanted: dict[str, int] = defaultdict(int)
    for d in digests:
        wanted[d] += 1
    found: dict[str, list[int]] = defaultdict(list)
    for i, line in enumerate(raw.split(b"\n"), 1):
        d = hashlib.md5(line, usedforsecurity=False).hexdigest()
        if wanted.get(d, 0) > len(found[d]):
            found[d].append(i)
    taken: dict[str, int] = defaultdict(int)
    out = []
    for d in digests:
        k = taken[d]
        taken[d] += 1
        out.append(found[d][k] if k < len(found[d]) else 0)
    return out
