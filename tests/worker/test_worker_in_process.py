"""The worker's own accounting, in-process, with a fake session in place of the SDK.

Moved from test_e2e.py (unchanged): byte counts against what was appended, the sleep
quantum's bursts and rate, a reopen under SIGTERM, acks the SDK lost, waiting for
room in flight, and one failure reported for many batches.
"""

from __future__ import annotations

import io
import itertools
import signal
import time
from typing import Any

import msgspec
import pytest
from emulator_support import sdk_available

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


class _DoneAppender:
    """Answers every append at once (an ack, or ``fail``: the channel is dead) and keeps
    the NDJSON the SDK would have sent."""

    def __init__(self, mode: str | None, fail: BaseException | None = None) -> None:
        self.mode = mode or "ffi"
        self.sdk_cpu_s = 0.0
        self.sent: list[bytes] = []
        self._encoder = msgspec.json.Encoder()
        self._fail = fail
        self._answered: Any = None

    def set_ack_handler(self, answered) -> None:
        self._answered = answered

    def _done(self, token: object) -> None:
        if self._fail is None:
            self._answered((token,), None, 0)
        else:
            self._answered((token,), self._fail, 0)

    def append(self, data: bytes, n_rows: int, token: object) -> None:
        self.sent.append(data)
        self._done(token)

    def append_rows(self, rows: list, token: object) -> None:
        self.sent.append(self._encoder.encode_lines(rows))
        self._done(token)


class _SilentAppender(_DoneAppender):
    """Takes every append and never answers: an SDK that lost its acks."""

    def _done(self, token: object) -> None:
        pass


class _FakeSession:
    def __init__(self, mode: str | None, fail: BaseException | None = None) -> None:
        self.appender = _DoneAppender(mode, fail)

    def close(self, timeout_s: int) -> None:
        pass


def fake_worker(argv: list[str], factory) -> Any:
    """A Worker whose sessions come from ``factory(cfg, generation, append_mode)``."""
    from elastic_channels.worker.config import load_config
    from elastic_channels.worker.worker import Worker

    cfg = load_config(argv, {"HOSTNAME": "laptop"})
    return Worker(cfg, out=io.StringIO(), session_factory=factory)


@pytest.mark.parametrize(
    "mode",
    [
        "ffi",
        "raw",
        pytest.param(
            "rows",
        ),
    ],
)
def test_byte_counts_match_what_was_appended(mode):
    argv = ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "acct"]
    argv += ["--target-bps", "20e6", "--duration-seconds", "0.5", "--append-mode", mode]
    sessions: list[_FakeSession] = []

    def factory(cfg, generation, append_mode):
        sessions.append(_FakeSession(append_mode))
        return sessions[-1]

    summary = fake_worker(argv, factory).run()
    assert summary["unacked_rows"] == 0 and len(sessions) == 1
    sent = sessions[0].appender.sent
    assert summary["rows_sent"] == sum(d.count(b"\n") for d in sent)
    assert summary["bytes_sent"] == sum(map(len, sent))


@pytest.mark.parametrize("quantum_ms", [0, 300])
def test_the_sleep_quantum_groups_batches_into_bursts_at_the_same_rate(quantum_ms):
    argv = ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "burst"]
    argv += ["--target-bps", "10e6", "--batch-bytes", "1000000", "--duration-seconds", "1.5"]
    argv += ["--sleep-quantum-ms", str(quantum_ms)]
    times: list[float] = []

    def factory(cfg, generation, append_mode):
        session = _FakeSession(append_mode)
        append = session.appender.append

        def timed(data: bytes, n_rows: int, token: object) -> None:
            times.append(time.monotonic())
            append(data, n_rows, token)

        session.appender.append = timed  # type: ignore[method-assign]
        return session

    summary = fake_worker(argv, factory).run()
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # One ~1 MB batch per ~100 ms slot either way; the quantum only decides when to sleep.
    if quantum_ms == 0:  # (the first slot starts at once, so the first two go together)
        assert min(gaps[1:]) > 0.05, f"batches were not spaced out: {gaps}"
    else:
        assert min(gaps[1:]) < 0.02, f"no batches went back to back: {gaps}"
        assert max(gaps) > 0.25, f"no sleep of about the quantum: {gaps}"
    sent_mb = summary["bytes_sent"] / 1e6
    # A batch goes at the start of its slot (the first two at once). The quantum lets the
    # schedule run ahead, but the run stops once the bytes due by its end are out and
    # then waits for the end: so at most two batches over, and the run as long as asked.
    assert 10 * 1.5 * 0.8 <= sent_mb <= 10 * 1.5 + 2.2, sent_mb
    assert summary["seconds"] == pytest.approx(1.5, abs=0.1)


def test_a_short_run_with_the_default_quantum_averages_its_target():
    """3 s at 20 MB/s with 1 MB batches and the default 250 ms quantum: once sent a
    quantum ahead at the end (~8% over); now at most two batches over the 60 MB due."""
    argv = ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "short"]
    argv += ["--target-bps", "20e6", "--batch-bytes", "1000000", "--duration-seconds", "3"]
    summary = fake_worker(argv, lambda cfg, generation, mode: _FakeSession(mode)).run()
    assert summary["seconds"] == pytest.approx(3.0, abs=0.1)
    # (A stall on a busy machine may drop some of the backlog: the pacer catches up by
    # 0.25 s at most.)
    assert 20 * 3 * 0.9 <= summary["bytes_sent"] / 1e6 <= 20 * 3 + 2.2, summary["bytes_sent"]
    assert summary["mb_per_s"] <= 20 * 1.04, summary


