"""Local client-only benchmark: what generating and encoding the rows costs a worker.

Spawns N worker processes. Each one generates NDJSON batches at its share of the
target rate, paced, for the given duration, and throws them away: no Snowflake, no
network. It reports per worker and in total the achieved MB/s and rows/s, the CPU
the process used (as % of one core and as CPU-seconds per GB) and its peak RSS. The
rows are a workload's (``--workload``, resort sales by default; ``workload.py``).
With ``--json``, stdout holds one JSON document with all figures and nothing else;
the tables and progress lines go to stderr.

    elastic-channels bench --workers 1 --target-bps 100e6 --duration-seconds 10
    elastic-channels bench --workload my-rows.yaml --target-bps 50e6 --duration-seconds 10

MB is 10**6 bytes throughout.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import queue
import sys
import time
from typing import Any

from ..fleet import text_table
from ..landing_table import WorkloadArgError
from ..measures import MB, cpu_s_per_gb, peak_rss_mib
from ..rows import rows_per_batch
from ..setting import add_flags
from ..worker.config import default_run_id
from ..worker.pacing import Pacer
from ..worker.settings import BY_NAME, resolve
from . import workload

PROGRESS_EVERY_S = 1.0


def run_worker(
    worker_id: int,
    run_id: str,
    rate_bps: float,
    duration_s: float,
    batch_bytes: int,
    encoder: str | None,
    workload_name: str,
    progress: Any,
) -> dict[str, Any]:
    """Generate paced batches of ``workload_name``'s rows for ``duration_s``; returns
    this worker's figures, and the first row it made (``first_row``, NDJSON text)."""
    gen, backend = workload.make_generator(run_id, worker_id, encoder, workload_name)
    n_rows = rows_per_batch(gen, batch_bytes, time.time_ns() // 1000)
    pacer = Pacer(rate_bps)
    rows = nbytes = 0
    first_row: bytes | None = None
    cpu0 = time.process_time()
    start = last_report = time.monotonic()
    deadline = start + duration_s
    while True:
        batch = gen.next_batch(n_rows, time.time_ns() // 1000)
        if first_row is None:
            first_row = bytes(batch[: batch.index(b"\n")])
        pacer.acquire(len(batch))
        now = time.monotonic()
        if now >= deadline:
            break
        rows += n_rows
        nbytes += len(batch)
        if progress is not None and now - last_report >= PROGRESS_EVERY_S:
            progress.put((worker_id, now - start, rows, nbytes))
            last_report = now
    seconds = time.monotonic() - start
    cpu = time.process_time() - cpu0
    return {
        "worker_id": worker_id,
        "backend": backend,
        "rows": rows,
        "bytes": nbytes,
        "seconds": round(seconds, 3),
        "mb_per_s": round(nbytes / seconds / MB, 2),
        "rows_per_s": round(rows / seconds),
        "cpu_pct": round(100 * cpu / seconds, 1),
        "cpu_s_per_gb": cpu_s_per_gb(cpu, nbytes),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "avg_row_bytes": round(nbytes / rows, 1) if rows else None,
        "first_row": first_row.decode() if first_row is not None else None,
    }


#: run_worker's arguments but the progress queue.
ChildArgs = tuple[int, str, float, float, int, "str | None", str]


def _child(args: ChildArgs, progress: Any, results: Any) -> None:
    import logging

    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "INFO"), format=f"worker {args[0]}: %(message)s"
    )
    try:
        results.put(run_worker(*args, progress=progress))
    except BaseException as e:  # report, never hang the parent
        results.put({"worker_id": args[0], "error": f"{type(e).__name__}: {e}"})


SUMMARY_COLUMNS = [
    ("worker", "worker_id", "{}"),
    ("path", "backend", "{}"),
    ("MB/s", "mb_per_s", "{:.1f}"),
    ("rows/s", "rows_per_s", "{:,}"),
    ("CPU %", "cpu_pct", "{:.1f}"),
    ("CPU s/GB", "cpu_s_per_gb", "{:.3f}"),
    ("peak RSS MiB", "peak_rss_mib", "{:.1f}"),
    ("B/row", "avg_row_bytes", "{:.1f}"),
]


