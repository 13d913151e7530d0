"""Running ``python -m elastic_channels.k8s_worker`` against the emulator, and checking
what landed.

The worker always runs as a child process: the SDK starts threads when imported (no
fork afterwards) and reads ``SSL_CERT_FILE``/``SS_LOG_LEVEL`` at start-up. Every wait
here is bounded, and a child that overstays its timeout is killed (by its pid) and the
test fails with the tail of its stderr.

What landed is checked from the table alone, independently of the worker's own
counters: every batch is stamped with one ``SALE_TIME``, so grouping a run's rows by
``SALE_TIME`` recovers the batches (first seq, row count), and regenerating each batch
with the same stamp gives the exact NDJSON the worker must have sent.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulator_support import FAST_CLIENT_PROPERTIES

from elastic_channels import rows

try:
    import elastic_native
except ImportError:  # the byte-parity tests make sure both generators agree
    elastic_native = None

#: The issue's minimum summary keys: present even when the worker could not connect.
ISSUE_SUMMARY_KEYS = frozenset(
    {
        "run_id",
        "worker_id",
        "rows_sent",
        "rows_acked",
        "bytes_sent",
        "seconds",
        "mb_per_s",
        "rows_per_s",
        "ack_p50_ms",
        "ack_p99_ms",
        "resent_batches",
        "unacked_rows",
    }
)
#: Keys every summary line carries (the issue's list plus what the tests rely on).
SUMMARY_KEYS = ISSUE_SUMMARY_KEYS | {
    "type",
    "channel_reopens",
    "sdk_retries",
    "own_cpu_s",
    "append_own_cpu_s",
    "first_seq",
    "next_seq",
    "encoder",
    "append_mode",
}
#: Keys every window line carries: start/end, rows, bytes, rates, ack latency
#: p50/p95/p99/max, in flight, retries, errors, CPU and RSS.
WINDOW_KEYS = frozenset(
    {
        "type",
        "run_id",
        "worker_id",
        "start",
        "end",
        "rows",
        "bytes",
        "mb_per_s",
        "rows_per_s",
        "acked_rows",
        "acks",
        "ack_p50_ms",
        "ack_p95_ms",
        "ack_p99_ms",
        "ack_max_ms",
        "in_flight_batches",
        "in_flight_bytes",
        "resent_batches",
        "sdk_retries",
        "errors",
        "cpu_pct",
        "rss_mib",
    }
)

#: Environment variables the worker reads (and every SNOWFLAKE_*); scrubbed so the host
#: cannot steer a test.
WORKER_ENV_VARS = (
    "RUN_ID",
    "WORKER_ID",
    "JOB_COMPLETION_INDEX",
    "TARGET_BPS",
    "DURATION_SECONDS",
    "BATCH_BYTES",
    "ELASTIC_FAST_JSON_ENCODE",
    "SNOWPIPE_SDK_PROPERTIES",
    "SS_LOG_LEVEL",
    "SS_LOG_TARGET",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)

#: SDK client properties for worker tests: no telemetry, short retry backoffs. The
#: total retry budget is left to the worker's ``--retry-backoff-seconds``.
WORKER_SDK_PROPERTIES = {
    k: v for k, v in FAST_CLIENT_PROPERTIES.items() if k != "data_retry_total_backoff_seconds"
}

#: Runs the worker with ``elastic_native`` made unimportable (as if never built).
NO_NATIVE_BOOTSTRAP = """
import importlib.abc, runpy, sys

class _NoNative(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "elastic_native" or name.startswith("elastic_native."):
            raise ImportError(f"{name} blocked by the test")
        return None

sys.meta_path.insert(0, _NoNative())
sys.argv[0] = "elastic_channels.k8s_worker"
runpy.run_module("elastic_channels.k8s_worker", run_name="__main__", alter_sys=True)
"""


def worker_env(**overrides: str) -> dict[str, str]:
    """This environment minus everything the worker or the SDK would read from it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in WORKER_ENV_VARS and not k.startswith("SNOWFLAKE_")
    }
    env["SNOWPIPE_SDK_PROPERTIES"] = json.dumps(WORKER_SDK_PROPERTIES)
    env["LOG_LEVEL"] = "INFO"
    env.update(overrides)
    return env


