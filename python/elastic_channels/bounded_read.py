"""Reading a file a user names, within bounds: its size, its nesting, no NUL byte.

Every file the commands read on a user's say goes through here: result files
(``runs``, ``compare``), scenario and workload YAML (whose nodes, depth and aliases
``scenario.yaml_source`` bounds as it reads them), ``--profile`` JSON, a private key
file and ``.env``. A hostile or mistaken file (``/dev/zero``, 300 MB where a few KB
belong, JSON nested 100,000 deep, a NUL byte) is refused with a :class:`FileRefused`
whose one line says why; the caller puts the file's name and its setting in front.

A regular file over the bound is refused by its size before anything is read; any
other file (a pipe, ``/dev/zero``) is read up to one byte past the bound.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

__all__ = [
    "FileRefused",
    "check_depth",
    "decode_text",
    "read_bytes",
    "read_json",
    "read_text",
    "size_text",
]


class FileRefused(ValueError):
    """A file that was not read, or not taken; the message says why (not which file:
    the caller names it)."""


def size_text(n: int) -> str:
    """``64 KiB``, ``256 MiB``: a bound as messages say it."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the file at ``path``, at most ``limit`` of them (more is refused)."""
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > limit:
                raise FileRefused(
                    f"{info.st_size:,} bytes, over the {size_text(limit)} such a file may hold"
                )
            data = f.read(limit + 1)
    except OSError as e:
        raise FileRefused(f"cannot read it: {e.strerror or e}") from None
    if len(data) > limit:
        raise FileRefused(f"over the {size_text(limit)} such a file may hold")
    return data


def read_text(path: str | os.PathLike[str], limit: int) -> str:
    """The UTF-8 text of the file at ``path`` (at most ``limit`` bytes); a NUL byte,
    which no text file these commands read may hold, is refused with its line."""
    return decode_text(read_bytes(path, limit))


def decode_text(data: bytes) -> str:
    """``data`` as UTF-8 text without a NUL byte (else :class:`FileRefused`)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise FileRefused(f"not UTF-8 text (line {line}: {e.reason})") from None
    at = text.find("\x00")
    if at >= 0:
        raise FileRefused(f"holds a NUL byte (line {text.count(chr(10), 0, at) + 1})")
    return text


def read_json(path: str | os.PathLike[str], limit: int, max_depth: int) -> Any:
    """The JSON document in the file at ``path``: at most ``limit`` bytes, lists and
    objects nested at most ``max_depth`` deep. A file that is not JSON is refused."""
    text = read_text(path, limit)
    try:
        doc = json.loads(text)
    except RecursionError:
        raise FileRefused(f"nested deeper than the {max_depth} levels a file may hold") from None
    except ValueError as e:
        raise FileRefused(f"not a JSON document ({e})") from None
    check_depth(doc, max_depth)
    return doc


def check_depth(value: Any, max_depth: int) -> None:
    """:class:`FileRefused` when lists and mappings in ``value`` nest deeper than
    ``max_depth`` (a scalar is depth 0, ``[1]`` is 1). Walks without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise FileRefused(f"nested deeper than the {max_depth} levels a file may hold")
        items = node.values() if isinstance(node, dict) else node
        stack.extend((x, depth + 1) for x in items if isinstance(x, (dict, list)))