def test_sigterm_while_reopening_a_dead_channel_still_resends():
    """SIGTERM lands while the worker replaces a channel that died: the drain should
    still reopen once and resend what was unacked, within the drain bound.

    Against the emulator (a 400, the reopen's hostname call delayed 3 s, SIGTERM during
    it, --drain-timeout-seconds 5) the worker made ~1700 reopen attempts and 540 SDK
    clients in 5 s, peaked at 620 MiB RSS and exited 1 with 11376 rows unacked."""
    worker: Any = None
    generations: list[int] = []

    def factory(cfg, generation, append_mode):
        generations.append(generation)
        if generation == 1:  # every append fails, as after a 400
            return _FakeSession(append_mode, fail=RuntimeError("HTTP 400: channel invalid"))
        if generation == 2:
            worker.request_stop(signal.SIGTERM)  # arrives while this channel opens
        time.sleep(0.2)  # opening a client takes a while
        return _FakeSession(append_mode)

    argv = ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "term"]
    argv += ["--target-bps", "5e6", "--duration-seconds", "30", "--drain-timeout-seconds", "2"]
    worker = fake_worker(argv, factory)
    summary = worker.run()
    assert len(generations) <= 3, f"{len(generations)} sessions opened after one channel died"
    assert summary["unacked_rows"] == 0
    assert summary["resent_batches"] > 0


def test_acks_lost_by_the_sdk_time_out_and_the_batches_are_resent():
    """An SDK that takes appends and never answers (it can lose acks): after
    --ack-timeout-seconds the worker reopens once and resends, and loses nothing."""
    generations: list[int] = []

    def factory(cfg, generation, append_mode):
        generations.append(generation)
        session = _FakeSession(append_mode)
        if generation == 1:
            session.appender = _SilentAppender(append_mode)
        return session

    argv = ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "lost"]
    argv += ["--target-bps", "5e6", "--duration-seconds", "3", "--ack-timeout-seconds", "1"]
    worker = fake_worker(argv, factory)
    summary = worker.run()
    assert generations == [1, 2]
    assert summary["unacked_rows"] == 0 and summary["rows_acked"] == summary["rows_sent"]
    assert summary["resent_batches"] > 0 and summary["errors"] == 1


def test_waiting_for_room_in_flight_ends_at_the_deadline():
    """No ack ever comes and in flight is full after two batches: the worker waits for
    room only until the run's end (not until the 30 s ack timeout), sends nothing
    more, and reports the unacked rows after a short drain."""
    sessions: list[Any] = []

    def factory(cfg, generation, append_mode):
        session = _FakeSession(append_mode)
        session.appender = _SilentAppender(append_mode)
        sessions.append(session)
        return session

    argv = ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "full"]
    argv += ["--target-bps", "20e6", "--batch-bytes", "1000000", "--duration-seconds", "1"]
    argv += ["--max-inflight-bytes", "2100000", "--ack-timeout-seconds", "30"]
    argv += ["--drain-timeout-seconds", "0.5"]
    started = time.monotonic()
    summary = fake_worker(argv, factory).run()
    assert time.monotonic() - started < 5
    assert summary["seconds"] == pytest.approx(1.0, abs=0.3)
    assert len(sessions) == 1 and len(sessions[0].appender.sent) == 2
    assert summary["rows_acked"] == 0 and summary["unacked_rows"] == summary["rows_sent"] > 0


class _GroupFailAppender(_DoneAppender):
    """Fails its first three appends together, in one report, as the SDK does when a
    request carrying them fails; keeps the report to send again later (stale)."""

    def __init__(self, mode: str | None) -> None:
        super().__init__(mode)
        self.tokens: list[object] = []
        self.error = RuntimeError("HTTP 400: channel invalid")

    def _done(self, token: object) -> None:
        self.tokens.append(token)
        if len(self.tokens) == 3:
            self._answered(tuple(self.tokens), self.error, 2)


def test_one_failure_of_many_batches_is_one_error_and_a_stale_one_is_ignored():
    sessions: list[Any] = []

    def factory(cfg, generation, append_mode):
        if generation == 1:
            session = _FakeSession(append_mode)
            session.appender = _GroupFailAppender(append_mode)
        else:
            session = _FakeSession(append_mode)
            first = sessions[0].appender
            append = session.appender.append

            def append_after_a_stale_failure(data: bytes, n_rows: int, token: object) -> None:
                if first.tokens:  # the dead channel reports the same failure once more,
                    first._answered(tuple(first.tokens), first.error, 0)
                    first.tokens.clear()  # and the new one pushes back once: the worker
                    raise RuntimeError('{"error_code":"ReceiverSaturated"}')  # takes acks
                append(data, n_rows, token)

            session.appender.append = append_after_a_stale_failure  # type: ignore[method-assign]
        sessions.append(session)
        return session

    argv = ["--account", "A", "--database", "D", "--schema", "S", "--run-id", "group"]
    argv += ["--target-bps", "20e6", "--duration-seconds", "0.5", "--sleep-quantum-ms", "0"]
    summary = fake_worker(argv, factory).run()
    assert len(sessions) == 2, "a stale failure from the replaced channel reopened it again"
    assert summary["errors"] == 1 and summary["channel_reopens"] == 1
    assert summary["resent_batches"] == 3 and summary["sdk_retries"] == 2
    assert summary["unacked_rows"] == 0 and summary["rows_acked"] == summary["rows_sent"]
