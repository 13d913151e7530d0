"""Append preserialized NDJSON to an elastic channel without encoding it again.

The SDK's public ``append_rows`` takes row objects and encodes them with msgspec
before calling its Rust core. Our rows already are NDJSON, so the fast path hands the
bytes straight to that core call, doing the SDK's own bookkeeping exactly as
``StreamingIngestElasticChannel._append_rows_internal`` (snowpipe-streaming 1.9.1)
does: a future id taken under the channel's lock, the future registered with the
channel's callback before the append, removed again if the append raises, and FFI
errors translated to the SDK's error types.

``append`` is fire-and-forget, as the SDK's public ``append_rows``: no ``Future`` per
append. Acks come back through the channel's public success and error handlers, routed
to one callback (``set_ack_handler``), once per acknowledged request with the tokens of
every append it carried: every append is answered once, or its append call raised. (One
SDK failure path reports nothing: an ack naming an id the SDK does not know fails the
client before its handlers run. The worker's ack timeout covers it.) The worker uses
this: no Future to make per batch and no thread to wake per ack.
``append_with_wait`` returns a Future as well, as ``append_rows_with_wait`` does.

That relies on private attributes. ``ElasticAppender`` checks the SDK's version and
every attribute it uses once, up front; if anything differs from what is tested it
warns once and falls back to the public API with one ``msgspec.Raw`` per row, which
``encode_lines`` copies verbatim, so the bytes on the wire are the same.

Modes:
  ``ffi``   private fast path (the default when the SDK is the tested one)
  ``raw``   public ``append_rows`` (``_with_wait``) with ``msgspec.Raw`` rows
  ``rows``  public ``append_rows`` with row objects (the plain Python path)
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Literal

import msgspec

log = logging.getLogger("elastic_channels.sdk")

#: SDK versions whose private append path this module was tested against.
TESTED_SDK_VERSIONS = frozenset({"1.9.1"})

Mode = Literal["ffi", "raw", "rows"]
#: Called with the tokens of appends answered together, the error (None: acked), and
#: how many times the SDK sent that request again before it was answered.
AckHandler = Callable[[tuple, "BaseException | None", int], None]


def sdk_version() -> str | None:
    try:
        from snowflake.ingest.streaming._version import __version__
    except ImportError:
        return None
    return __version__


def fast_path_problem(channel: Any) -> str | None:
    """Why the FFI fast path cannot be used on ``channel``, or None if it can."""
    version = sdk_version()
    if version not in TESTED_SDK_VERSIONS:
        return (
            f"snowpipe-streaming {version} is not a tested version ({sorted(TESTED_SDK_VERSIONS)})"
        )
    try:
        from snowflake.ingest.streaming._utils import _rethrow_ffi_errors  # noqa: F401
    except ImportError as e:
        return f"snowflake.ingest.streaming._utils._rethrow_ffi_errors is missing ({e})"
    needs = {
        "_channel": channel,
        "_future_id_lock": channel,
        "_next_future_id": channel,
        "_callback": channel,
    }
    for attr, owner in needs.items():
        if not hasattr(owner, attr):
            return f"the elastic channel has no {attr}"
    if not isinstance(channel._next_future_id, int):
        return "the elastic channel's _next_future_id is not an int"
    lock = channel._future_id_lock
    if not (hasattr(lock, "__enter__") and hasattr(lock, "__exit__")):
        return "the elastic channel's _future_id_lock is not a lock"
    for owner, name, params in (
        (channel._callback, "register_future", 3),
        (channel._callback, "remove_future", 1),
    ):
        fn = getattr(owner, name, None)
        if not callable(fn):
            return f"the channel callback has no {name}()"
        try:
            n = len(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        if n != params:
            return f"{name}() takes {n} arguments, expected {params}"
    for name in ("append_rows", "invalidate_channel"):
        if not callable(getattr(channel._channel, name, None)):
            return f"the FFI channel has no {name}()"
    return None


def _ffi_append(
    appender: ElasticAppender, data: bytes, n_rows: int, token: object, future: Future | None
) -> None:
    """The SDK's ``_append_rows_internal`` minus its encode step. With ``future`` None
    it is fire-and-forget, as the SDK's public ``append_rows``."""
    channel = appender.channel
    with channel._future_id_lock:
        future_id = channel._next_future_id
        channel._next_future_id = future_id + 1
        duplicate = channel._callback.register_future(future_id, future, token)
    if duplicate is not None:
        channel._channel.invalidate_channel(duplicate.message)
        raise duplicate
    t0 = time.thread_time()
    try:
        channel._channel.append_rows(data, n_rows, future_id, None, None)
    except BaseException:
        channel._callback.remove_future(future_id)
        raise
    finally:
        appender.sdk_cpu_s += time.thread_time() - t0


