"""``?`` bind variables: the request's ``bindings`` (``{"1": {"type": "TEXT", "value":
"..."}}``; types FIXED, REAL, TEXT, BOOLEAN, DATE and TIMESTAMP_* given as text) as
Python values for DuckDB."""

from __future__ import annotations

import decimal
from typing import Any

from .errors import SqlApiError

__all__ = ["bindings"]


def _refused(message: str) -> SqlApiError:
    return SqlApiError(400, "391903", "22000", message)


def _binding(key: str, b: Any) -> Any:
    if not isinstance(b, dict) or "type" not in b or "value" not in b:
        raise _refused(f"binding {key!r} must be an object with 'type' and 'value'")
    kind, value = str(b["type"]).upper(), b["value"]
    if value is None:
        return None
    if isinstance(value, list):
        raise _refused(f"binding {key!r}: array binds are not supported")
    try:
        if kind == "FIXED":
            text = str(value)
            return int(text) if text.lstrip("-").isdigit() else decimal.Decimal(text)
        if kind == "REAL":
            return float(value)
        if kind == "BOOLEAN":
            return str(value).lower() in ("true", "1")
        if kind in ("TEXT", "DATE", "TIME") or kind.startswith("TIMESTAMP"):
            return str(value)
    except (ValueError, decimal.InvalidOperation):
        raise _refused(f"binding {key!r}: {value!r} is not a valid {kind}") from None
    raise _refused(f"binding {key!r}: unsupported type {kind!r}")


def bindings(raw: Any, count: int) -> list[Any]:
    """The values of ``raw`` (the request's ``bindings``) for ``count`` bind variables."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _refused("'bindings' must be an object")
    keys = sorted(raw, key=lambda k: int(k) if str(k).isdigit() else -1)
    if keys != [str(i) for i in range(1, len(keys) + 1)]:
        raise _refused("'bindings' keys must be '1', '2', ... in full")
    if len(keys) != count:
        raise SqlApiError(
            422, "002049", "42601",
            f"SQL compilation error: {count} bind variable(s) in the statement, "
            f"{len(keys)} binding(s) given",
        )  # fmt: skip
    return [_binding(k, raw[k]) for k in keys]
