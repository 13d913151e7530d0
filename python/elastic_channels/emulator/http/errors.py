"""Replies and refusals, in the shape Snowflake's REST API documents for errors:
``{"code": "<Snowflake error code>", "message": "<why>", "request_id": "<id>"}``."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

__all__ = ["ApiError", "Reply"]


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    #: Close the connection after this reply (its request body was not read to the end).
    close: bool = False


class ApiError(Exception):
    """A refused request: HTTP status + Snowflake-style error code and message."""

    def __init__(self, status: int, code: str, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.close = status, code, message, close

    def reply(self, request_id: str = "") -> Reply:
        body = {"code": self.code, "message": self.message, "request_id": request_id}
        return Reply(self.status, msgspec.json.encode(body), close=self.close)
