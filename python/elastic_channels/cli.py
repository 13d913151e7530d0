"""``elastic-channels``: the main command.

    elastic-channels run --workers 2 --target-bps 20e6 --duration-seconds 30
    elastic-channels bench --workers 1 --aggregate-mbps 100 --duration-seconds 10

``run`` streams generated sales through the real Snowpipe Streaming SDK. With no
Snowflake configuration (no --profile, no SNOWFLAKE_ACCOUNT) it starts the embedded
emulator and checks afterwards that every row landed. ``bench`` is the client-only
benchmark (no SDK, no server).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from elastic_channels import fleet_run
from elastic_channels.cli_help import DefaultsHelpFormatter
from elastic_channels.worker_config import default_run_id

DEFAULT_HOME = Path(".elastic-channels")


def _run_parser(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="stream generated sales through the SDK (into the embedded emulator by default)",
        description=(
            "Run N worker processes, each one SDK client + one elastic channel, at a target "
            "rate for a fixed time. Prints fleet-wide MB/s, rows/s and ack latency per window, "
            "then a summary table; against the embedded emulator it also counts rows landed, "
            "duplicates and lost, and the ingest-to-visible latency."
        ),
        formatter_class=DefaultsHelpFormatter,
    )
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument(
        "--target-bps", type=float, default=20e6, help="target NDJSON bytes/s per worker"
    )
    p.add_argument("--duration-seconds", type=float, default=30.0, help="how long to send")
    p.add_argument("--run-id", default=None, help="RUN_ID; default run-<UTC time>")
    p.add_argument("--batch-bytes", type=int, default=1_000_000, help="bytes per append")
    p.add_argument("--window-seconds", type=float, default=5.0, help="metrics window")
    p.add_argument(
        "--profile",
        default=os.environ.get("SNOWFLAKE_PROFILE"),
        help="SDK profile JSON for a real account [SNOWFLAKE_PROFILE]; without it (and "
        "without SNOWFLAKE_ACCOUNT) the embedded emulator is used",
    )
    p.add_argument("--database", help="target database (real account)")
    p.add_argument("--schema", help="target schema (real account)")
    p.add_argument("--pipe", default="RESORT_SALES_PIPE", help="target pipe")
    p.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_HOME / "emulator",
        help="the embedded emulator's data (kept, so the table can be queried afterwards)",
    )
    p.add_argument(
        "--chart",
        type=Path,
        default=None,
        help="PNG chart of throughput and ack latency; default .elastic-channels/RUN_ID.png",
    )
    p.add_argument("--json", action="store_true", help="print one final JSON line with it all")
    p.add_argument(
        "--worker-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG to every worker (repeatable), e.g. --worker-arg=--append-mode=raw",
    )
    p.set_defaults(func=cmd_run)


def _bench_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="client-only benchmark: generation + encoding, no SDK",
        add_help=False,
    )
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from elastic_channels import benchmark_client_cpu

    return benchmark_client_cpu.main(args.args)


def _validate(args: argparse.Namespace) -> str | None:
    if args.workers < 1:
        return f"--workers must be >= 1, got {args.workers}"
    if not args.target_bps > 0:
        return f"--target-bps must be > 0, got {args.target_bps}"
    if not args.duration_seconds > 0:
        return f"--duration-seconds must be > 0, got {args.duration_seconds}"
    return None


def cmd_run(args: argparse.Namespace) -> int:
    error = _validate(args)
    if error:
        print(f"elastic-channels run: error: {error}", file=sys.stderr)
        return 2
    run_id = args.run_id or default_run_id()
    real = bool(args.profile or os.environ.get("SNOWFLAKE_ACCOUNT"))
    env = dict(os.environ)
    common = [
        "--run-id", run_id,
        "--target-bps", repr(args.target_bps),
        "--duration-seconds", repr(args.duration_seconds),
        "--batch-bytes", str(args.batch_bytes),
        "--window-seconds", repr(args.window_seconds),
        *args.worker_arg,
    ]  # fmt: skip
    emu = None
    if real:
        if args.profile:
            common += ["--profile", args.profile]
        for flag in ("database", "schema", "pipe"):
            if getattr(args, flag):
                common += [f"--{flag}", getattr(args, flag)]
        target = "Snowflake"
    else:
        from elastic_channels.emulator import Emulator, EmulatorConfig

        emu = Emulator(EmulatorConfig(data_dir=args.data_dir, append_buffer_ms=100)).start()
        info_file = args.data_dir / "info.json"
        fleet_run.write_info(info_file, emu.info())
        common += ["--profile", str(info_file)]
        target = f"the embedded emulator at {emu.url} (data in {args.data_dir})"
    print(
        f"run {run_id}: {args.workers} worker(s) x {args.target_bps / 1e6:g} MB/s for "
        f"{args.duration_seconds:g} s into {target}",
        file=sys.stderr,
        flush=True,
    )
    try:
        workers = fleet_run.start_workers(args.workers, common, env)
        deadline = time.monotonic() + args.duration_seconds + 300
        fleet = fleet_run.watch(workers, sys.stderr, deadline)
        summaries = [wp.summary for wp in workers if wp.summary]
        for wp in workers:
            if wp.summary is None:
                print(
                    f"worker {wp.worker_id} exited {wp.proc.returncode} without a summary:\n  "
                    + "\n  ".join(wp.stderr_tail[-10:]),
                    file=sys.stderr,
                )
        totals = fleet_run.fleet_totals(summaries)
        landed = fleet_run.verify_landed(emu, run_id, summaries) if emu is not None else None
    finally:
        if emu is not None:
            emu.stop()
    print(fleet_run.summary_table(summaries, totals))
    if landed is not None:
        print(
            f"\nlanded {landed['rows_landed']:,} rows of {landed['rows_expected']:,} generated: "
            f"{landed['duplicates']:,} duplicates, {landed['lost']:,} lost; ingest-to-visible "
            f"p50 {landed['visible_p50_ms']} ms, p99 {landed['visible_p99_ms']} ms"
        )
        print(
            f"query it: python -m elastic_channels.emulator query --data-dir {args.data_dir} "
            f"\"SELECT RESORT, sum(AMOUNT) FROM RESORT_SALES WHERE RUN_ID = '{run_id}' "
            'GROUP BY 1 ORDER BY 2 DESC LIMIT 5"'
        )
    chart = args.chart or DEFAULT_HOME / f"{run_id}.png"
    chart_note = _write_chart(chart, fleet, run_id)
    print(chart_note, file=sys.stderr)
    failed = [wp.worker_id for wp in workers if wp.proc.returncode != 0]
    result: dict[str, Any] = {
        "run_id": run_id,
        "workers": args.workers,
        "target_bps": args.target_bps,
        "totals": totals,
        "landed": landed,
        "windows": fleet,
        "worker_summaries": summaries,
        "failed_workers": failed,
        "chart": str(chart) if chart.exists() else None,
    }
    if args.json:
        print(json.dumps(result))
    ok = not failed and len(summaries) == args.workers and (landed is None or landed["lost"] == 0)
    return 0 if ok else 1


def _write_chart(path: Path, fleet: list[dict[str, Any]], run_id: str) -> str:
    try:
        from elastic_channels.chart import write_chart
    except ImportError as e:
        return f"no chart: {e} (pip install 'elastic-native[chart]')"
    if not fleet:
        return "no chart: no complete window was reported"
    write_chart(path, fleet, run_id)
    return f"chart: {path}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="elastic-channels",
        description=__doc__.split("\n\n")[0].strip("`: ") + ": " + __doc__.split("\n\n")[2],
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _run_parser(sub)
    _bench_parser(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
