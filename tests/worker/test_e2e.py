"""The worker end to end: the real SDK, over HTTPS, into the emulator, as a child process.

Each test runs ``python -m elastic_channels.k8s_worker`` against one emulator shared by
the module (each test has its own run id; emulator counters are compared before and
after), then checks what landed from the table itself: no seq in
``[first_seq, next_seq)`` missing, and for clean runs the exact bytes, regenerated batch
by batch from the landed rows' stamps.

Byte accounting: the SDK sends every appended chunk followed by one ``\\n``, and the
emulator's ``bytes_raw`` counts uncompressed request bodies. So for a run in which each
batch was appended once, ``bytes_raw == NDJSON bytes generated + number of appends``.
"""

from __future__ import annotations

import decimal
import io
import itertools
import json
import signal
import socket
import time
from typing import Any

import msgspec
import pytest
from emulator_support import make_emulator, sdk_available
from worker_support import (
    ISSUE_SUMMARY_KEYS,
    NO_NATIVE_BOOTSTRAP,
    SUMMARY_KEYS,
    WINDOW_KEYS,
    WorkerRun,
    counters_since,
    elastic_native,
    emulator_counters,
    expected_raw_bytes,
    landed,
    regenerate,
    run_worker,
    worker_args,
    worker_env,
)

from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    emulator = make_emulator(tmp_path_factory.mktemp("worker-e2e"))
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture
def profile(emu, tmp_path):
    """The emulator's info JSON, as the worker's ``--profile``; no faults left over."""
    emu.faults.clear()
    path = tmp_path / "emulator-info.json"
    path.write_text(json.dumps(emu.info()))
    yield path
    emu.faults.clear()


def check_complete(result, run_id: str, worker_id: int) -> dict:
    """Exit 0, well-formed window lines, a complete summary whose counters agree."""
    assert result.returncode == 0, str(result)
    s = result.summary
    assert SUMMARY_KEYS <= s.keys(), f"summary lacks {sorted(SUMMARY_KEYS - s.keys())}"
    assert "error" not in s, s
    assert (s["run_id"], s["worker_id"]) == (run_id, worker_id)
    assert s["unacked_rows"] == 0
    assert s["rows_sent"] == s["rows_acked"] == s["next_seq"] - s["first_seq"] > 0
    assert s["ack_p50_ms"] is not None and s["ack_p50_ms"] <= s["ack_p99_ms"]
    # CPU: the worker thread's run holds the SDK's append calls and its own work, of
    # which generating rows and the append bookkeeping are parts; the process as a
    # whole spent more than either.
    assert 0 < s["sdk_append_cpu_s"] < s["loop_cpu_s"] <= s["cpu_s"]
    assert 0 < s["gen_cpu_s"] and 0 <= s["append_own_cpu_s"]
    assert s["gen_cpu_s"] + s["append_own_cpu_s"] <= s["own_cpu_s"] + 0.002

    windows = result.windows
    assert windows, "no window lines"
    assert len(windows) + 1 == len(result.records), "stdout holds something else"
    for w in windows:
        assert WINDOW_KEYS <= w.keys(), f"window lacks {sorted(WINDOW_KEYS - w.keys())}: {w}"
        assert (w["run_id"], w["worker_id"]) == (run_id, worker_id)
        assert w["end"] >= w["start"]
        assert w["rss_mib"] > 0 and w["cpu_pct"] >= 0
        assert w["in_flight_batches"] >= 0 and w["in_flight_bytes"] >= 0
    for a, b in itertools.pairwise(windows):
        assert b["start"] >= a["end"] - 0.05, "windows overlap"
    assert sum(w["rows"] for w in windows) == s["rows_sent"]
    assert sum(w["bytes"] for w in windows) == s["bytes_sent"]
    assert sum(w["acked_rows"] for w in windows) == s["rows_acked"]
    assert sum(w["resent_batches"] for w in windows) == s["resent_batches"]
    last = windows[-1]
    assert (last["in_flight_batches"], last["in_flight_bytes"]) == (0, 0)
    return s


