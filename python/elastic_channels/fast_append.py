"""Append preserialized NDJSON to an elastic channel without encoding it again.

The SDK's public ``append_rows`` takes row objects and encodes them with msgspec
before calling its Rust core. Our rows already are NDJSON, so the fast path hands the
bytes straight to that core call, doing the SDK's own bookkeeping exactly as
``StreamingIngestElasticChannel._append_rows_internal`` (snowpipe-streaming 1.9.1)
does: a future id taken under the channel's lock, the future registered with the
channel's callback before the append, removed again if the append raises, and FFI
errors translated to the SDK's error types.

That relies on private attributes. ``ElasticAppender`` checks the SDK's version and
every attribute it uses once, up front; if anything differs from what is tested it
warns once and falls back to the public API with one ``msgspec.Raw`` per row, which
``encode_lines`` copies verbatim, so the bytes on the wire are the same.

Modes:
  ``ffi``   private fast path (the default when the SDK is the tested one)
  ``raw``   public ``append_rows_with_wait`` with ``msgspec.Raw`` rows
  ``rows``  public ``append_rows_with_wait`` with row objects (the plain Python path)
"""

from __future__ import annotations

import inspect
import logging
import time
from concurrent.futures import Future
from typing import Any, Callable, Literal

import msgspec

log = logging.getLogger("elastic_channels.fast_append")

#: SDK versions whose private append path this module was tested against.
TESTED_SDK_VERSIONS = frozenset({"1.9.1"})

Mode = Literal["ffi", "raw", "rows"]


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


def _ffi_append(appender: ElasticAppender, data: bytes, n_rows: int, token: object) -> Future:
    """The SDK's ``_append_rows_internal`` minus its encode step."""
    channel = appender.channel
    future: Future = Future()
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
    return future


def _wrap_ffi_errors(fn: Callable[..., Future]) -> Callable[..., Future]:
    from snowflake.ingest.streaming._utils import _rethrow_ffi_errors

    return _rethrow_ffi_errors(fn)


def raw_rows(data: bytes) -> list[msgspec.Raw]:
    """One ``msgspec.Raw`` per NDJSON line; ``encode_lines`` of it gives ``data`` back."""
    if not data:
        return []
    if not data.endswith(b"\n"):
        raise ValueError("NDJSON data must end with a newline")
    return [msgspec.Raw(line) for line in data[:-1].split(b"\n")]


class ElasticAppender:
    """Appends NDJSON batches to one elastic channel; each append returns a Future."""

    def __init__(self, channel: Any, mode: Mode | None = None) -> None:
        self.channel = channel
        problem = fast_path_problem(channel)
        if mode is None:
            mode = "ffi" if problem is None else "raw"
            if problem is not None:
                log.warning("fast append unavailable, using the public API: %s", problem)
        elif mode == "ffi" and problem is not None:
            raise RuntimeError(f"fast append requested but unavailable: {problem}")
        self.mode: Mode = mode
        #: CPU this thread spent inside the SDK's own append call (ffi mode): the SDK's
        #: cost, not ours, though it runs on our thread.
        self.sdk_cpu_s = 0.0
        self._ffi = _wrap_ffi_errors(_ffi_append) if mode == "ffi" else None

    def append(self, data: bytes, n_rows: int, token: object = None) -> Future:
        """Append ``n_rows`` rows of NDJSON ``data`` (bytes, newline-terminated)."""
        if not isinstance(data, bytes):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        if self._ffi is not None:
            return self._ffi(self, data, n_rows, token)
        rows = raw_rows(data)
        if len(rows) != n_rows:
            raise ValueError(f"n_rows={n_rows} but the data holds {len(rows)} lines")
        return self.channel.append_rows_with_wait(rows, token)

    def append_rows(self, rows: list[Any], token: object = None) -> Future:
        """The plain public path: the SDK encodes ``rows`` itself."""
        return self.channel.append_rows_with_wait(rows, token)