def run(args: argparse.Namespace) -> dict[str, Any]:
    ctx = mp.get_context("spawn")  # never fork: the Snowpipe SDK starts threads
    progress, results = ctx.Queue(), ctx.Queue()
    a = args
    common = (a.target_bps, a.duration_seconds, a.batch_bytes, a.encoder, a.workload_arg)
    procs = [
        ctx.Process(target=_child, args=((w, a.run_id, *common), progress, results), daemon=True)
        for w in range(a.worker_offset, a.worker_offset + a.workers)
    ]
    for p in procs:
        p.start()
    latest: dict[int, tuple[float, int, int]] = {}
    done: list[dict[str, Any]] = []
    t0 = time.monotonic()
    grace = args.duration_seconds + 60
    while len(done) < len(procs):
        try:
            done.append(results.get(timeout=PROGRESS_EVERY_S))
        except queue.Empty:
            pass
        fresh = False  # a line only when a report came in: none when a result did
        while True:
            try:
                w, elapsed, rows, nbytes = progress.get_nowait()
            except queue.Empty:
                break
            latest[w] = (elapsed, rows, nbytes)
            fresh = True
        if fresh and not args.quiet:
            secs = max(e for e, _, _ in latest.values())
            tot_rows = sum(r for _, r, _ in latest.values())
            tot_bytes = sum(b for _, _, b in latest.values())
            print(
                f"[{secs:6.1f}s / {args.duration_seconds:g}s] {len(latest)} workers  "
                f"{tot_bytes / secs / MB:8.1f} MB/s  {tot_rows / secs:>12,.0f} rows/s",
                file=sys.stderr,
                flush=True,
            )
        if time.monotonic() - t0 > grace:
            raise SystemExit(f"benchmark: workers did not finish within {grace:.0f} s")
        if any(p.exitcode not in (None, 0) for p in procs) and results.empty():
            dead = [p.pid for p in procs if p.exitcode not in (None, 0)]
            raise SystemExit(f"benchmark: worker process(es) {dead} died")
    for p in procs:
        p.join(timeout=10)
    errors = [r for r in done if "error" in r]
    if errors:
        raise SystemExit(
            "benchmark: " + "; ".join(f"worker {r['worker_id']}: {r['error']}" for r in errors)
        )
    done.sort(key=lambda r: r["worker_id"])
    seconds = max(r["seconds"] for r in done)
    nbytes = sum(r["bytes"] for r in done)
    cpu_s = sum(r["cpu_pct"] * r["seconds"] / 100 for r in done)
    n_rows = sum(r["rows"] for r in done)
    total = {
        "worker_id": "total",
        "backend": ",".join(sorted({r["backend"] for r in done})),
        "rows": n_rows,
        "bytes": nbytes,
        "seconds": seconds,
        "mb_per_s": round(nbytes / seconds / MB, 2),
        "rows_per_s": round(n_rows / seconds),
        "cpu_pct": round(100 * cpu_s / seconds, 1),
        "cpu_s_per_gb": cpu_s_per_gb(cpu_s, nbytes),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in done),
        "avg_row_bytes": round(nbytes / n_rows, 1) if n_rows else None,
    }
    return {
        "run_id": args.run_id,
        "workload": args.workload,
        "mean_row_bytes": total["avg_row_bytes"],
        "target_mb_per_s": round(args.target_bps * args.workers / MB, 3),
        "workers": done,
        "total": total,
    }


#: The worker settings the benchmark shares (same flags, units and defaults).
SHARED_SETTINGS = ("run_id", "target_bps", "duration_seconds", "batch_bytes", "encoder")
DESCRIPTION = (
    "Client-only benchmark: what generating and encoding the rows costs a worker, with no "
    "SDK, no server and no Snowflake. Spawns N worker processes; each generates NDJSON "
    "batches of a workload's rows (--workload, resort sales by default) at --target-bps "
    "for --duration-seconds and throws them away. Reports per worker and in total MB/s, "
    "rows/s, CPU (% of a core and CPU-s per GB), peak RSS and mean row bytes."
)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    add_flags(p, [*(BY_NAME[n] for n in SHARED_SETTINGS), workload.WORKLOAD_SETTING])
    p.add_argument(
        "--worker-offset", type=int, default=0, help="WORKER_ID of the first worker (default: 0)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document with all figures on stdout, and nothing else there "
        "(the tables go to stderr)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_bench, parser=p)


def _checked(p: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    for name in SHARED_SETTINGS:
        try:
            setattr(args, name, resolve(name, getattr(args, name), os.environ))
        except ValueError as e:
            p.error(str(e))
    args.run_id = args.run_id or default_run_id()
    try:  # checked in full here: a bad workload is named before any process starts
        args.workload, args.workload_arg = workload.checked(args.workload, os.environ)
    except WorkloadArgError as e:
        p.error(str(e))
    if args.workers < 1:
        p.error(f"--workers must be >= 1, got {args.workers}")
    for flag, value in (("--target-bps", args.target_bps),
                        ("--duration-seconds", args.duration_seconds)):  # fmt: skip
        if not (math.isfinite(value) and value > 0):
            p.error(f"{flag} must be a finite number > 0, got {value}")
    if args.batch_bytes < 1000:
        p.error(f"--batch-bytes must be >= 1000, got {args.batch_bytes}")
    return args


def cmd_bench(args: argparse.Namespace) -> int:
    import logging

    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), format="%(message)s")
    args = _checked(args.parser, args)
    print(
        f"benchmark: {args.workers} worker(s) x {args.target_bps / MB:g} MB/s, "
        f"{args.duration_seconds:g} s, workload {args.workload}, run id {args.run_id}",
        file=sys.stderr,
    )
    result = run(args)
    out = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON alone
    mean = result["mean_row_bytes"]
    print(
        f"workload {result['workload']}: mean row " + (f"{mean:.1f} bytes" if mean else "-"),
        file=out,
    )
    print(text_table.render(SUMMARY_COLUMNS, result["workers"], result["total"]), file=out)
    if args.json:
        print(json.dumps(result))
    return 0
