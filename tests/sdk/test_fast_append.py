"""fast_append: the SDK's bookkeeping around the FFI append, the checks that guard it,
the public fallback, and ``raw_rows``.

The channels here are fakes shaped like snowpipe-streaming 1.9.1's elastic channel (the
real one needs a client and a server; the e2e tests drive that). The version check and
the FFI error translation are the real SDK's, so the SDK is imported in this process:
``SS_LOG_LEVEL`` is set first so its Rust core does not log INFO lines to stdout.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
from concurrent.futures import Future
from typing import Any

import msgspec
import pytest
from emulator_support import sdk_available

from elastic_channels.sdk import fast_append
from elastic_channels.sdk.fast_append import ElasticAppender, fast_path_problem, raw_rows

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

SALE_TIME_US = 1_700_000_000_123_456
LOGGER = "elastic_channels.sdk"


@pytest.fixture(scope="module", autouse=True)
def sdk():
    """The real SDK, imported quietly: its log settings are read at the first import
    only, so they are set for that moment and the environment is restored after."""
    with pytest.MonkeyPatch.context() as mp:
        for var, value in (("SS_LOG_LEVEL", "warn"), ("SS_LOG_TARGET", "stderr")):
            if var not in os.environ:
                mp.setenv(var, value)
        import snowflake.ingest.streaming as sdk

    return sdk


# --- a fake shaped like StreamingIngestElasticChannel (1.9.1) -----------------------


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


# --- the fast path -------------------------------------------------------------------


def test_the_tested_sdk_is_installed():
    assert fast_append.sdk_version() in fast_append.TESTED_SDK_VERSIONS


def test_a_channel_shaped_like_the_sdks_gets_the_ffi_path(caplog):
    channel = FakeChannel()
    assert fast_path_problem(channel) is None
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        appender = ElasticAppender(channel)
    assert appender.mode == "ffi"
    assert not caplog.records

    data = batch(3)
    assert appender.append(data, 3, "token-a") is None
    appender.append(batch(2, 3), 2, "token-b")
    core, callback = channel._channel, channel._callback
    # Exactly the SDK's call: the bytes as given, the row count, the next future id.
    assert core.appends[0] == (data, 3, 1, None, None)
    assert [a[2] for a in core.appends] == [1, 2]
    assert channel._next_future_id == 3
    # Registered fire-and-forget (no future), with the caller's token.
    assert callback.futures[1] == (None, "token-a")
    assert callback.futures[2] == (None, "token-b")
    assert not channel.public_appends


def test_a_failed_ffi_append_unregisters_and_raises_the_sdks_error():
    from snowflake.ingest.streaming import StreamingIngestError

    from elastic_channels.sdk.session import is_back_pressure

    saturated = RuntimeError(
        '{"error_code":"ReceiverSaturated","message":"too much in flight",'
        '"http_status_code":429,"http_status_name":"Too Many Requests"}'
    )
    channel = FakeChannel(error=saturated)
    appender = ElasticAppender(channel)
    with pytest.raises(StreamingIngestError) as info:
        appender.append(batch(1), 1, None)
    assert channel._callback.removed == [1] and not channel._callback.futures
    assert is_back_pressure(info.value), "the worker would not see back-pressure"
    # A later append takes a fresh id: no id is reused after a failure.
    channel._channel.error = None
    appender.append(batch(1), 1, None)
    assert channel._channel.appends[0][2] == 2


def test_a_duplicate_registration_invalidates_the_channel():
    channel = FakeChannel()
    appender = ElasticAppender(channel)
    channel._callback.duplicate = ValueError("duplicate future id 1")
    channel._callback.duplicate.message = "duplicate future id 1"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="duplicate future id"):
        appender.append(batch(1), 1, "t")
    assert channel._channel.invalidated == ["duplicate future id 1"]
    assert not channel._channel.appends


def test_append_takes_bytes_only():
    appender = ElasticAppender(FakeChannel())
    for bad in (bytearray(batch(1)), memoryview(batch(1)), batch(1).decode()):
        with pytest.raises(TypeError, match="data must be bytes"):
            appender.append(bad, 1, None)  # type: ignore[arg-type]


def test_the_real_sdk_still_appends_the_way_the_fast_path_copies():
    """The SDK's own append path uses the names and call shape ``_ffi_append`` mirrors."""
    from snowflake.ingest.streaming.streaming_ingest_elastic_channel import (
        StreamingIngestElasticChannel,
    )

    init = inspect.getsource(StreamingIngestElasticChannel.__init__)
    for attr in ("_channel", "_future_id_lock", "_next_future_id", "_callback"):
        assert f"self.{attr} =" in init, attr
    body = inspect.getsource(StreamingIngestElasticChannel._append_rows_internal)
    for step in (
        "with self._future_id_lock:",
        "self._next_future_id += 1",
        "self._callback.register_future(future_id, future, append_token)",
        "self._channel.invalidate_channel(duplicate.message)",
        "self._channel.append_rows(json_bytes, len(rows), future_id, None, None)",
        "self._callback.remove_future(future_id)",
    ):
        assert step in body, f"the SDK's append no longer does: {step}"


