"""Local client-only benchmark: what generating and encoding the rows costs a worker.

Spawns N worker processes. Each one generates NDJSON batches at its share of the
target rate, paced, for the given duration, and throws them away: no Snowflake, no
network. It reports per worker and in total the achieved MB/s and rows/s, the CPU
the process used (as % of one core and as CPU-seconds per GB) and its peak RSS.

    python -m elastic_channels.benchmark_client_cpu --workers 1 --aggregate-mbps 100 \\
        --duration-seconds 10

MB is 10**6 bytes throughout.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import queue
import sys
import time
from typing import Any

from elastic_channels import text_table
from elastic_channels.cli_help import DefaultsHelpFormatter
from elastic_channels.encoding import make_generator, select_backend
from elastic_channels.metrics import peak_rss_mib
from elastic_channels.pacing import Pacer
from elastic_channels.worker_config import default_run_id

MB = 1_000_000
PROGRESS_EVERY_S = 1.0


def run_worker(
    worker_id: int,
    run_id: str,
    rate_bps: float,
    duration_s: float,
    batch_bytes: int,
    encoder: str | None,
    progress: Any,
) -> dict[str, Any]:
    """Generate paced batches for ``duration_s``; returns this worker's figures."""
    backend = select_backend(encoder)  # type: ignore[arg-type]
    gen = make_generator(run_id, worker_id, backend=backend)
    # Size batches in rows from a probe batch, so each is ~batch_bytes.
    probe = gen.next_batch(1000, time.time_ns() // 1000)
    rows_per_batch = max(1, batch_bytes * 1000 // len(probe))
    pacer = Pacer(rate_bps)
    rows = nbytes = 0
    cpu0 = time.process_time()
    start = last_report = time.monotonic()
    deadline = start + duration_s
    while True:
        batch = gen.next_batch(rows_per_batch, time.time_ns() // 1000)
        pacer.acquire(len(batch))
        now = time.monotonic()
        if now >= deadline:
            break
        rows += rows_per_batch
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
        "cpu_s_per_gb": round(cpu / (nbytes / 1e9), 3) if nbytes else None,
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "avg_row_bytes": round(nbytes / rows, 1) if rows else None,
    }


def _child(args: tuple, progress: Any, results: Any) -> None:
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
]


def run(args: argparse.Namespace) -> dict[str, Any]:
    ctx = mp.get_context("spawn")  # never fork: the Snowpipe SDK starts threads
    progress, results = ctx.Queue(), ctx.Queue()
    rate = args.aggregate_mbps * MB / args.workers
    procs = [
        ctx.Process(
            target=_child,
            args=(
                (w, args.run_id, rate, args.duration_seconds, args.batch_bytes, args.encoder),
                progress,
                results,
            ),
            daemon=True,
        )
        for w in range(args.worker_offset, args.worker_offset + args.workers)
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
        while True:
            try:
                w, elapsed, rows, nbytes = progress.get_nowait()
            except queue.Empty:
                break
            latest[w] = (elapsed, rows, nbytes)
        if latest and not args.quiet:
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
    total = {
        "worker_id": "total",
        "backend": ",".join(sorted({r["backend"] for r in done})),
        "rows": sum(r["rows"] for r in done),
        "bytes": nbytes,
        "seconds": seconds,
        "mb_per_s": round(nbytes / seconds / MB, 2),
        "rows_per_s": round(sum(r["rows"] for r in done) / seconds),
        "cpu_pct": round(100 * cpu_s / seconds, 1),
        "cpu_s_per_gb": round(cpu_s / (nbytes / 1e9), 3) if nbytes else None,
        "peak_rss_mib": max(r["peak_rss_mib"] for r in done),
    }
    return {
        "run_id": args.run_id,
        "target_mb_per_s": args.aggregate_mbps,
        "workers": done,
        "total": total,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m elastic_channels.benchmark_client_cpu",
        description=__doc__.split("\n\n")[0] + " No Snowflake needed.",
        formatter_class=DefaultsHelpFormatter,
    )
    p.add_argument("--workers", type=int, default=1, help="worker processes to spawn")
    p.add_argument(
        "--aggregate-mbps",
        type=float,
        default=100.0,
        help="target MB/s (10**6 bytes) for all workers together, split evenly",
    )
    p.add_argument("--duration-seconds", type=float, default=10.0, help="how long to run")
    p.add_argument(
        "--encoder",
        choices=["native", "python"],
        default=None,
        help="force a path; default: native unless ELASTIC_FAST_JSON_ENCODE=false or "
        "the native module is missing",
    )
    p.add_argument("--batch-bytes", type=int, default=1_000_000, help="approximate batch size")
    p.add_argument("--run-id", default=default_run_id(), help="RUN_ID stamped on every row")
    p.add_argument("--worker-offset", type=int, default=0, help="WORKER_ID of the first worker")
    p.add_argument("--json", action="store_true", help="also print one JSON line with all figures")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error(f"--workers must be >= 1, got {args.workers}")
    if not args.aggregate_mbps > 0:
        p.error(f"--aggregate-mbps must be > 0, got {args.aggregate_mbps}")
    if not args.duration_seconds > 0:
        p.error(f"--duration-seconds must be > 0, got {args.duration_seconds}")
    if args.batch_bytes < 1000:
        p.error(f"--batch-bytes must be >= 1000, got {args.batch_bytes}")
    return args


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"), format="%(message)s")
    args = parse_args(argv)
    print(
        f"benchmark: {args.workers} worker(s), {args.aggregate_mbps:g} MB/s total, "
        f"{args.duration_seconds:g} s, run id {args.run_id}",
        file=sys.stderr,
    )
    result = run(args)
    print(text_table.render(SUMMARY_COLUMNS, result["workers"], result["total"]))
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