def check_nothing_lost(emu, run_id: str, worker_id: int, summary: dict):
    got = landed(emu, run_id, worker_id, summary)
    lost = got.lost()
    assert not lost, f"{len(lost)} rows lost, e.g. seqs {lost[:10]}"
    assert not got.outside(), f"rows outside [first_seq, next_seq): {got.outside()[:3]}"
    return got


#: The encoder a worker picks by default here (the native one whenever it is built).
DEFAULT_ENCODER = "python" if elastic_native is None else "native"

MODES = [
    # (id, duration s, extra flags, extra env, append_mode, encoder)
    ("ffi", 6.0, ["--append-mode", "ffi"], {}, "ffi", DEFAULT_ENCODER),
    ("raw", 3.0, ["--append-mode", "raw"], {}, "raw", DEFAULT_ENCODER),
    ("rows", 3.0, [], {"ELASTIC_FAST_JSON_ENCODE": "false"}, "rows", "python"),
]


@pytest.mark.parametrize(
    ("duration_s", "flags", "env", "mode", "encoder"),
    [m[1:] for m in MODES],
    ids=[m[0] for m in MODES],
)
def test_one_worker_lands_every_row_and_byte(
    emu, profile, tmp_path, duration_s, flags, env, mode, encoder
):
    target = 20e6
    run_id, worker_id = f"e2e{mode}", 3
    before = emulator_counters(emu)
    args = worker_args(
        profile, run_id, worker_id=worker_id, target_bps=target, duration_s=duration_s, extra=flags
    )
    result = run_worker(args, tmp_path, timeout_s=duration_s + 45, env=worker_env(**env))
    s = check_complete(result, run_id, worker_id)
    assert (s["append_mode"], s["encoder"]) == (mode, encoder)
    assert (s["resent_batches"], s["channel_reopens"]) == (0, 0)
    # The emulator answers every request the SDK makes in a form it accepts: no
    # warnings (telemetry replies once lacked the "data" field the SDK requires).
    assert " WARN " not in result.stderr, result.stderr[-2000:]
    assert s["seconds"] == pytest.approx(duration_s, abs=1.0)
    assert "ReceiverSaturated" not in result.stderr
    assert s["mb_per_s"] <= target / 1e6 * 1.05, "paced above the target"
    if mode == "ffi":  # the cheap path must hold the rate even on a busy box
        assert s["mb_per_s"] >= target / 1e6 * 0.9, "paced well below the target"

    got = check_nothing_lost(emu, run_id, worker_id, s)
    assert got.duplicates == 0
    appends = sum(w["acks"] for w in result.windows)
    assert len(got.batches) == appends, "batches landed != appends acked"
    generated, n = expected_raw_bytes(run_id, worker_id, got)
    delta = counters_since(emu, before)
    assert delta["rows_landed"] == s["rows_sent"]
    # The SDK adds one "\n" per appended chunk; nothing else may differ.
    assert delta["bytes_raw"] == generated + n, (delta, generated, n)
    # Exact on every path, the rows path included (where the SDK does the encoding).
    assert s["bytes_sent"] == generated


