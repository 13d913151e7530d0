"""fast_append: the SDK's bookkeeping around the FFI append and the checks that guard it.

The channels here are fakes shaped like snowpipe-streaming 1.9.1's elastic channel
(``fake_channel``; the real one needs a client and a server; the e2e tests drive that).
The version check and the FFI error translation are the real SDK's, so the SDK is
imported in this process (the ``sdk`` fixture of tests/sdk/conftest.py): ``SS_LOG_LEVEL``
is set first so its Rust core does not log INFO lines to stdout. The public fallback
and ``raw_rows``: test_fast_append_fallback.py.
"""

from __future__ import annotations

import inspect
import logging
import threading

import msgspec
import pytest
from emulator_support import sdk_available
from fake_channel import LOGGER, FakeChannel, FakeCore, batch

from elastic_channels.sdk import fast_append
from elastic_channels.sdk.fast_append import ElasticAppender, fast_path_problem

pytestmark = [
    pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed"),
    pytest.mark.usefixtures("sdk"),
]


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