class _PendingCheckingCore(FakeCore):
    """The FFI channel over the SDK's real callback: appends after registration only."""

    def append_rows(self, data, n_rows, future_id, offset_token, extra):
        assert future_id in self.callback._pending_appends, "appended before registering"
        self.appends.append((data, n_rows, future_id, offset_token, extra))


def sdk_channel():
    """The SDK's own elastic channel class and ack callback around a recording FFI core:
    everything but the Rust core and the server is the real 1.9.1 code."""
    from snowflake.ingest.streaming._mark_complete_callback import MarkCompleteCallback
    from snowflake.ingest.streaming.streaming_ingest_elastic_channel import (
        StreamingIngestElasticChannel,
    )

    channel = object.__new__(StreamingIngestElasticChannel)
    channel._callback = MarkCompleteCallback("test-channel")
    channel._channel = _PendingCheckingCore(channel._callback)
    channel._future_id_lock = threading.Lock()
    channel._next_future_id = 1
    return channel


class Answers:
    """What an appender's ack handler was told: acked and failed tokens, and retries."""

    def __init__(self, appender: ElasticAppender) -> None:
        self.acked: list[tuple] = []
        self.failed: list[tuple[tuple, BaseException]] = []
        self.retries: list[int] = []
        appender.set_ack_handler(self)

    def __call__(self, tokens: tuple, error: BaseException | None, retries: int) -> None:
        if error is None:
            self.acked.append(tokens)
        else:
            self.failed.append((tokens, error))
        self.retries.append(retries)


def test_acks_and_failures_reach_the_handlers_through_the_sdks_callback():
    """Fire-and-forget appends are acked through the SDK's success and error handlers:
    once per acknowledged request with all its tokens, every append exactly once."""
    from snowflake.ingest.streaming import StreamingIngestError

    channel = sdk_channel()
    appender = ElasticAppender(channel)
    assert appender.mode == "ffi"
    answers = Answers(appender)
    acked, failed, retries = answers.acked, answers.failed, answers.retries
    for i in range(5):
        appender.append(batch(1, i), 1, ("batch", i))
    assert [a[2] for a in channel._channel.appends] == [1, 2, 3, 4, 5]

    callback = channel._callback
    callback.mark_complete([1, 2], True, None, None, None, None, "req-1", 2)
    assert acked == [(("batch", 0), ("batch", 1))] and not failed
    assert retries == [2], "the SDK sent that request three times: rows may be doubled"

    callback.mark_complete([3, 3], False, "SfApiUserError", "bad row", 400, "Bad Request", "r", 1)
    [(tokens, error)] = failed
    assert tokens == (("batch", 2),)
    assert isinstance(error, StreamingIngestError) and "bad row" in str(error)

    # A channel invalidated for good fails everything still pending, in one call.
    callback.invalidate_all_pending_futures(False, None, "channel gone", 500, "ISE")
    assert failed[1][0] == (("batch", 3), ("batch", 4))
    assert "channel gone" in str(failed[1][1])
    assert retries == [2, 1, 0], "an invalidation belongs to no request: no retries"
    assert len(acked) == 1 and not callback._pending_appends


def test_append_with_wait_returns_the_registered_future_and_the_handlers_fire_too():
    channel = sdk_channel()
    appender = ElasticAppender(channel)
    answers = Answers(appender)
    ok = appender.append_with_wait(batch(2), 2, "ok")
    bad = appender.append_with_wait(batch(1, 2), 1, "bad")
    assert channel._callback._pending_appends[1].future is ok
    assert not ok.done() and not bad.done()

    channel._callback.mark_complete([1, 1], True, None, None, None, None, "req-1", 0)
    assert ok.result(timeout=0) is None and answers.acked == [("ok",)]
    channel._callback.mark_complete([2, 2], False, "SfApiUserError", "nope", 400, "BR", "r", 0)
    assert "nope" in str(bad.exception(timeout=0))
    assert [tokens for tokens, _ in answers.failed] == [("bad",)]


def test_append_with_wait_on_the_public_path_sends_the_same_bytes():
    channel = FakeChannel()
    appender = ElasticAppender(channel, "raw")
    data = batch(20)
    future = appender.append_with_wait(data, 20, "tok")
    assert future.done()
    [(rows, token)] = channel.public_appends
    assert token == "tok" and msgspec.json.Encoder().encode_lines(rows) == data
    with pytest.raises(ValueError, match="n_rows=21"):
        appender.append_with_wait(data, 21)
    with pytest.raises(TypeError, match="data must be bytes"):
        appender.append_with_wait(bytearray(data), 20)  # type: ignore[arg-type]


