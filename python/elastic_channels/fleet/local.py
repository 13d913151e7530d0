"""Run N workers as local processes and follow their JSON lines."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from .report import aggregate_window, format_window, window_key


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
        lines.put((wp.worker_id, record))
    wp.read_all = True


def _tail_stderr(wp: WorkerProc, echo: TextIO | None) -> None:
    assert wp.proc.stderr is not None
    for raw in wp.proc.stderr:
        wp.stderr_tail = [*wp.stderr_tail[-19:], raw.rstrip()]
        if echo is not None and ("error" in raw.lower() or "channel lost" in raw):
            print(f"  worker {wp.worker_id}: {raw.rstrip()}", file=echo, flush=True)


def start_workers(
    n: int, common_args: list[str], env: dict[str, str], first_worker_id: int = 0
) -> list[WorkerProc]:
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
        procs.append(WorkerProc(w, proc, started_at=started))
    return procs


def watch(
    workers: list[WorkerProc],
    progress: TextIO | None,
    deadline: float,
    on_record: Callable[[dict[str, Any]], Any] | None = None,
    on_idle: Callable[[], Any] | None = None,
    on_window: Callable[[dict[str, Any]], Any] | None = None,
) -> list[dict[str, Any]]:
    """Collect every worker's output until all exit; print fleet-wide windows.

    ``on_record`` gets every worker line as it comes (a monitor writing the metrics
    table), ``on_idle`` is called while no line comes (about 5 times a second), and
    ``on_window`` each fleet window once every live worker has reported it, in time
    order (the search for the highest rate held judges them)."""
    lines: queue.Queue = queue.Queue()
    threads = []
    for wp in workers:
        for fn, args in ((_pump, (wp, lines)), (_tail_stderr, (wp, progress))):
            t = threading.Thread(target=fn, args=args, daemon=True)
            t.start()
            threads.append(t)
    pending: dict[float, list[dict[str, Any]]] = {}
    fleet: list[dict[str, Any]] = []
    emitted: dict[float, int] = {}  # window key -> its index in fleet
    lines_of: dict[float, list[dict[str, Any]]] = {}
    t0 = time.time()
    interrupted = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        for wp in workers:
            if wp.proc.poll() is None:
                wp.proc.send_signal(signal.SIGTERM)
        if progress is not None:
            print("interrupted: workers are draining their acks", file=progress, flush=True)

    def emit_ready() -> None:
        """Print every pending fleet window that each live worker has reported or gone
        past (windows line up on the wall clock); a worker that died without a summary
        reports no more, and is not waited for."""
        live = [w for w in workers if w.summary is None and not (w.seen_exited() and w.read_all)]
        for key in sorted(pending):
            if any(not w.windows or window_key(w.windows[-1]) < key for w in live):
                break
            lines_of[key] = pending.pop(key)
            agg = aggregate_window(lines_of[key])
            agg["t"] = round(agg["end"] - t0, 1)
            emitted[key] = len(fleet)
            fleet.append(agg)
            if progress is not None:
                print(format_window(agg), file=progress, flush=True)
            if on_window is not None:
                on_window(agg)

    def late(record: dict[str, Any]) -> bool:
        """A line for a window already printed (a worker that finished early let it
        go): folded into that window, not printed as a window of its own again."""
        key = window_key(record)
        if key not in emitted:
            return False
        lines_of[key].append(record)
        agg = aggregate_window(lines_of[key])
        agg["t"] = fleet[emitted[key]]["t"]
        fleet[emitted[key]] = agg
        return True

    previous = signal.signal(signal.SIGINT, on_signal)
    try:
        while not all([wp.seen_exited() for wp in workers]) or not lines.empty():
            try:
                worker_id, record = lines.get(timeout=0.2)
            except queue.Empty:
                if on_idle is not None:
                    on_idle()
                if time.monotonic() > deadline:
                    for wp in workers:
                        if wp.proc.poll() is None:
                            wp.proc.kill()
                emit_ready()
                continue
            wp = next(w for w in workers if w.worker_id == worker_id)
            if on_record is not None:
                on_record(record)
            if record.get("type") == "summary":
                wp.summary = record
            elif record.get("type") == "window":
                wp.windows.append(record)
                if not late(record):
                    pending.setdefault(window_key(record), []).append(record)
            emit_ready()
    finally:
        signal.signal(signal.SIGINT, previous)
    for t in threads:
        t.join(timeout=5)
    for wp in workers:
        wp.proc.wait(timeout=30)
        wp.seen_exited()
    return fleet
