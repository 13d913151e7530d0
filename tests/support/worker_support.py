"""Running ``python -m elastic_channels.k8s_worker`` against the emulator.

The worker always runs as a child process: the SDK starts threads when imported (no
fork afterwards) and reads ``SSL_CERT_FILE``/``SS_LOG_LEVEL`` at start-up. Every wait
here is bounded, and a child that overstays its timeout is killed (by its pid) and the
test fails with the tail of its stderr.

What a worker's lines must hold and what landed are checked in ``worker_checks``.
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
from worker_checks import landed

__all__ = [
    "NO_NATIVE_BOOTSTRAP",
    "WorkerResult",
    "WorkerRun",
    "landed",  # re-exported: tests/emulator/test_worker_hostile.py imports it from here
    "run_worker",
    "worker_args",
    "worker_env",
]

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
