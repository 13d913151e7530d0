"""``elastic-channels dashboard``: start the Streamlit app on 127.0.0.1.

It serves ``asgi.py``: the app behind a check that answers only requests addressed to
127.0.0.1:PORT (or localhost:PORT), with Streamlit's developer toolbar (Deploy, rerun,
clear cache) hidden (``client.toolbarMode = "viewer"``), CORS and XSRF protection on.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import textwrap
from pathlib import Path

from ..env_file import load_settings_file
from ..worker.settings import BY_NAME as RUN_SETTINGS
from .settings import DEFAULT_HOME, DEFAULT_REFRESH_S, DEFAULT_WORKLOAD, ENV, Settings

__all__ = ["DESCRIPTION", "EPILOG", "STREAMLIT_OPTIONS", "build_command", "configure_parser", "run"]

APP = Path(__file__).resolve().parent / "asgi.py"
#: What serving ``APP`` needs: Streamlit's ASGI entry point (1.53+) and its server.
ASGI_MODULES = ("streamlit.starlette", "starlette", "uvicorn")
HOST = "127.0.0.1"
#: How much lower the server runs in CPU priority than the shell that starts it.
DEFAULT_NICE = 10
#: Streamlit options every launch sets (``--name value`` on the command line).
STREAMLIT_OPTIONS = {
    "server.headless": "true",
    "browser.gatherUsageStats": "false",
    "server.fileWatcherType": "none",
    # a viewer's toolbar: no Deploy button, no rerun / clear cache / settings for developers
    "client.toolbarMode": "viewer",
    # tracebacks go to the dashboard's log; the page says what failed
    "client.showErrorDetails": "none",
    "server.enableCORS": "true",
    "server.enableXsrfProtection": "true",
}

DESCRIPTION = textwrap.fill(
    "Show a run in the browser: 'Resort sales' (synthetic sales: revenue by resort and "
    "region, what each resort sells, passholder share, payment and customer mix, the "
    "latest sales with their ingest-to-visible delay) for the resort-sales workload, "
    "'Latest rows' (the run's row count, its latest rows, ingest-to-visible) for any "
    "other workload (--workload), and 'Run' (fleet MB/s and rows/s, workers reporting, "
    "ack and ingest-to-visible latency, resends, retries and errors, per-worker state, "
    "rows landed, duplicates and lost) from the metrics table. Every figure is SQL on "
    "the target: the embedded emulator's data dir (by default the one 'run' wrote the "
    "workload's rows to last; live while a run goes on, from the files after it), or "
    "an account with --profile / SNOWFLAKE_* (through its SQL API). Serves on "
    "127.0.0.1 only, and answers only requests addressed to 127.0.0.1:PORT or "
    "localhost:PORT. A refresh re-reads the run; refreshing stops once the run is over.",
    79,
)
EPILOG = (
    "examples:\n"
    "  elastic-channels run --workers 2 --target-bps 20e6 --duration-seconds 120  # shell 1\n"
    "  elastic-channels dashboard                                                # shell 2\n"
    "then open http://127.0.0.1:8501. Needs the 'dashboard' extra: "
    "pip install '.[dashboard]' in a checkout."
)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 1..65535, got {port}")
    return port


def _refresh(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0.5 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"give 0.5 to 3600 seconds, got {value:g}")
    return value


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--port", type=_port, default=8501, help="port on 127.0.0.1 [8501]")
    p.add_argument(
        "--workload",
        default=None,
        help="the workload whose rows the run landed: a shipped one by name "
        "(resort-sales, iot-telemetry, clickstream, wide-events) or a workload file "
        f"(YAML, docs/WORKLOADS.md), as 'run --workload' took it [WORKLOAD, {DEFAULT_WORKLOAD}]",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"the emulator's data dir [the one under {DEFAULT_HOME} that 'run' wrote the "
        "workload's rows to last: emulator, emulator-iceberg, emulator-<table>...]",
    )
    p.add_argument(
        "--profile",
        default=None,
        help="an SDK profile JSON of an account to read instead of the emulator (as "
        "'run --profile'); SNOWFLAKE_ACCOUNT, _USER, _PRIVATE_KEY_FILE, _DATABASE, "
        "_SCHEMA, _WAREHOUSE, _ROLE work too",
    )
    for name in ("database", "schema"):  # as 'run' takes them: one help, one variable
        setting = RUN_SETTINGS[name]
        p.add_argument(str(setting.flag), dest=name, default=None, help=setting.help_text())
    p.add_argument(
        "--refresh-seconds",
        type=_refresh,
        default=DEFAULT_REFRESH_S,
        help=f"auto-refresh period (a toggle in the app turns it off) [{DEFAULT_REFRESH_S:g}]",
    )
    p.add_argument(
        "--nice",
        type=_nice,
        default=DEFAULT_NICE,
        help="lower the server's CPU priority by this much (as nice(1)), so that on a "
        "machine shared with a run the run's worker and emulator get the CPU first; 0 "
        f"keeps this shell's priority [{DEFAULT_NICE}]",
    )
    p.set_defaults(func=run)


def _nice(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= 19:
        raise argparse.ArgumentTypeError(f"{value}: give 0 (as now) to 19 (lowest)")
    return value


def lower_priority(by: int) -> None:
    """This process (and the server it becomes) ``by`` steps lower in CPU priority."""
    if by <= 0:
        return
    try:
        os.nice(by)
    except (OSError, AttributeError) as e:  # AttributeError: a system without nice()
        print(f"elastic-channels dashboard: could not lower the priority: {e}", file=sys.stderr)


def build_command(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The ``streamlit run`` command line and its environment for ``args``."""
    settings = Settings(
        data_dir=Path(args.data_dir).resolve() if args.data_dir is not None else None,
        home=Path(DEFAULT_HOME).resolve(),
        workload=workload_arg(args),
        profile=str(Path(args.profile).resolve()) if args.profile else None,
        refresh_s=args.refresh_seconds,
        database=args.database,
        schema=args.schema,
    )
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.address", HOST, "--server.port", str(args.port),
    ]  # fmt: skip
    for name, value in STREAMLIT_OPTIONS.items():
        cmd += [f"--{name}", value]
    inherited = {k: v for k, v in os.environ.items() if k not in ENV.values()}
    return cmd, {**inherited, **settings.to_env()}


