"""fast_append falling back to the public API when its private attributes or the SDK's
version differ from what is tested, and ``raw_rows`` (the fallback's rows).

Moved from test_fast_append.py unchanged; the channels are ``fake_channel``'s.
"""

from __future__ import annotations

import logging

import msgspec
import pytest
from emulator_support import sdk_available
from fake_channel import LOGGER, SALE_TIME_US, FakeChannel, batch

from elastic_channels.sdk import fast_append
from elastic_channels.sdk.fast_append import ElasticAppender, fast_path_problem, raw_rows

pytestmark = [
    pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed"),
    pytest.mark.usefixtures("sdk"),
]


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
