"""Run N workers as local processes, watch them, and check what landed.

Used by ``elastic-channels run``. With no Snowflake configuration the embedded
emulator is started in this process and the workers ingest into it; then every
generated TXID is looked up in its table to count what landed, what landed twice
and what was lost, and the ingest-to-visible latency is read off the landed rows.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from elastic_channels import text_table

MB = 1_000_000


@dataclass
class WorkerProc:
    worker_id: int
    proc: subprocess.Popen
    windows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    stderr_tail: list[str] = field(default_factory=list)


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
        cmd = [sys.executable, "-m", "elastic_channels.k8s_worker", "--worker-id", str(w)]
        proc = subprocess.Popen(
            cmd + common_args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        procs.append(WorkerProc(w, proc))
    return procs


def aggregate_window(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """One fleet-wide line from the workers' windows of the same period."""
    secs = max(w["end"] - w["start"] for w in windows) or 1e-9
    lat = [w for w in windows if w.get("ack_p50_ms") is not None]
    return {
        "end": max(w["end"] for w in windows),
        "workers": len(windows),
        "mb_per_s": round(sum(w["bytes"] for w in windows) / secs / MB, 2),
        "rows_per_s": round(sum(w["rows"] for w in windows) / secs),
        "ack_p50_ms": max((w["ack_p50_ms"] for w in lat), default=None),
        "ack_p99_ms": max((w["ack_p99_ms"] for w in lat), default=None),
        "in_flight_bytes": sum(w["in_flight_bytes"] for w in windows),
        "resent_batches": sum(w["resent_batches"] for w in windows),
        "sdk_retries": sum(w["sdk_retries"] for w in windows),
        "cpu_pct": round(sum(w["cpu_pct"] for w in windows), 1),
    }


