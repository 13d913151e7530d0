"""``elastic-channels run``: N local worker processes, watched, and what landed checked.

With no Snowflake configuration (no --profile, no SNOWFLAKE_ACCOUNT) the embedded
emulator is started in this process and the workers ingest into it; afterwards every
generated TXID is looked up in its table to count what landed, what landed twice and
what was lost, and the ingest-to-visible latency is read off the landed rows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..account import account_settings
from ..log import configure_logging
from ..model import METRICS_TABLE_NAME
from ..setting import SettingError
from ..worker.config import default_run_id
from ..worker.settings import BY_NAME, add_settings, flag_args, resolve
from . import local, report
from .verify import describe, rows_of_run, verify_landed

DEFAULT_HOME = Path(".elastic-channels")
#: The worker settings ``run`` takes itself and hands on to every worker.
SHARED_SETTINGS = (
    "run_id", "target_bps", "duration_seconds", "batch_bytes", "window_seconds", "channels",
    "profile", "database", "schema", "pipe",
)  # fmt: skip

DESCRIPTION = (
    "Run N worker processes, each one SDK client + one elastic channel, at a target rate "
    "for a fixed time. Prints fleet-wide MB/s, rows/s and ack latency per window, then a "
    "summary table; against the embedded emulator (the default when no account is "
    "configured) it also counts rows landed, duplicates and lost, and the "
    "ingest-to-visible latency."
)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    add_settings(p, SHARED_SETTINGS)
    local_args = p.add_argument_group("this command")
    local_args.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the embedded emulator's data, kept so the table can be queried afterwards "
        f"(default: {DEFAULT_HOME / 'emulator'}, or {DEFAULT_HOME / 'emulator-iceberg'} with "
        "--table-format iceberg)",
    )
    local_args.add_argument(
        "--table-format",
        choices=("native", "iceberg"),
        default="native",
        help="what the embedded emulator lands into: a native (DuckDB) table, or an Apache "
        "Iceberg table (Parquet + Iceberg metadata in DATA_DIR/iceberg, one commit per "
        "landed flush; needs the iceberg extra). Against Snowflake the table is what setup "
        "made (setup --table-format)",
    )
    local_args.add_argument(
        "--chart",
        type=Path,
        default=None,
        help="PNG chart of throughput and ack latency (default: .elastic-channels/RUN_ID.png)",
    )
    local_args.add_argument(
        "--json", action="store_true", help="print one final JSON line with it all"
    )
    local_args.add_argument(
        "--no-monitor",
        action="store_true",
        help="do not write the run's windows to ELASTIC_K8S_METRICS (by default a "
        "monitor in this process writes them while the run goes on)",
    )
    local_args.add_argument(
        "--no-visible",
        action="store_true",
        help="the monitor does not read ingest-to-visible latency off the landing table's "
        "commit times (METADATA$ROW_LAST_COMMIT_TIME; a table without row timestamps turns "
        "it off by itself, with a warning)",
    )
    local_args.add_argument(
        "--worker-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG to every worker (repeatable), e.g. --worker-arg=--append-mode=raw",
    )
    p.set_defaults(func=cmd_run)


def _values(args: argparse.Namespace) -> dict[str, Any]:
    env = os.environ
    values = {name: resolve(name, getattr(args, name), env) for name in SHARED_SETTINGS}
    values["run_id"] = values["run_id"] or default_run_id()
    return values


def _problem(args: argparse.Namespace, v: dict[str, Any]) -> str | None:
    if args.workers < 1:
        return f"--workers must be >= 1, got {args.workers}"
    if not v["target_bps"] > 0:
        return f"--target-bps must be > 0, got {v['target_bps']}"
    if not v["duration_seconds"] > 0:
        return f"--duration-seconds must be > 0, got {v['duration_seconds']}"
    return None


def cmd_run(args: argparse.Namespace) -> int:
    try:
        # Warnings only by default: the in-process emulator and monitor log at INFO.
        configure_logging(os.environ.get("LOG_LEVEL", "WARNING"))
        v = _values(args)
    except ValueError as e:
        print(f"elastic-channels run: error: {e}", file=sys.stderr)
        return 2
    error = _problem(args, v)
    if error:
        print(f"elastic-channels run: error: {error}", file=sys.stderr)
        return 2
    run_id = v["run_id"]
    if args.data_dir is None:
        suffix = "-iceberg" if args.table_format == "iceberg" else ""
        args.data_dir = DEFAULT_HOME / f"emulator{suffix}"
    real = bool(v["profile"] or os.environ.get("SNOWFLAKE_ACCOUNT", "").strip())
    emu = None
    if real:
        error = _account_problem(v)
        if error:  # once, here: no worker is started to find it
            print(f"elastic-channels run: error: {error}", file=sys.stderr)
            return 2
        common = flag_args(v)
        target = "Snowflake"
    else:
        from ..emulator import Emulator, EmulatorConfig
        from ..emulator.storage.store import StoreError

        try:
            config = EmulatorConfig(
                data_dir=args.data_dir, append_buffer_ms=100, table_format=args.table_format
            )
            emu = Emulator(config).start()
        except (ValueError, OSError, StoreError) as e:
            print(f"elastic-channels run: error: the emulator did not start: {e}", file=sys.stderr)
            return 2
        taken = _run_id_taken(emu, run_id, args.data_dir)
        if taken:
            emu.stop()
            print(f"elastic-channels run: error: {taken}", file=sys.stderr)
            return 2
        info_file = args.data_dir / "info.json"
        write_info(info_file, emu.info())
        common = flag_args({**v, "profile": str(info_file)})
        kind = "an Iceberg table" if args.table_format == "iceberg" else "a native table"
        target = f"the embedded emulator at {emu.url} ({kind}, data in {args.data_dir})"
    common += args.worker_arg
    print(
        f"run {run_id}: {args.workers} worker(s) x {v['target_bps'] / 1e6:g} MB/s for "
        f"{v['duration_seconds']:g} s into {target}",
        file=sys.stderr,
        flush=True,
    )
    mon = None
    if not args.no_monitor:
        mon = _start_monitor(run_id, args.workers, emu, v["profile"], not args.no_visible)
    metrics: list[dict[str, Any]] | None = None
    try:
        # One start for all: each worker opens its client and channel, then waits for it,
        # so they send together and the run's rate is theirs added up. A worker whose
        # channel opens later starts at once.
        start_at = start_time(time.time() + start_allowance(args.workers), window_s(v))
        common_start = [*common, "--start-at", f"{start_at:.3f}"]
        workers = local.start_workers(args.workers, common_start, dict(os.environ))
        deadline = time.monotonic() + v["duration_seconds"] + 300
        fleet = local.watch(
            workers,
            sys.stderr,
            deadline,
            on_record=mon.feed if mon is not None else None,
            on_idle=mon.tick if mon is not None else None,
        )
        summaries = [wp.summary for wp in workers if wp.summary]
        killed = [
            {"worker_id": wp.worker_id, "exit_code": wp.proc.returncode, "windows": wp.windows,
             "started_at": wp.started_at, "exited_at": wp.exited_at}
            for wp in workers if wp.summary is None
        ]  # fmt: skip
        for wp in workers:
            if wp.summary is None:  # what it said last that was not routine
                said = [x for x in wp.stderr_tail if " INFO " not in x] or ["(nothing)"]
                print(
                    f"worker {wp.worker_id} {wp.exit_text()} without a summary; its last "
                    "words:\n  " + "\n  ".join(said[-10:]),
                    file=sys.stderr,
                )
        totals = report.fleet_totals(summaries)
        pacing = _pacing(v, args.worker_arg)
        landed = None if emu is None else verify_landed(emu, run_id, summaries, killed, pacing)
        if mon is not None:
            metrics = _finish_monitor(mon)
    finally:
        if emu is not None:
            emu.stop()
    out = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON alone
    if metrics:
        print(f"fleet windows, as {METRICS_TABLE_NAME} holds them:", file=out)
        print(report.windows_table(metrics, totals) + "\n", file=out)
    print(report.summary_table(summaries, totals), file=out)
    if landed is not None:
        print("\n" + describe(landed), file=out)
        print(
            f"query it: elastic-channels emulator query --data-dir {args.data_dir} "
            f"\"SELECT * FROM {METRICS_TABLE_NAME} WHERE RUN_ID = '{run_id}' "
            'ORDER BY WINDOW_START"',
            file=out,
        )
    chart = args.chart or DEFAULT_HOME / f"{run_id}.png"
    print(_write_chart(chart, fleet, run_id, totals), file=sys.stderr)
    failed = [wp.worker_id for wp in workers if wp.proc.returncode != 0]
    result: dict[str, Any] = {
        "run_id": run_id,
        "workers": args.workers,
        "target_bps": v["target_bps"],
        "totals": totals,
        "landed": landed,
        "windows": fleet,
        "metrics_windows": metrics,
        "worker_summaries": summaries,
        "failed_workers": failed,
        "chart": str(chart) if chart.exists() else None,
    }
    if args.json:
        print(json.dumps(result))
    ok = not failed and len(summaries) == args.workers and (landed is None or landed["lost"] == 0)
    ice = (landed or {}).get("iceberg")
    if ice and ice["run_rows_read_by_pyiceberg"] != landed["rows_landed"]:  # type: ignore[index]
        print("the Iceberg table read by pyiceberg disagrees with the SQL count", file=sys.stderr)
        ok = False
    under = [s["worker_id"] for s in summaries if s.get("under_target")]
    if under:
        print(
            f"worker(s) {under} ended under their target rate (see under_target)", file=sys.stderr
        )
    return 0 if ok else 1


def window_s(v: dict[str, Any]) -> float:
    return float(v.get("window_seconds") or BY_NAME["window_seconds"].default)


def start_time(earliest: float, window_seconds: float) -> float:
    """The first window boundary (windows start on multiples of their length since the
    epoch) at or after ``earliest``: the run's first window is then a whole one."""
    return math.ceil(earliest / window_seconds) * window_seconds


