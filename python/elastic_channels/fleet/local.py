"""Run N workers as local processes; their lines are followed by :mod:`.watch`."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO


@dataclass
class WorkerProc:
    worker_id: int
    proc: subprocess.Popen
    windows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    stderr_tail: list[str] = field(default_factory=list)
    #: Epoch seconds: just before it was started, and when it was first seen to have
    #: exited (at most ~0.2 s after it did).
    started_at: float = 0.0
    exited_at: float | None = None
    #: Every line it wrote has been read (its stdout is closed).
    read_all: bool = False
    #: Lines of its stdout put on the queue, and taken off it: all of its lines have
    #: been handled once it is read_all and the two are equal.
    queued: int = 0
    handled: int = 0
    #: Where all it wrote to stderr goes (None: nowhere but the tail above).
    log_path: Path | None = None

    def done(self) -> bool:
        """Whether it will report nothing more: its summary came, or it exited and every
        line it wrote has been handled (a line still on the queue is yet to count)."""
        if self.summary is not None:
            return True
        return self.seen_exited() and self.read_all and self.handled >= self.queued

    def exit_text(self) -> str:
        """How it ended, as a person says it: "exited 1", "killed by SIGKILL"."""
        return describe_exit(self.proc.returncode)

    def seen_exited(self) -> bool:
        """Whether it has exited (noting when it was first seen to have)."""
        if self.proc.poll() is None:
            return False
        if self.exited_at is None:
            self.exited_at = time.time()
        return True


def describe_exit(code: int | None) -> str:
    """A process's return code in words (a negative code is the signal that ended it)."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited {code}"


def _pump(wp: WorkerProc, lines: queue.Queue) -> None:
    assert wp.proc.stdout is not None
    for raw in wp.proc.stdout:
        line = raw.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # not ours (the SDK may log to stdout if told to)
        wp.queued += 1
        lines.put((wp.worker_id, record))
    wp.read_all = True


def _tail_stderr(wp: WorkerProc, echo: TextIO | None) -> None:
    """Keep the last lines of a worker's stderr, write all of it to its log file, and
    echo its own errors (not the SDK's log lines: those stay in the log file)."""
    assert wp.proc.stderr is not None
    log = _open_log(wp.log_path)
    try:
        for raw in wp.proc.stderr:
            wp.stderr_tail = [*wp.stderr_tail[-19:], raw.rstrip()]
            if log is not None:
                log.write(raw)
            if echo is not None and _worth_echoing(raw):
                print(f"  worker {wp.worker_id}: {raw.rstrip()}", file=echo, flush=True)
    finally:
        if log is not None:
            log.close()


def _open_log(path: Path | None) -> TextIO | None:
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "a", encoding="utf-8", errors="replace")
    except OSError:
        return None


#: How the SDK's Rust core starts its log lines (a timestamp, then the level).
_SDK_LOG = re.compile(r"^\s*\[?\d{4}-\d{2}-\d{2}[T ][\d:.]+Z?\]?\s+(TRACE|DEBUG|INFO|WARN|ERROR)\b")


def _worth_echoing(raw: str) -> bool:
    """A worker's own error line (the SDK's log lines, WARN walls included, are not)."""
    if _SDK_LOG.match(raw) or " INFO " in raw or " WARN " in raw:
        return False
    return "error" in raw.lower() or "channel lost" in raw


def start_workers(
    n: int,
    common_args: list[str],
    env: dict[str, str],
    first_worker_id: int = 0,
    log_dir: Path | None = None,
) -> list[WorkerProc]:
    """Start ``n`` workers; with ``log_dir``, each one's stderr also goes whole to
    ``log_dir/worker-N.log``."""
    procs = []
    for w in range(first_worker_id, first_worker_id + n):
        cmd = [sys.executable, "-m", "elastic_channels.worker", "--worker-id", str(w)]
        started = time.time()
        proc = subprocess.Popen(
            cmd + common_args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        log = None if log_dir is None else log_dir / f"worker-{w}.log"
        procs.append(WorkerProc(w, proc, started_at=started, log_path=log))
    return procs