def _wrap_ffi_errors(fn: Callable[..., None]) -> Callable[..., None]:
    from snowflake.ingest.streaming._utils import _rethrow_ffi_errors

    return _rethrow_ffi_errors(fn)


def _checked(data: Any) -> bytes:
    if not isinstance(data, bytes):  # the FFI append takes bytes only
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    return data


def raw_rows(data: bytes) -> list[msgspec.Raw]:
    """One ``msgspec.Raw`` per NDJSON line; ``encode_lines`` of it gives ``data`` back."""
    if not data:
        return []
    if not data.endswith(b"\n"):
        raise ValueError("NDJSON data must end with a newline")
    return [msgspec.Raw(line) for line in data[:-1].split(b"\n")]


class ElasticAppender:
    """Appends NDJSON batches to one elastic channel, fire-and-forget; acks arrive
    through the callback given to ``set_ack_handler``."""

    def __init__(self, channel: Any, mode: Mode | None = None) -> None:
        for name in ("set_success_handler", "set_error_handler", "append_rows"):
            if not callable(getattr(channel, name, None)):
                raise RuntimeError(
                    f"the elastic channel has no public {name}() (snowpipe-streaming "
                    f"{sdk_version()}; this project needs {sorted(TESTED_SDK_VERSIONS)})"
                )
        self.channel = channel
        problem = fast_path_problem(channel)
        if mode is None:
            mode = "ffi" if problem is None else "raw"
            if problem is not None:
                log.warning("fast append unavailable, using the public API: %s", problem)
        elif mode == "ffi" and problem is not None:
            raise RuntimeError(f"fast append requested but unavailable: {problem}")
        self.mode: Mode = mode
        #: CPU this thread spent inside the SDK's own append calls (its FFI append; on
        #: the public paths, its encode too): the SDK's cost, though on our thread.
        self.sdk_cpu_s = 0.0
        self._ffi = _wrap_ffi_errors(_ffi_append) if mode == "ffi" else None

    def set_ack_handler(self, answered: AckHandler) -> None:
        """Route the channel's success and error handlers to ``answered(tokens, error,
        retries)``: once per acknowledged (error None) or failed request, on an SDK
        thread, so keep it cheap. ``retries`` > 0 means the SDK sent the request more
        than once, so its rows may have landed twice (0 where no request answered, as
        for an invalidation: the SDK's count means nothing there)."""

        def retries(detail: Any) -> int:
            return detail.retry_count if detail.request_id is not None else 0

        self.channel.set_success_handler(lambda d: answered(d.append_tokens, None, retries(d)))
        self.channel.set_error_handler(lambda d: answered(d.append_tokens, d.error, retries(d)))

    def append(self, data: bytes, n_rows: int, token: object) -> None:
        """Append ``n_rows`` rows of NDJSON ``data`` (bytes, newline-terminated),
        fire-and-forget; its ack reaches the handlers naming ``token`` (None: untracked)."""
        if self._ffi is not None:
            self._ffi(self, _checked(data), n_rows, token, None)
            return
        self.append_rows(self._raw_rows(data, n_rows), token)

    def append_with_wait(self, data: bytes, n_rows: int, token: object = None) -> Future:
        """As ``append``, but also returns a Future that completes with the ack (or fails
        with the error), as the SDK's ``append_rows_with_wait``. The handlers still fire
        for it if ``token`` is not None."""
        if self._ffi is not None:
            future: Future = Future()
            self._ffi(self, _checked(data), n_rows, token, future)
            return future
        return self._in_sdk(self.channel.append_rows_with_wait, self._raw_rows(data, n_rows), token)

    @staticmethod
    def _raw_rows(data: bytes, n_rows: int) -> list[msgspec.Raw]:
        rows = raw_rows(_checked(data))
        if len(rows) != n_rows:
            raise ValueError(f"n_rows={n_rows} but the data holds {len(rows)} lines")
        return rows

    def append_rows(self, rows: list[Any], token: object) -> None:
        """The public path: the SDK encodes ``rows`` (objects or ``msgspec.Raw``) itself."""
        self._in_sdk(self.channel.append_rows, rows, token)

    def _in_sdk(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)``, its thread CPU counted as the SDK's."""
        t0 = time.thread_time()
        try:
            return call(*args)
        finally:
            self.sdk_cpu_s += time.thread_time() - t0