def start_allowance(workers: int) -> float:
    """Seconds from starting the workers to their agreed start: time for each to start
    Python, open an SDK client and its channel (1-2 s each on a quiet box; workers
    start one after another and share its cores)."""
    return min(30.0, 3.0 + 0.5 * workers)


def _account_problem(v: dict[str, Any]) -> str | None:
    """What keeps the account settings from starting a worker (the first missing or bad
    one, named), checked as every worker and the monitor will resolve them; or None."""
    flags = {name: v[name] for name in ("profile", "database", "schema", "pipe")}
    try:
        account_settings(flags).check("account", "user", "private_key", "database")
    except SettingError as e:
        return str(e)
    return None


def _run_id_taken(emu: Any, run_id: str, data_dir: Path) -> str | None:
    """Why ``run_id`` cannot be used in this emulator (its tables hold rows of it), or
    None: a second run with an id would count the first one's rows as its own."""
    held = rows_of_run(emu, run_id)
    if not held:
        return None
    rows = " and ".join(f"{n:,} row(s) in {table}" for table, n in held.items())
    return (
        f"--run-id {run_id!r} is taken: the emulator's data in {data_dir} holds {rows} of "
        "it, which this run would count as its own (as duplicates); pick another --run-id "
        "(or leave it out for a fresh one), or use another --data-dir"
    )


