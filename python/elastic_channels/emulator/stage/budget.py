"""How many bytes of upload bodies the stage holds in memory at once.

A PUT's body is read whole (moto takes it whole), so each upload in progress holds its
size in memory, about three times over at its peak (the body, the object unframed,
moto's copy). Before reading a body the stage reserves a bound on its size from the
headers (``body_bound``) against one budget for all uploads; one that does not fit is
answered 503 ``SlowDown``, which the AWS SDKs retry with backoff, as they do S3's. SDK
files are a few MB, so the budget only ever refuses what a hostile or runaway client sends.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .errors import S3Error

__all__ = ["BODY_BUDGET_BYTES", "BodyBudget", "body_bound"]

#: Bytes of bodies held at once by default (two of the largest objects the stage takes).
BODY_BUDGET_BYTES = 512 << 20


def body_bound(environ: dict[str, Any], most: int) -> int:
    """The most bytes the request's body may be, from its headers: its Content-Length; for
    a chunked transfer of aws-chunked data, the decoded length plus the framing's share
    (a chunk header and CRLFs of at most ~100 bytes per chunk of 8 KiB or more, and the
    trailer); else ``most``. ``S3Error`` 400 if a length is not a number."""
    for name in ("CONTENT_LENGTH", "HTTP_X_AMZ_DECODED_CONTENT_LENGTH"):
        value = environ.get(name)
        if value and (not value.isdigit() or len(value) > 20):
            raise S3Error(400, "InvalidRequest", f"bad {name.lower()} {value[:20]!r}")
    if environ.get("CONTENT_LENGTH"):
        length = int(environ["CONTENT_LENGTH"])
        if length > most:
            raise S3Error(400, "EntityTooLarge", f"the stage takes objects up to {most} bytes")
        return length
    decoded = environ.get("HTTP_X_AMZ_DECODED_CONTENT_LENGTH")
    if decoded:
        return min(most, int(decoded) + int(decoded) // 64 + 4096)
    return most


class BodyBudget:
    """A count of body bytes reserved, at most ``total``; thread-safe."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._used = 0
        self._lock = threading.Lock()

    @contextmanager
    def reserve(self, size: int) -> Iterator[None]:
        """Hold ``size`` bytes of the budget for the block; 503 ``SlowDown`` if they do
        not fit now."""
        with self._lock:
            if self._used + size > self.total:
                raise S3Error(
                    503, "SlowDown", "too many uploads are in progress: reduce your request rate"
                )
            self._used += size
        try:
            yield
        finally:
            with self._lock:
                self._used -= size
