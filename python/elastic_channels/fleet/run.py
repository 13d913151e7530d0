"""``elastic-channels run [SCENARIO]``: N local worker processes, watched, and what
landed checked.

A run follows a scenario (``elastic_channels.scenario``): a YAML file, or the name of a
shipped one, with flags overriding single keys; with none, the flags are the scenario.
Each worker is handed the scenario's settings as flags (``--stages`` in bytes/s,
``--warmup-seconds``, ``--scenario-name``/``--scenario-hash``, ...) and all follow the
same wall-clock schedule from one agreed start.

With no Snowflake configuration (no --profile, no SNOWFLAKE_ACCOUNT) the embedded
emulator is started in this process and the workers ingest into it; afterwards every
generated TXID is looked up in its table to count what landed, what landed twice and
what was lost, and the ingest-to-visible latency is read off the landed rows.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..landing_table import WorkloadArgError, landing_table
from ..log import configure_logging
from ..measures import MB
from ..results.price import PRICE_SETTINGS, price_settings
from ..results.store import safe_name
from ..scenario import Scenario, run_seconds, scenario_hash, to_yaml, worker_flags
from ..scenario.run_args import add_arguments, describe, run_scenario
from ..setting import add_flags
from ..worker.config import default_run_id
from ..worker.settings import add_settings, resolve
from . import local
from .find_max import SearchPlan
from .interrupt import Interruption, RunAborted
from .run_output import (
    finish_monitor,
    say_last_words,
    start_monitor,
)
from .run_record import DEFAULT_HOME, Collected, record_run
from .run_search import SearchRun, searched
from .run_search import add_argument as add_search_argument
from .run_target import TargetError, default_data_dir, open_target
from .run_target import account_problem as _account_problem  # noqa: F401 (tests)
from .verify import verify_landed
from .watch import Schedule, watch

#: The worker settings ``run`` takes: a scenario's keys (scenario/run_args.py adds their
#: flags), and the account's and the run id, which it hands on to every worker.
SHARED_SETTINGS = (
    "run_id", "target_bps", "duration_seconds", "warmup_seconds", "batch_bytes",
    "max_inflight_bytes", "window_seconds", "channels", "profile", "database", "schema", "pipe",
    "workload",
)  # fmt: skip
#: The account's settings and the run id: passed on to every worker as they resolve.
ACCOUNT_SETTINGS = ("run_id", "profile", "database", "schema", "pipe")

DESCRIPTION = (
    "Run a scenario: N worker processes, each one SDK client + one elastic channel, "
    "following the scenario's load shape (stages of constant rates and ramps, after a "
    "warmup) on one wall-clock schedule. SCENARIO is a YAML file (docs/SCENARIOS.md) or "
    "the name of a shipped one; the flags below override single keys of it. Without a "
    "SCENARIO the flags are the scenario (named 'flags': one constant --target-bps for "
    "--duration-seconds); --print-scenario shows the file a command line comes to. "
    "Prints fleet-wide MB/s, rows/s and ack latency per window, then a summary table; "
    "against the embedded emulator (the default when no account is configured) it also "
    "counts rows landed, duplicates and lost, and the ingest-to-visible latency."
)
EPILOG = (
    "examples:\n"
    "  elastic-channels run step                          # scenarios/step.yaml, shipped\n"
    "  elastic-channels run scenarios/spike.yaml --workers 4\n"
    "  elastic-channels run reference --target-bps 20e6 --warmup-seconds 0\n"
    "  elastic-channels run --workers 2 --target-bps 20e6 --duration-seconds 30\n"
    "  elastic-channels run --target-bps 5e6 --print-scenario > mine.yaml\n"
    "\n"
    "with a SCENARIO, a flag replaces its key: --target-bps makes the stages one constant\n"
    "stage as long as they were; --duration-seconds sets the length of a scenario of one\n"
    "stage (an error with more); --profile makes the target an account. The environment\n"
    "(TARGET_BPS and the like) fills in only the flags-only form."
)


def configure_parser(p: argparse.ArgumentParser) -> None:
    add_arguments(p)  # SCENARIO, --print-scenario and the flags of a scenario's keys
    add_settings(p, ACCOUNT_SETTINGS)
    add_flags(p, PRICE_SETTINGS)  # the run's ingest price (results/price.py)
    local_args = p.add_argument_group("this command")
    add_search_argument(local_args)
    local_args.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the embedded emulator's data, kept so the table can be queried afterwards "
        f"(default: {DEFAULT_HOME / 'emulator'}, or {DEFAULT_HOME / 'emulator-iceberg'} with "
        "--table-format iceberg)",
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
    """A flag with a value no scenario takes, named as given (the scenario's own checks
    name the key for the rest)."""
    if args.workers is not None and args.workers < 1:
        return f"--workers must be >= 1, got {args.workers}"
    given = args if args.scenario else argparse.Namespace(**v)  # flags form: env too
    for flag, value in (("--target-bps", given.target_bps),
                        ("--duration-seconds", given.duration_seconds)):  # fmt: skip
        if value is not None and not (math.isfinite(value) and value > 0):
            return f"{flag} must be a finite number > 0, got {value}"
    return None


def _fail(message: str) -> int:
    for line in message.splitlines():
        print(f"elastic-channels run: error: {line}", file=sys.stderr)
    return 2


def cmd_run(args: argparse.Namespace) -> int:
    try:
        # Warnings only by default: the in-process emulator and monitor log at INFO.
        configure_logging(os.environ.get("LOG_LEVEL", "WARNING"))
        v = _values(args)
        error = _problem(args, v)
        if error:
            return _fail(error)
        price_settings(vars(args), os.environ)  # a bad price fails now, not after the run
        scenario, scenario_file = run_scenario(args, v, os.environ)
        scenario, plan = searched(scenario, args.find_max)  # the staircase, if searching
    except ValueError as e:  # ScenarioError: one line per problem, each naming its key
        return _fail(str(e))
    if args.print_scenario:
        print(to_yaml(scenario), end="")
        return 0
    return _run(args, v, scenario, scenario_file, plan)


def _run(
    args: argparse.Namespace,
    v: dict[str, Any],
    s: Scenario,
    scenario_file: str | None,
    plan: SearchPlan | None = None,
) -> int:
    try:
        land = landing_table(s.workload, "workload")
    except WorkloadArgError as e:
        return _fail(str(e))
    if args.data_dir is None:
        args.data_dir = default_data_dir(DEFAULT_HOME, land, s.destination.table_format)
    intr = Interruption(sys.stderr)
    with intr.installed():
        try:
            account = {name: v[name] for name in ACCOUNT_SETTINGS}
            target = open_target(s, account, args.data_dir, land)
        except TargetError as e:
            return _fail(str(e))
        except RunAborted:
            target = None
        return _run_on(args, v, s, scenario_file, plan, land, target, intr)


def _run_on(
    args: argparse.Namespace,
    v: dict[str, Any],
    s: Scenario,
    scenario_file: str | None,
    plan: SearchPlan | None,
    land: Any,
    target: Any,
    intr: Interruption,
) -> int:
    """The run on an open target (None: a second signal came while it opened), with
    SIGINT/SIGTERM going to ``intr``; its exit code, its outcome's."""
    run_id = v["run_id"]
    digest = scenario_hash(s)
    emu = target.emulator if target is not None else None
    mon = None
    fleet: list[dict[str, Any]] = []
    metrics: list[dict[str, Any]] | None = None
    workers: list[local.WorkerProc] = []
    landed: dict[str, Any] | None = None
    search = SearchRun(plan, s) if plan is not None else None
    started_at = time.time()
    start_at: float | None = None
    try:
        if target is None or intr.interrupted:
            raise RunAborted("interrupted before the workers started")
        common = target.worker_args + worker_flags(s) + args.worker_arg
        if not any(a.split("=")[0] == "--workload" for a in common):  # said outright: the
            common += ["--workload", s.workload]  # WORKLOAD workers inherit may not be s's
        print(
            f"run {run_id}: scenario {s.name} ({digest}): {s.workers} worker(s) x "
            f"{describe(s)} of {land.workload} rows into {land.name} in {target.text}",
            file=sys.stderr,
            flush=True,
        )
        if not args.no_monitor:
            flags = {k: v[k] for k in ("database", "schema", "pipe")}
            mon = start_monitor(
                run_id, s.workers, emu, target.profile, not args.no_visible, land, flags
            )
        # One start for all: each worker opens its client and channel, then waits for it,
        # so they send together and follow one schedule: the run's rate is theirs added
        # up. A worker whose channel opens later joins the schedule where it stands.
        start_at = start_time(time.time() + start_allowance(s.workers), s.window_seconds)
        common_start = [*common, "--start-at", f"{start_at:.3f}"]
        logs = DEFAULT_HOME / "logs" / safe_name(run_id)
        workers = local.start_workers(s.workers, common_start, dict(os.environ), log_dir=logs)
        print(f"workers' logs (the SDK's lines too): {logs}/", file=sys.stderr, flush=True)
        intr.processes = [wp.proc for wp in workers]
        if search is not None:
            search.bind(workers)
        deadline = time.monotonic() + start_allowance(s.workers) + run_seconds(s) + 300
        fleet = watch(
            workers,
            sys.stderr,
            deadline,
            on_record=mon.feed if mon is not None else None,
            on_idle=mon.tick if mon is not None else None,
            on_window=search.on_window if search is not None else None,
            schedule=Schedule(start_at, run_seconds(s), s.window_seconds),
            interruption=intr,
        )
        summaries = [wp.summary for wp in workers if wp.summary]
        say_last_words(workers)
        if emu is not None and not intr.hard:
            rows = sum(int(x.get("rows_generated") or 0) for x in summaries)
            print(f"checking what landed: the run's rows ({rows:,} generated by the "
                  "workers with a summary) in the emulator's table", file=sys.stderr,
                  flush=True)  # fmt: skip
            killed = [
                {"worker_id": wp.worker_id, "exit_code": wp.proc.returncode,
                 "windows": wp.windows, "started_at": wp.started_at,
                 "exited_at": wp.exited_at}
                for wp in workers if wp.summary is None
            ]  # fmt: skip
            warm_end = start_at + s.warmup_seconds if s.warmup_seconds else None
            pacing = _pacing(s, args.worker_arg)
            landed = verify_landed(emu, run_id, summaries, killed, pacing, land, warm_end)
        if mon is not None:
            print("monitor: writing the last windows and their ingest-to-visible figures",
                  file=sys.stderr, flush=True)  # fmt: skip
            metrics = finish_monitor(mon, 5 if intr.hard else 60)
    except RunAborted:
        pass  # a second signal: record what there is
    finally:
        if target is not None:
            target.stop()
    got = Collected(workers, fleet, metrics, landed, started_at, start_at)
    return record_run(args, v, s, scenario_file, emu, search, got, intr)


def start_time(earliest: float, window_seconds: float) -> float:
    """The first window boundary (windows start on multiples of their length since the
    epoch) at or after ``earliest``: the run's first window is then a whole one."""
    return math.ceil(earliest / window_seconds) * window_seconds


def start_allowance(workers: int) -> float:
    """Seconds from starting the workers to their agreed start: time for each to start
    Python, open an SDK client and its channel (1-2 s each on a quiet box; workers
    start one after another and share its cores)."""
    return min(30.0, 3.0 + 0.5 * workers)


def _pacing(s: Scenario, worker_args: list[str]) -> dict[str, Any] | None:
    """What paces every worker (a killed one's loss is bounded by it: the scenario's
    highest rate), or None when a ``--worker-arg`` may have changed it."""
    changed = ("--target-bps", "--batch-bytes", "--channels", "--stages", "--warmup-seconds")
    if any(a.split("=")[0] in changed for a in worker_args):
        return None
    return {"target_bps": s.peak_mbps * MB, "batch_bytes": s.batch_bytes, "channels": s.channels}