def _pacing(v: dict[str, Any], worker_args: list[str]) -> dict[str, Any] | None:
    """What paces every worker (a killed one's loss is bounded by it), or None when a
    ``--worker-arg`` may have changed it."""
    changed = ("--target-bps", "--batch-bytes", "--channels")
    if any(a.split("=")[0] in changed for a in worker_args):
        return None
    channels = resolve("channels", None, os.environ)
    return {"target_bps": v["target_bps"], "batch_bytes": v["batch_bytes"], "channels": channels}


def _start_monitor(run_id: str, workers: int, emu: Any, profile: str | None, visible: bool) -> Any:
    """A monitor in this process writing the run's windows to the metrics table of the
    target (the emulator's database, or the account's), or None with a note why not."""
    try:
        from ..monitor.in_run import RunMonitor

        return RunMonitor(run_id, workers, emulator=emu, profile=profile, visible=visible)
    except Exception as e:  # no SQL access to the account, a missing extra: run without
        print(f"monitor off: {e} (the run goes on; see --no-monitor)", file=sys.stderr)
        return None


def _finish_monitor(mon: Any) -> list[dict[str, Any]] | None:
    try:
        return list(mon.finish(visible_wait_s=60))
    except Exception as e:
        print(f"monitor: could not finish: {e}", file=sys.stderr)
        return None


def _write_chart(
    path: Path, fleet: list[dict[str, Any]], run_id: str, totals: dict[str, Any]
) -> str:
    try:
        from .chart import write_chart
    except ImportError as e:
        return f"no chart: {e} (pip install '.[chart]' in a checkout)"
    if not fleet:
        return "no chart: no complete window was reported"
    write_chart(path, fleet, run_id, totals)
    return f"chart: {path}"


def write_info(path: Path, info: dict[str, Any]) -> None:
    """The emulator's connection info for the workers, readable by this user only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(info, f)