@dataclass
class WorkerResult:
    returncode: int
    records: list[dict[str, Any]]
    stderr: str
    seconds: float

    @property
    def windows(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "window"]

    @property
    def summary(self) -> dict[str, Any]:
        summaries = [r for r in self.records if r.get("type") == "summary"]
        assert len(summaries) == 1, f"expected one summary line, got {len(summaries)}\n{self}"
        assert self.records[-1] is summaries[0], "the summary is not the last line"
        return summaries[0]

    def __str__(self) -> str:
        tail = "\n".join(json.dumps(r) for r in self.records[-3:])
        return (
            f"exit {self.returncode} after {self.seconds:.1f} s\n"
            f"last stdout lines:\n{tail}\nstderr tail:\n{self.stderr[-3000:]}"
        )


@dataclass
class WorkerRun:
    """One worker child; stdout is read line by line as it comes."""

    args: Sequence[str]
    env: Mapping[str, str]
    stderr_path: Path
    python_args: Sequence[str] = ("-m", "elastic_channels.k8s_worker")
    records: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr = open(self.stderr_path, "wb")  # closed in __exit__
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, *self.python_args, *self.args],
            env=dict(self.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=self.stderr_path.parent,  # not the checkout: import the installed package
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._lines.put(raw.decode("utf-8", errors="replace"))
        self._lines.put(None)

    def _take(self, line: str) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise AssertionError(f"a stdout line is not JSON: {line!r}") from None
        assert isinstance(record, dict), f"a stdout line is not a JSON object: {line!r}"
        self.records.append(record)
        return record

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout_s: float) -> dict:
        """The first new stdout record matching ``predicate``; fails after ``timeout_s``."""
        give_up = time.monotonic() + timeout_s
        while True:
            left = give_up - time.monotonic()
            if left <= 0:
                self.kill()
                raise AssertionError(f"no matching line in {timeout_s} s\n{self._result()}")
            try:
                line = self._lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if line is None:
                self._lines.put(None)
                raise AssertionError(f"the worker ended first\n{self.finish(5)}")
            record = self._take(line)
            if predicate(record):
                return record

    def wait_for_stderr(self, text: str, timeout_s: float) -> None:
        """Wait until ``text`` shows up on the child's stderr; fails after ``timeout_s``."""
        give_up = time.monotonic() + timeout_s
        while text not in self.stderr_path.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > give_up:
                self.kill()
                raise AssertionError(f"{text!r} never appeared on stderr\n{self._result()}")
            time.sleep(0.05)

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def finish(self, timeout_s: float) -> WorkerResult:
        """Wait for the exit (killing the child after ``timeout_s``) and collect its output."""
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            self._reader.join(5)
            self._drain()
            raise AssertionError(
                f"the worker did not exit within {timeout_s} s\n{self._result()}"
            ) from None
        self._reader.join(10)
        self._drain()
        return self._result()

    def _drain(self) -> None:
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                return
            if line is not None:
                self._take(line)

    def _result(self) -> WorkerResult:
        self._stderr.flush()
        return WorkerResult(
            self.proc.returncode if self.proc.returncode is not None else -999,
            list(self.records),
            self.stderr_path.read_text(errors="replace"),
            time.monotonic() - self.started,
        )

    def __enter__(self) -> WorkerRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        self._stderr.close()


def worker_args(
    profile: Path,
    run_id: str,
    *,
    target_bps: float,
    duration_s: float,
    worker_id: int = 0,
    window_s: float = 1.0,
    retry_backoff_s: int = 10,
    extra: Sequence[str] = (),
) -> list[str]:
    return [
        "--profile",
        str(profile),
        "--run-id",
        run_id,
        "--worker-id",
        str(worker_id),
        "--target-bps",
        f"{target_bps:g}",
        "--duration-seconds",
        f"{duration_s:g}",
        "--window-seconds",
        f"{window_s:g}",
        "--retry-backoff-seconds",
        str(retry_backoff_s),
        "--connect-timeout-seconds",
        "30",
        "--drain-timeout-seconds",
        "30",
        *extra,
    ]