def test_an_append_that_raises_is_never_acked_later():
    channel = sdk_channel()
    appender = ElasticAppender(channel)
    answers = Answers(appender)
    channel._channel.append_rows = lambda *a: (_ for _ in ()).throw(RuntimeError("boom"))
    with pytest.raises(Exception, match="boom"):
        appender.append(batch(1), 1, "lost-at-the-call")
    channel._callback.invalidate_all_pending_futures(False, None, "gone", 500, "ISE")
    assert not answers.acked and not answers.failed, "the caller already knows: it raised"


def test_a_channel_without_the_public_ack_handlers_is_refused():
    channel = FakeChannel()
    channel.set_success_handler = None  # type: ignore[assignment]
    with pytest.raises(RuntimeError, match=r"no public set_success_handler\(\)"):
        ElasticAppender(channel)


# --- falling back ----------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["_future_id_lock", "_next_future_id", "_callback", "_channel"])
def test_missing_private_attributes_fall_back_to_raw_with_one_warning(caplog, missing):
    channel = FakeChannel(missing=missing)
    problem = fast_path_problem(channel)
    assert problem is not None and missing in problem

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        appender = ElasticAppender(channel)
    assert appender.mode == "raw"
    warnings = [r for r in caplog.records if r.name == LOGGER]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert missing in warnings[0].getMessage()

    # The public path carries the same bytes: one msgspec.Raw per line.
    data = batch(50)
    appender.append(data, 50, "tok")
    [(rows, token)] = channel.public_appends
    assert token == "tok" and all(isinstance(r, msgspec.Raw) for r in rows)
    assert msgspec.json.Encoder().encode_lines(rows) == data
    with pytest.raises(ValueError, match="n_rows=49"):
        appender.append(data, 49, None)
    # Warned once for the appender, not once per append.
    assert len([r for r in caplog.records if r.name == LOGGER]) == 1


def test_requesting_ffi_without_its_attributes_raises():
    with pytest.raises(
        RuntimeError, match=r"fast append requested but unavailable.*_future_id_lock"
    ):
        ElasticAppender(FakeChannel(missing="_future_id_lock"), "ffi")


@pytest.mark.parametrize(
    ("breakage", "expected"),
    [
        (lambda ch: setattr(ch, "_next_future_id", "1"), "_next_future_id is not an int"),
        (lambda ch: setattr(ch, "_future_id_lock", object()), "_future_id_lock is not a lock"),
        (
            lambda ch: setattr(ch._callback, "register_future", lambda a, b: None),
            "register_future() takes 2 arguments, expected 3",
        ),
        (lambda ch: setattr(ch._callback, "remove_future", None), "has no remove_future()"),
        (lambda ch: setattr(ch, "_channel", object()), "FFI channel has no append_rows()"),
    ],
    ids=["id-not-int", "lock-not-lock", "register-arity", "no-remove", "no-ffi-append"],
)
def test_changed_private_attributes_are_named(breakage, expected):
    channel = FakeChannel()
    breakage(channel)
    problem = fast_path_problem(channel)
    assert problem is not None and expected in problem


def test_an_untested_sdk_version_falls_back(monkeypatch, caplog):
    monkeypatch.setattr(fast_append, "sdk_version", lambda: "1.10.0")
    channel = FakeChannel()
    assert "1.10.0 is not a tested version" in fast_path_problem(channel)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert ElasticAppender(channel).mode == "raw"
    assert len(caplog.records) == 1
    with pytest.raises(RuntimeError, match=r"1\.10\.0"):
        ElasticAppender(channel, "ffi")


def test_choosing_a_public_path_does_not_warn(caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        raw = ElasticAppender(FakeChannel(), "raw")
        rows = ElasticAppender(FakeChannel(), "rows")
    assert (raw.mode, rows.mode) == ("raw", "rows")
    assert not caplog.records
    objects = [{"A": 1}, {"A": 2}]
    rows.append_rows(objects, "t")
    assert rows.channel.public_appends == [(objects, "t")]


# --- raw_rows ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 1000])
def test_raw_rows_round_trips_generated_batches(backend, n):
    data = backend("raw", 3, start_seq=10**9).next_batch(n, SALE_TIME_US)
    rows = raw_rows(data)
    assert len(rows) == n
    assert msgspec.json.Encoder().encode_lines(rows) == data


def test_raw_rows_of_nothing_is_nothing():
    assert raw_rows(b"") == []
    assert msgspec.json.Encoder().encode_lines(raw_rows(b"")) == b""


@pytest.mark.parametrize("data", [b'{"A":1}', b'{"A":1}\n{"A":2}'])
def test_raw_rows_wants_a_trailing_newline(data):
    with pytest.raises(ValueError, match="must end with a newline"):
        raw_rows(data)
