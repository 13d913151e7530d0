"""``elastic-channels monitor``: a run's worker lines -> the metrics table, as it runs."""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import threading
import time

from ..landing_table import WorkloadArgError, landing_table
from ..log import configure_logging
from ..model import METRICS_TABLE_NAME
from ..setting import seconds_between
from .monitor import Monitor
from .sources import pump, read_streams
from .sql_client import SqlError
from .target import TargetError, sink_from

DESCRIPTION = (
    f"Follow the worker lines of one run and write its windows to {METRICS_TABLE_NAME} "
    "while it runs: one row per worker per window, and one fleet row per window (sums, "
    "and percentiles from the workers' merged latency histograms) once every worker "
    "reported it or --grace-seconds passed; a late line updates its row. Lines come "
    "from files, stdin (-), or with --k8s from the run's pods. Rows go to an emulator "
    "(--profile, its info JSON) or to a Snowflake account (SNOWFLAKE_* variables), both "
    "through Snowflake's SQL API."
)
EPILOG = (
    "examples:\n"
    "  kubectl logs -f -l elastic-channels/run-id=RUN --max-log-requests 500 \\\n"
    "      | elastic-channels monitor - --run-id RUN\n"
    "  elastic-channels monitor --k8s --run-id RUN           # in the cluster\n"
    "  elastic-channels monitor worker-*.log --profile .elastic-channels/emulator/info.json\n"
    "\nRestarting it is safe: rows are keyed by run, worker and window start, so nothing "
    "is counted twice."
)


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("files", nargs="*", metavar="FILE", help="files of worker lines; - is stdin")
    p.add_argument("--run-id", help="the run to follow [RUN_ID] (default for files: the first "
                   "record's run id; required with --k8s)")  # fmt: skip
    p.add_argument("--k8s", action="store_true", help="follow the run's worker pods")
    p.add_argument("--namespace", default=None,
                   help="namespace of the pods [POD_NAMESPACE, default]")  # fmt: skip
    p.add_argument("--workers", type=int, default=None,
                   help="workers the run has, if known: a window waits for that many")  # fmt: skip
    p.add_argument("--grace-seconds", type=seconds_between(0, 3600), default=10.0,
                   help="write a fleet window this long after its end even if a worker has not "
                   "reported it (default: %(default)s)")  # fmt: skip
    p.add_argument("--exit-when-done", action="store_true",
                   help="with --k8s: exit once every pod of the run has ended and its windows "
                   "are written (default: stay up, idle, as a Deployment expects)")  # fmt: skip
    p.add_argument("--visible-wait-seconds", type=seconds_between(0, 3600), default=120.0,
                   help="at the end, wait this long at most for every acknowledged row to "
                   "be visible before the last ingest-to-visible read (default: "
                   "%(default)s)")  # fmt: skip
    p.add_argument("--no-visible", action="store_true",
                   help="do not read ingest-to-visible latency off the landing table's "
                   "METADATA$ROW_LAST_COMMIT_TIME (its columns stay NULL); a table without "
                   "row timestamps (Iceberg) turns the read off by itself, with a "
                   "warning")  # fmt: skip
    p.add_argument("--workload", default=None, metavar="NAME|FILE",
                   help="the run's workload, whose table ingest-to-visible is read off "
                   "[WORKLOAD] (default: resort-sales)")  # fmt: skip
    target = p.add_argument_group("where rows go")
    target.add_argument("--profile", default=os.environ.get("SNOWFLAKE_PROFILE"),
                        help="an emulator's info JSON [SNOWFLAKE_PROFILE]")  # fmt: skip
    for name in ("account", "user", "role", "warehouse", "database", "schema",
                 "private_key_file"):  # fmt: skip
        target.add_argument(f"--{name.replace('_', '-')}", dest=name,
                            help=f"[SNOWFLAKE_{name.upper()}]")  # fmt: skip
    p.set_defaults(func=cmd_monitor)


