"""A stand-in shaped like snowpipe-streaming 1.9.1's ``StreamingIngestElasticChannel``,
for the fast append's tests (tests/sdk): the real one needs a client and a server.

Moved from tests/sdk/test_fast_append.py unchanged.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

SALE_TIME_US = 1_700_000_000_123_456
#: The logger the fast append warns on.
LOGGER = "elastic_channels.sdk"


class FakeCallback:
    """``_MarkCompleteCallback``'s registration half."""

    def __init__(self) -> None:
        self.futures: dict[int, tuple[Future | None, object]] = {}
        self.removed: list[int] = []
        self.duplicate: Exception | None = None

    def register_future(self, future_id: int, future: Future | None, append_token: object):
        if self.duplicate is not None:
            return self.duplicate
        self.futures[future_id] = (future, append_token)
        return None

    def remove_future(self, future_id: int):
        self.removed.append(future_id)
        return self.futures.pop(future_id, None)


class FakeCore:
    """The FFI channel: records appends; checks the future was registered first."""

    def __init__(self, callback: FakeCallback, error: BaseException | None = None) -> None:
        self.callback = callback
        self.error = error
        self.appends: list[tuple[bytes, int, int, Any, Any]] = []
        self.invalidated: list[str] = []

    def append_rows(self, data, n_rows, future_id, offset_token, extra):
        assert future_id in self.callback.futures, "appended before registering its future"
        if self.error is not None:
            raise self.error
        self.appends.append((data, n_rows, future_id, offset_token, extra))

    def invalidate_channel(self, message: str) -> None:
        self.invalidated.append(message)


class FakeChannel:
    def __init__(self, *, error: BaseException | None = None, missing: str | None = None):
        self._callback = FakeCallback()
        self._channel = FakeCore(self._callback, error)
        self._future_id_lock = threading.Lock()
        self._next_future_id = 1
        self.public_appends: list[tuple[list[Any], object]] = []
        self.handlers: dict[str, Any] = {}
        if missing is not None:
            delattr(self, missing)

    def append_rows(self, rows: list[Any], append_token: object) -> None:
        self.public_appends.append((rows, append_token))

    def append_rows_with_wait(self, rows: list[Any], append_token: object) -> Future:
        self.public_appends.append((rows, append_token))
        future: Future = Future()
        future.set_result(None)
        return future

    def set_success_handler(self, handler) -> None:
        self.handlers["success"] = handler

    def set_error_handler(self, handler) -> None:
        self.handlers["error"] = handler


def batch(n: int, start_seq: int = 0) -> bytes:
    from elastic_channels.rows import ResortGenerator

    return ResortGenerator("fa", 7, start_seq=start_seq).next_batch(n, SALE_TIME_US)
