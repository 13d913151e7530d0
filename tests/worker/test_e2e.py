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
import itertools
import json
import signal
import socket
import time

import pytest
from emulator_support import make_emulator, sdk_available
from worker_checks import (
    ISSUE_SUMMARY_KEYS,
    SUMMARY_KEYS,
    WINDOW_KEYS,
    counters_since,
    elastic_native,
    emulator_counters,
    expected_raw_bytes,
    landed,
    regenerate,
)
from worker_support import NO_NATIVE_BOOTSTRAP, WorkerRun, run_worker, worker_args, worker_env

from elastic_channels.measures import run_throughput
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


def test_stages_after_warmup_are_followed_window_by_window(emu, profile, tmp_path):
    """A 1 s warmup (rounded up to the next window boundary), 2 s at 2 MB/s, 2 s at
    4 MB/s, 1 s windows: every window says its target, stage and warmup; each full
    window after a stage's first sends within 5% of its target; the summary's figures
    leave warmup out and total each stage."""
    run_id, worker_id = "stages", 6
    stages = [
        {"seconds": 2, "from_bps": 2e6, "to_bps": 2e6},
        {"seconds": 2, "from_bps": 4e6, "to_bps": 4e6},
    ]
    extra = ["--stages", json.dumps(stages), "--warmup-seconds", "1", "--batch-bytes", "25000"]
    extra += ["--scenario-name", "two-steps"]  # the default sleep quantum: 250 ms
    extra += ["--scenario-hash", "5eed"]
    args = worker_args(profile, run_id, worker_id=worker_id, target_bps=1e6, duration_s=1)
    result = run_worker([*args, *extra], tmp_path, timeout_s=60)
    assert result.returncode == 0, str(result)
    s = result.summary
    windows = result.windows
    assert all((w["scenario"], w["scenario_hash"]) == ("two-steps", "5eed") for w in windows)
    assert (s["scenario"], s["scenario_hash"]) == ("two-steps", "5eed")

    warm = [w for w in windows if w["warmup"]]
    run = [w for w in windows if not w["warmup"]]
    assert 1.0 <= s["warmup_seconds"] < 2.0
    assert warm and all(w["stage"] == -1 and w["target_bps"] == 2e6 for w in warm)
    # Warmup ends on a window boundary, where the run's figures start.
    assert s["send_start"] == pytest.approx(run[0]["window_start"], abs=0.01)
    assert s["send_start"] == pytest.approx(warm[-1]["end"], abs=0.01)
    full = [w for w in run if not w["partial"]]
    assert [(w["stage"], w["target_bps"]) for w in full] == [
        (0, 2e6), (0, 2e6), (1, 4e6), (1, 4e6),
    ]  # fmt: skip
    for w in (full[1], full[3]):  # each stage's full windows after its first
        assert w["mb_per_s"] * 1e6 == pytest.approx(w["target_bps"], rel=0.05), w

    # The run's figures: after warmup; warmup's own totals apart; per stage totals.
    assert s["seconds"] == pytest.approx(4.0, abs=0.3)
    assert s["rows_sent"] == sum(w["rows"] for w in run)
    assert s["warmup_rows_sent"] == sum(w["rows"] for w in warm)
    assert [(st["stage"], st["target_bps"], st["seconds"]) for st in s["stages"]] == [
        (0, 2e6, 2), (1, 4e6, 2),
    ]  # fmt: skip
    assert sum(st["rows"] for st in s["stages"]) == s["rows_sent"]
    assert sum(st["acked_rows"] for st in s["stages"]) == s["rows_acked"] == s["rows_sent"]
    assert s["stages"][1]["bytes"] == pytest.approx(2 * 4e6, rel=0.05)
    assert s["unacked_rows"] == 0
    assert s["rows_sent"] + s["warmup_rows_sent"] == s["next_seq"] - s["first_seq"]
    assert run_throughput([s])["seconds"] == pytest.approx(4.0, abs=0.3)
    got = check_nothing_lost(emu, run_id, worker_id, s)
    assert got.duplicates == 0


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


def refuse_every_append(emu) -> None:
    """503 for every append, however the SDK sends it: inline rows, or a file registered
    (file mode, for flushes over ~1 MiB)."""
    for endpoint in ("rows", "filebuffer"):
        emu.faults.add(endpoint, "status", status=503, count=None)


def test_a_server_that_never_acks_cannot_hang_the_worker(emu, profile, tmp_path):
    """Every append answered 503: the SDK gives up after --retry-backoff-seconds, the
    worker reopens and resends until --drain-timeout-seconds, then reports the unacked
    rows and exits 1."""
    refuse_every_append(emu)
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
    refuse_every_append(emu)
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