def run_worker(
    args: Sequence[str],
    tmp_path: Path,
    *,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    python_args: Sequence[str] = ("-m", "elastic_channels.k8s_worker"),
) -> WorkerResult:
    stderr_path = tmp_path / f"worker-{time.monotonic_ns()}.stderr"
    with WorkerRun(args, env or worker_env(), stderr_path, python_args) as run:
        return run.finish(timeout_s)


# --- what landed --------------------------------------------------------------------


@dataclass
class LandedBatch:
    sale_time_us: int
    first_seq: int
    last_seq: int
    rows: int  # rows landed with this stamp, duplicates included
    distinct: int


@dataclass
class Landed:
    """One worker's rows in the table, grouped into the batches it sent."""

    batches: list[LandedBatch]
    first_seq: int
    next_seq: int

    @property
    def rows(self) -> int:
        return sum(b.rows for b in self.batches)

    @property
    def duplicates(self) -> int:
        return sum(b.rows - b.distinct for b in self.batches)

    def lost(self) -> list[int]:
        """Seqs in [first_seq, next_seq) that did not land (a few, for the message)."""
        have = sorted((b.first_seq, b.last_seq) for b in self.batches)
        missing, expect = [], self.first_seq
        for lo, hi in have:
            if lo > expect:
                missing.extend(range(expect, lo))
            expect = max(expect, hi + 1)
        missing.extend(range(expect, self.next_seq))
        return missing

    def outside(self) -> list[LandedBatch]:
        return [
            b for b in self.batches if b.first_seq < self.first_seq or b.last_seq >= self.next_seq
        ]


def landed(emu: Any, run_id: str, worker_id: int, summary: Mapping[str, Any]) -> Landed:
    """The run's landed rows grouped by batch stamp (after waiting for landing)."""
    assert emu.wait_landed(60), "the emulator did not finish landing within 60 s"
    prefix = f"{run_id}-{worker_id}-"
    assert "'" not in prefix
    rows = emu.query(
        f"""
        SELECT epoch_us(SALE_TIME) AS t, min(s), max(s), count(*), count(DISTINCT s)
        FROM (
            SELECT SALE_TIME, CAST(substr(TXID, {len(prefix) + 1}) AS BIGINT) AS s
            FROM RESORT_SALES
            WHERE RUN_ID = '{run_id}' AND WORKER_ID = {worker_id}
              AND starts_with(TXID, '{prefix}')
        )
        GROUP BY t ORDER BY 2
        """
    )
    (others,) = emu.query(
        f"SELECT count(*) FROM RESORT_SALES WHERE RUN_ID = '{run_id}' "
        f"AND NOT (WORKER_ID = {worker_id} AND starts_with(TXID, '{prefix}'))"
    )[0]
    assert others == 0, f"{others} rows of run {run_id} carry another worker id or TXID"
    batches = [LandedBatch(*map(int, r)) for r in rows]
    for b in batches:
        # One stamp per batch and batches of consecutive seqs: a stamp's seqs are contiguous.
        assert b.last_seq - b.first_seq + 1 == b.distinct, f"gaps inside one batch: {b}"
    return Landed(batches, int(summary["first_seq"]), int(summary["next_seq"]))


def regenerate(run_id: str, worker_id: int, batch: LandedBatch) -> bytes:
    """The NDJSON of ``batch`` as the worker generated it."""
    n = batch.last_seq - batch.first_seq + 1
    if elastic_native is not None:
        gen = elastic_native.ResortGenerator(run_id, worker_id, start_seq=batch.first_seq)
    else:
        gen = rows.ResortGenerator(run_id, worker_id, start_seq=batch.first_seq)
    return gen.next_batch(n, batch.sale_time_us)


def expected_raw_bytes(run_id: str, worker_id: int, got: Landed) -> tuple[int, int]:
    """(NDJSON bytes generated, appends) for a run where each batch was sent once."""
    return sum(len(regenerate(run_id, worker_id, b)) for b in got.batches), len(got.batches)


def emulator_counters(emu: Any) -> dict[str, int]:
    s = emu.stats_snapshot()
    return {k: s[k] for k in ("bytes_raw", "appends_acked", "rows_landed", "rows_received")}


def counters_since(emu: Any, before: Mapping[str, int]) -> dict[str, int]:
    now = emulator_counters(emu)
    return {k: now[k] - before[k] for k in now}
