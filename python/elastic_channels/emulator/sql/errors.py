"""The SQL API's refusals, in Snowflake's shape: an HTTP status, a Snowflake error code,
a SQL state and a message (``QueryFailureStatus``: ``code``, ``message``, ``sqlState``,
``statementHandle``)."""

from __future__ import annotations

import uuid
from typing import Any

__all__ = ["SqlApiError", "bad_request", "compile_error", "error_body"]


class SqlApiError(Exception):
    """A request the API refuses: HTTP status, Snowflake error code, SQL state, message."""

    def __init__(self, status: int, code: str, sql_state: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.sql_state, self.message = status, code, sql_state, message


def compile_error(message: str) -> SqlApiError:
    """422, as Snowflake answers a statement it cannot compile."""
    return SqlApiError(422, "001003", "42000", f"SQL compilation error: {message}")


def bad_request(message: str) -> SqlApiError:
    """400: the request (its body, its fields) is not one the API takes."""
    return SqlApiError(400, "391900", "22000", message)


def error_body(e: SqlApiError, handle: str | None = None) -> dict[str, Any]:
    return {
        "code": e.code,
        "message": e.message,
        "sqlState": e.sql_state,
        "statementHandle": handle or str(uuid.uuid4()),
    }
