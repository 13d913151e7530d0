"""The stage's errors: ``StageError`` for callers, ``S3Error`` for S3 clients.

``S3Error`` renders the XML error body S3 sends (``<Error><Code>...``), which is what the
AWS SDKs parse into an error code (boto3's ``ClientError``, the Rust SDK's
``ErrorMetadata``) and base their retry decisions on.
"""

from __future__ import annotations

import uuid
from http import HTTPStatus
from xml.sax.saxutils import escape

__all__ = ["S3Error", "StageError", "code_for_status"]

#: The S3 error code sent with a status the stage chooses itself (faults).
_CODES = {
    400: "InvalidRequest",
    403: "AccessDenied",
    404: "NoSuchKey",
    409: "OperationAborted",
    429: "SlowDown",
    500: "InternalError",
    501: "NotImplemented",
    503: "SlowDown",
}


def code_for_status(status: int) -> str:
    """The S3 error code that usually comes with ``status``."""
    return _CODES.get(status, "InternalError" if status >= 500 else "InvalidRequest")


class StageError(ValueError):
    """A stage file name that is unsafe, outside the stage, or absent."""


class S3Error(Exception):
    """An S3-style error reply: HTTP status, S3 error code, message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def reply(self, resource: str, *, with_body: bool = True) -> tuple[str, list, bytes]:
        """(status line, headers, body) for a WSGI reply; no body for HEAD."""
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{escape(self.code)}</Code><Message>{escape(self.message)}</Message>"
            f"<Resource>{escape(resource)}</Resource>"
            f"<RequestId>{uuid.uuid4().hex}</RequestId></Error>"
        ).encode()
        headers = [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))]
        try:
            phrase = HTTPStatus(self.status).phrase
        except ValueError:
            phrase = self.code
        return f"{self.status} {phrase}", headers, body if with_body else b""