def test_faults_mid_run_lose_nothing(emu, profile, tmp_path):
    """503s and a dropped connection (the SDK retries), then a 400 that kills the
    channel: the worker reopens, resends what was unacked, and exits 0."""
    run_id, worker_id = "faults", 1
    max_inflight, batch_bytes = 8_000_000, 1_000_000
    args = worker_args(
        profile, run_id, worker_id=worker_id, target_bps=5e6, duration_s=8, retry_backoff_s=10
    )
    args += ["--max-inflight-bytes", str(max_inflight), "--batch-bytes", str(batch_bytes)]
    with WorkerRun(args, worker_env(), tmp_path / "worker.stderr") as run:
        run.wait_for(lambda r: r.get("acks", 0) > 0, timeout_s=30)  # acks flow: now break it
        emu.faults.add("rows", "status", status=503, count=2)
        emu.faults.add("rows", "drop", count=1)
        emu.faults.add("rows", "status", status=400, count=1)
        result = run.finish(60)
    fired = emu.stats_snapshot()["faults_fired"]
    assert emu.faults.pending() == 0, f"not every fault fired: {emu.faults.snapshot()}"
    assert fired.get("rows:status", 0) >= 3 and fired.get("rows:drop", 0) >= 1, fired

    s = check_complete(result, run_id, worker_id)
    assert s["resent_batches"] > 0
    assert s["channel_reopens"] >= 1
    # Two 503s and a drop: attempts the SDK made again, reported with the answer (one
    # answered request at least; a retried one that the 400 then fails carries none).
    assert s["sdk_retries"] >= 1, s["sdk_retries"]
    assert sum(w["sdk_retries"] for w in result.windows) == s["sdk_retries"]
    assert "channel lost" in result.stderr
    # While acks stalled, in-flight data stayed bounded (one batch over at most, appended
    # while the channel was dead) and the SDK's own limit was never hit.
    assert max(w["in_flight_bytes"] for w in result.windows) <= max_inflight + 1.1 * batch_bytes
    assert "ReceiverSaturated" not in result.stderr
    check_nothing_lost(emu, run_id, worker_id, s)


def test_sigterm_mid_run_drains_and_summarises(emu, profile, tmp_path):
    run_id, worker_id = "sigterm", 2
    args = worker_args(profile, run_id, worker_id=worker_id, target_bps=10e6, duration_s=120)
    with WorkerRun(args, worker_env(), tmp_path / "worker.stderr") as run:
        run.wait_for(lambda r: r.get("type") == "window" and r["acks"] > 0, timeout_s=30)
        run.wait_for(lambda r: r.get("type") == "window", timeout_s=10)
        signalled = time.monotonic()
        run.signal(signal.SIGTERM)
        result = run.finish(40)
    assert time.monotonic() - signalled < 30, "draining after SIGTERM took too long"
    s = check_complete(result, run_id, worker_id)
    assert s["seconds"] < 60, "the worker kept sending after SIGTERM"
    assert s["rows_sent"] == s["rows_acked"]
    assert "signal 15" in result.stderr
    got = check_nothing_lost(emu, run_id, worker_id, s)
    assert got.rows == s["rows_sent"]


def test_without_the_native_module_the_python_encoder_lands_the_same_bytes(emu, profile, tmp_path):
    run_id, worker_id = "nonative", 5
    before = emulator_counters(emu)
    args = worker_args(profile, run_id, worker_id=worker_id, target_bps=5e6, duration_s=3)
    result = run_worker(args, tmp_path, timeout_s=45, python_args=["-c", NO_NATIVE_BOOTSTRAP])
    s = check_complete(result, run_id, worker_id)
    assert s["encoder"] == "python", s
    assert s["append_mode"] == "ffi"  # the fast append does not need the native module
    assert "elastic_native is not installed" in result.stderr

    got = check_nothing_lost(emu, run_id, worker_id, s)
    assert got.duplicates == 0
    generated, n = expected_raw_bytes(run_id, worker_id, got)  # native-made when built
    assert counters_since(emu, before)["bytes_raw"] == generated + n
    assert s["bytes_sent"] == generated

    # Every value as generated (the table holds the values, so compare those too).
    names = ", ".join(f'"{c}"' for c, _ in COLUMNS)
    table = {
        r[0]: r for r in emu.query(f"SELECT {names} FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")
    }
    cents = decimal.Decimal("0.01")
    for b in got.batches:
        start, n_rows = b.first_seq, b.last_seq - b.first_seq + 1
        gen = ResortGenerator(run_id, worker_id, start_seq=start)
        for r in gen.next_rows(n_rows, b.sale_time_us):
            want = [getattr(r, c) for c, _ in COLUMNS]
            want[7] = decimal.Decimal(str(r.UNIT_PRICE)).quantize(cents)
            want[8] = decimal.Decimal(str(r.AMOUNT)).quantize(cents)
            assert table[r.TXID] == tuple(want), r.TXID
        assert regenerate(run_id, worker_id, b) == gen_bytes(run_id, worker_id, b)