def workload_arg(args: argparse.Namespace) -> str:
    """The workload as the app is handed it: ``--workload``, else ``WORKLOAD``, else
    resort-sales; a file as an absolute path."""
    from ..workload import is_path

    text = (args.workload or os.environ.get("WORKLOAD") or "").strip() or DEFAULT_WORKLOAD
    return str(Path(text).resolve()) if is_path(text) else text


def workload_problem(args: argparse.Namespace) -> str | None:
    """Why the workload cannot be shown (its file, line, column and key), or None."""
    from .landing import ident, load_view

    where = "--workload" if args.workload else "WORKLOAD"
    try:  # a WorkloadError (a ValueError) names the file, the line, the column, the key
        view = load_view(workload_arg(args))
        for name in (view.table, *(c for c, _ in view.columns)):
            ident(name)
    except ValueError as e:
        return f"{where}: {e}"
    return None


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("streamlit") is None:
        print(
            "elastic-channels dashboard: streamlit is not installed; "
            "pip install '.[dashboard]' in a checkout (or pip install streamlit)",
            file=sys.stderr,
        )
        return 2
    missing = [m for m in ASGI_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"elastic-channels dashboard: {', '.join(missing)} not found: the dashboard is "
            "served as a Streamlit ASGI app (it answers only requests addressed to it); "
            "pip install -U 'streamlit[starlette]>=1.53'",
            file=sys.stderr,
        )
        return 2
    if args.profile and not Path(args.profile).is_file():
        print(
            f"elastic-channels dashboard: --profile {args.profile}: no such file", file=sys.stderr
        )
        return 2
    account = args.profile or os.environ.get("SNOWFLAKE_ACCOUNT")
    if (args.database or args.schema) and not account:
        print(
            "elastic-channels dashboard: --database/--schema name an account's objects: "
            "give --profile or set SNOWFLAKE_ACCOUNT too (the emulator's data dir has one "
            "database)",
            file=sys.stderr,
        )
        return 2
    problem = workload_problem(args)
    if problem:
        print(f"elastic-channels dashboard: {problem}", file=sys.stderr)
        return 2
    cmd, env = build_command(args)
    if account:
        target = f"the account ({account})"
    elif args.data_dir is not None:
        target = f"data dir {args.data_dir}"
    else:
        target = f"the data dir under {DEFAULT_HOME} that 'run' wrote last"
    workload = env[ENV["workload"]]
    print(
        f"dashboard on http://{HOST}:{args.port} reading {target}, workload {workload} "
        "(Ctrl-C stops it)",
        flush=True,
    )
    lower_priority(args.nice)
    # Become the server: Ctrl-C, SIGTERM (a timeout, a pod stop) reach streamlit itself,
    # so stopping this command never leaves a server behind.
    os.execve(sys.executable, cmd, env)
    return 0  # not reached


def main(argv: list[str] | None = None) -> int:
    load_settings_file()
    p = argparse.ArgumentParser(prog="elastic-channels dashboard", description=DESCRIPTION,
                                epilog=EPILOG)  # fmt: skip
    configure_parser(p)
    args = p.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
