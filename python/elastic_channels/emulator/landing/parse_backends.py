"""Which parse path lands a batch: ``native`` (the Rust row parser, ``batch_native.py``)
or ``sql`` (one DuckDB query, ``batch_sql.py``). Chosen here, once: ``emulator serve
--parse``, the stores and the row checker all take it from :func:`make_parse`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .batch_sql import SqlParse

if TYPE_CHECKING:
    from .batch_native import NativeParse

__all__ = ["PARSE_BACKENDS", "default_parse", "make_parse", "native_parse_available"]

PARSE_BACKENDS = ("native", "sql")


def native_parse_available() -> bool:
    """Whether the native module is built with the row parser (and pyarrow is there)."""
    try:
        import pyarrow  # noqa: F401

        from elastic_native import RowParser  # noqa: F401
    except ImportError:
        return False
    return True


def default_parse() -> str:
    """``native`` when it is built, else ``sql``."""
    return "native" if native_parse_available() else "sql"


def make_parse(
    columns: Sequence[tuple[str, str]], *, check_keys: bool = True, backend: str | None = None
) -> NativeParse | SqlParse:
    """The parse path ``backend`` (None: :func:`default_parse`) for a table's columns."""
    backend = backend or default_parse()
    if backend == "sql":
        return SqlParse(columns, check_keys=check_keys)
    if backend != "native":
        raise ValueError(f"parse must be one of {', '.join(PARSE_BACKENDS)}, got {backend!r}")
    if not native_parse_available():
        raise ValueError(
            "parse 'native' needs the native module built (maturin develop) and pyarrow"
        )
    from .batch_native import NativeParse

    return NativeParse(columns, check_keys=check_keys)