def gen_bytes(run_id: str, worker_id: int, b) -> bytes:
    """The pure-Python generator's NDJSON for a landed batch (byte-parity oracle)."""
    gen = ResortGenerator(run_id, worker_id, start_seq=b.first_seq)
    return gen.next_batch(b.last_seq - b.first_seq + 1, b.sale_time_us)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_gives_up_after_the_connect_timeout(emu, tmp_path):
    info = emu.info()
    info["properties"]["port"] = free_port()  # nothing listens there
    dead = tmp_path / "dead.json"
    dead.write_text(json.dumps(info))
    args = worker_args(dead, "deadport", target_bps=1e6, duration_s=5)
    args += ["--connect-timeout-seconds", "3"]  # the last one wins
    started = time.monotonic()
    result = run_worker(args, tmp_path, timeout_s=30)
    assert time.monotonic() - started < 10, f"took too long to give up\n{result}"
    assert result.returncode == 1, str(result)
    s = result.summary
    assert "error" in s and "3 s" in s["error"], s
    assert ISSUE_SUMMARY_KEYS <= s.keys()
    assert (s["rows_sent"], s["unacked_rows"]) == (0, 0)


def test_a_server_that_never_acks_cannot_hang_the_worker(emu, profile, tmp_path):
    """Every append answered 503: the SDK gives up after --retry-backoff-seconds, the
    worker reopens and resends until --drain-timeout-seconds, then reports the unacked
    rows and exits 1."""
    emu.faults.add("rows", "status", status=503, count=None)
    args = worker_args(profile, "stuck", target_bps=2e6, duration_s=2, retry_backoff_s=2)
    args += ["--drain-timeout-seconds", "5"]
    started = time.monotonic()
    result = run_worker(args, tmp_path, timeout_s=60)
    assert time.monotonic() - started < 30, f"took too long to give up\n{result}"
    assert result.returncode == 1, str(result)
    s = result.summary
    assert s["unacked_rows"] > 0 and s["rows_acked"] < s["rows_sent"]
    assert s["unacked_rows"] == s["rows_sent"] - s["rows_acked"]


def test_windows_keep_coming_while_acks_stall(emu, profile, tmp_path):
    emu.faults.add("rows", "status", status=503, count=None)
    args = worker_args(profile, "stall", target_bps=2e6, duration_s=1, retry_backoff_s=30)
    args += ["--drain-timeout-seconds", "3"]
    result = run_worker(args, tmp_path, timeout_s=60)
    assert result.returncode == 1, str(result)
    lengths = [round(w["end"] - w["start"], 2) for w in result.windows]
    assert max(lengths) <= 1.5, f"window lengths {lengths} with --window-seconds 1"


def test_sigterm_while_connecting_exits_promptly(emu, tmp_path):
    info = emu.info()
    info["properties"]["port"] = free_port()
    dead = tmp_path / "dead.json"
    dead.write_text(json.dumps(info))
    args = worker_args(dead, "termconnect", target_bps=1e6, duration_s=5)
    args += ["--connect-timeout-seconds", "120"]
    with WorkerRun(args, worker_env(), tmp_path / "worker.stderr") as run:
        # The encoder's log line comes just before the signal handlers go in and the
        # connect starts; a second later the SDK is inside its connect retries.
        run.wait_for_stderr("row encoding:", timeout_s=20)
        time.sleep(1)
        signalled = time.monotonic()
        run.signal(signal.SIGTERM)
        result = run.finish(30)
    assert time.monotonic() - signalled < 5, f"slow to stop while connecting\n{result}"
    assert result.returncode == 1
    assert "stopped" in result.summary["error"]


# --- the worker's own accounting, in-process with a fake session (no SDK) --------------


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