def _fail(message: str) -> int:
    print(f"elastic-channels monitor: error: {message}", file=sys.stderr)
    return 2


def cmd_monitor(args: argparse.Namespace) -> int:
    try:
        configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
    except ValueError as e:
        return _fail(str(e))
    run_id = args.run_id or os.environ.get("RUN_ID")
    if args.k8s and not run_id:
        return _fail("--k8s needs --run-id (or RUN_ID)")
    if not args.k8s and not args.files:
        return _fail("give FILE arguments, - for stdin, or --k8s")
    if args.workers is not None and args.workers < 1:
        return _fail(f"--workers must be >= 1, got {args.workers}")
    try:
        sink = sink_from(args.profile, vars(args), preflight=True)  # an account: reached
        workload = args.workload or os.environ.get("WORKLOAD")
        sink.follow(landing_table(workload, "--workload" if args.workload else "WORKLOAD"))
        sink.ensure_table()
    except (TargetError, SqlError, WorkloadArgError) as e:
        return _fail(str(e))
    visible = not args.no_visible and sink.visible_readable
    lines: queue.Queue = queue.Queue(maxsize=100_000)
    if args.k8s:
        assert run_id is not None
        try:
            sources = _start_k8s(run_id, args.namespace, lines)
        except Exception as e:  # no in-cluster config and no kubeconfig, or the API refused
            return _fail(f"cannot reach the Kubernetes API: {e}")
    else:
        read_streams(args.files, lines)
        sources = len(args.files)
    monitor = Monitor(
        run_id, sink, grace_s=args.grace_seconds, expected_workers=args.workers,
        visible=visible,
    )  # fmt: skip
    try:
        held = monitor.resume() if run_id else 0
    except SqlError as e:
        return _fail(f"reading what the table holds for {run_id}: {e}")
    if run_id:
        print(f"monitor {run_id}: {held} row(s) already in {METRICS_TABLE_NAME}", file=sys.stderr)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    pump(monitor, lines, sources, stop=stop.is_set, visible_wait_s=args.visible_wait_seconds)
    if monitor.run_id is None:
        return _fail("no worker record in the input (and no --run-id)")
    rc = _finish(monitor)
    if args.k8s and not args.exit_when_done and not stop.is_set():
        print(f"monitor {run_id}: every pod has ended; idle until stopped", file=sys.stderr)
        stop.wait()
    return rc


def _start_k8s(run_id: str, namespace: str | None, lines: queue.Queue) -> int:
    from .k8s import PodLogSource, feed_until_done, load_core_api, run_selector

    ns = namespace or os.environ.get("POD_NAMESPACE") or "default"
    source = PodLogSource(load_core_api(), ns, run_selector(run_id), lines)
    source.start()
    threading.Thread(target=feed_until_done, args=(source, lines), daemon=True).start()
    return 1


def _finish(monitor: Monitor, tries: int = 5) -> int:
    for attempt in range(tries):
        if not monitor.pending():
            break
        time.sleep(min(2**attempt, 10))
        monitor.flush(final=True)
    print(
        f"monitor {monitor.run_id}: {monitor.rows_written} row(s) written, "
        f"{monitor.stages.rows_written} per-stage row(s), {monitor.garbage_lines} line(s) "
        f"skipped, {monitor.other_run_lines} of other runs",
        file=sys.stderr,
    )
    for sentence in monitor.tally.report():  # bad lines, refused rows, worker id clashes
        print(f"monitor {monitor.run_id}: {sentence}", file=sys.stderr)
    if monitor.reader.error is not None:
        print(
            f"monitor {monitor.run_id}: ingest-to-visible unknown (NULL) where it could not "
            f"be read: {monitor.reader.error}",
            file=sys.stderr,
        )
    if monitor.pending():
        return _fail(f"{monitor.pending()} row(s) not written: {monitor.last_error}")
    return 0


def build_parser(prog: str = "elastic-channels monitor") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EPILOG)
    configure_parser(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))