def watch(
    workers: list[WorkerProc], progress: TextIO | None, deadline: float
) -> list[dict[str, Any]]:
    """Collect every worker's output until all exit; print fleet-wide windows."""
    lines: queue.Queue = queue.Queue()
    threads = []
    for wp in workers:
        for fn, args in ((_pump, (wp, lines)), (_tail_stderr, (wp, progress))):
            t = threading.Thread(target=fn, args=args, daemon=True)
            t.start()
            threads.append(t)
    by_index: dict[int, list[dict[str, Any]]] = {}
    fleet: list[dict[str, Any]] = []
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

    previous = signal.signal(signal.SIGINT, on_signal)
    try:
        while any(wp.proc.poll() is None for wp in workers) or not lines.empty():
            try:
                worker_id, record = lines.get(timeout=0.2)
            except queue.Empty:
                if time.monotonic() > deadline:
                    for wp in workers:
                        if wp.proc.poll() is None:
                            wp.proc.kill()
                continue
            wp = next(w for w in workers if w.worker_id == worker_id)
            if record.get("type") == "summary":
                wp.summary = record
            elif record.get("type") == "window":
                wp.windows.append(record)
                k = len(wp.windows) - 1
                by_index.setdefault(k, []).append(record)
                alive = sum(1 for w in workers if w.summary is None)
                if len(by_index[k]) >= max(alive, 1):
                    agg = aggregate_window(by_index.pop(k))
                    agg["t"] = round(agg["end"] - t0, 1)
                    fleet.append(agg)
                    if progress is not None:
                        print(format_window(agg), file=progress, flush=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    for t in threads:
        t.join(timeout=5)
    for wp in workers:
        wp.proc.wait(timeout=30)
    return fleet


def format_window(w: dict[str, Any]) -> str:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    return (
        f"[{w['t']:7.1f}s] {w['workers']:3d} workers {w['mb_per_s']:9.1f} MB/s "
        f"{w['rows_per_s']:>11,} rows/s  ack p50 {ms(w['ack_p50_ms'])} ms "
        f"p99 {ms(w['ack_p99_ms'])} ms  in flight {w['in_flight_bytes'] / MB:.1f} MB"
    )


def verify_landed(emu: Any, run_id: str, summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """rows_landed, duplicates and lost for this run, and ingest-to-visible latency."""
    emu.wait_landed(timeout_s=120)
    rid = run_id.replace("'", "''")
    rows = emu.query(
        "SELECT WORKER_ID, count(*), count(DISTINCT TXID) FROM RESORT_SALES "
        f"WHERE RUN_ID = '{rid}' GROUP BY WORKER_ID"
    )
    landed = {int(w): (int(n), int(d)) for w, n, d in rows}
    expected = {
        s["worker_id"]: s.get("next_seq", 0) - s.get("first_seq", 0) for s in summaries if s
    }
    total_rows = sum(n for n, _ in landed.values())
    distinct = sum(d for _, d in landed.values())
    lost = sum(max(0, exp - landed.get(w, (0, 0))[1]) for w, exp in expected.items())
    lat = emu.query(
        "SELECT quantile_cont(ms, 0.5), quantile_cont(ms, 0.99), count(*) FROM ("
        "SELECT epoch_ms(_COMMIT_TIME) - epoch_ms(SALE_TIME) AS ms FROM RESORT_SALES "
        f"WHERE RUN_ID = '{rid}')"
    )[0]
    return {
        "rows_expected": sum(expected.values()),
        "rows_landed": total_rows,
        "duplicates": total_rows - distinct,
        "lost": lost,
        "visible_p50_ms": None if lat[0] is None else round(float(lat[0]), 1),
        "visible_p99_ms": None if lat[1] is None else round(float(lat[1]), 1),
    }


SUMMARY_COLUMNS = [
    ("worker", "worker_id", "{}"),
    ("path", "append_mode", "{}"),
    ("rows sent", "rows_sent", "{:,}"),
    ("rows acked", "rows_acked", "{:,}"),
    ("MB/s", "mb_per_s", "{:.1f}"),
    ("ack p50 ms", "ack_p50_ms", "{:.0f}"),
    ("ack p99 ms", "ack_p99_ms", "{:.0f}"),
    ("resent", "resent_batches", "{}"),
    ("SDK retries", "sdk_retries", "{}"),
    ("unacked", "unacked_rows", "{:,}"),
    ("CPU s/GB", "cpu_s_per_gb", "{:.2f}"),
    ("RSS MiB", "peak_rss_mib", "{:.0f}"),
]


def summary_table(summaries: list[dict[str, Any]], totals: dict[str, Any]) -> str:
    return text_table.render(SUMMARY_COLUMNS, summaries, totals)


def fleet_totals(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [s for s in summaries if s]
    secs = max((s["seconds"] for s in ok), default=0) or 1e-9
    bytes_sent = sum(s["bytes_sent"] for s in ok)
    cpu = sum(s.get("cpu_s", 0) for s in ok)
    return {
        "worker_id": "total",
        "append_mode": ",".join(sorted({str(s.get("append_mode")) for s in ok})),
        "rows_sent": sum(s["rows_sent"] for s in ok),
        "rows_acked": sum(s["rows_acked"] for s in ok),
        "bytes_sent": bytes_sent,
        "seconds": secs,
        "mb_per_s": round(bytes_sent / secs / MB, 2),
        "rows_per_s": round(sum(s["rows_sent"] for s in ok) / secs),
        "ack_p50_ms": max((s["ack_p50_ms"] for s in ok if s.get("ack_p50_ms")), default=None),
        "ack_p99_ms": max((s["ack_p99_ms"] for s in ok if s.get("ack_p99_ms")), default=None),
        "resent_batches": sum(s["resent_batches"] for s in ok),
        "sdk_retries": sum(s["sdk_retries"] for s in ok),
        "unacked_rows": sum(s["unacked_rows"] for s in ok),
        "cpu_s_per_gb": round(cpu / (bytes_sent / 1e9), 3) if bytes_sent else None,
        "peak_rss_mib": max((s["peak_rss_mib"] for s in ok), default=None),
    }


def write_info(path: Path, info: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(info, f)
