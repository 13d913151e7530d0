"""``elastic-channels``: one command, a subcommand per job."""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
from collections.abc import Sequence

from .env_file import load_settings_file

DESCRIPTION = (
    "Stream synthetic resort point-of-sale rows into Snowflake through Snowpipe Streaming "
    "elastic channels, and watch it happen. With no Snowflake account configured, runs "
    "against the embedded Snowpipe Streaming emulator. Settings come from flags, then "
    "the environment, then a .env file in the working directory (see .env.example). "
    "Every subcommand has --help."
)
EPILOG = (
    "examples:\n"
    "  elastic-channels run --workers 2 --target-bps 20e6 --duration-seconds 30\n"
    "  elastic-channels bench --workers 1 --target-bps 100e6 --duration-seconds 10\n"
    "  elastic-channels setup --database DEMO --schema PUBLIC --print\n"
    "  elastic-channels plan --target-gbps 41.8\n"
    "  elastic-channels runs\n"
    "  elastic-channels compare latest~1 latest\n"
    "  elastic-channels emulator query --data-dir .elastic-channels/emulator "
    '"SELECT count(*) FROM RESORT_SALES"'
)

#: (subcommand, the module that configures its parser, one-line help)
COMMANDS = (
    ("run", "elastic_channels.fleet.run",
     "stream through the SDK with N local workers (into the embedded emulator by default)"),
    ("worker", "elastic_channels.worker.config",
     "one worker process: what each pod of a fleet runs"),
    ("bench", "elastic_channels.bench.client_cpu",
     "client-only benchmark: generating and encoding rows, no SDK, no server"),
    ("emulator", "elastic_channels.emulator.cli",
     "the local Snowpipe Streaming emulator: serve, query, stats, faults"),
    ("setup", "elastic_channels.snowflake.cli",
     "create RESORT_SALES, its pipe and the metrics table on an account (or --print the SQL)"),
    ("plan", "elastic_channels.fleet.plan",
     "size a fleet (pods, channels, nodes, vCPU, memory) for a target GB/s from measured figures"),
    ("monitor", "elastic_channels.monitor.cli",
     "write a run's worker windows to ELASTIC_K8S_METRICS while it goes on"),
    ("dashboard", "elastic_channels.dashboard.cli",
     "the Streamlit dashboard of a run: throughput, latency, fleet health, resort sales"),
    ("runs", "elastic_channels.results.runs_cli",
     "list the recorded results of runs, newest first (.elastic-channels/results)"),
    ("compare", "elastic_channels.results.compare_cli",
     "set recorded runs side by side: each figure and its change, and one chart"),
)  # fmt: skip


def _unavailable(p: argparse.ArgumentParser, name: str, error: ImportError) -> None:
    def fail(_args: argparse.Namespace) -> int:
        print(
            f"elastic-channels {name}: unavailable here: {error}. Install the project with "
            "its extras (pip install '.[sdk,emulator]' in a checkout).",
            file=sys.stderr,
        )
        return 2

    p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    p.set_defaults(func=fail)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("elastic-native")
    except Exception:  # not installed as a distribution (a source tree on the path)
        return "unknown"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (and so its dependencies):
    the others are listed by name and help, which ``--help`` needs and nothing else."""
    parser = argparse.ArgumentParser(
        prog="elastic-channels",
        description=textwrap.fill(DESCRIPTION, 79),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name, help_text in COMMANDS:
        if name != command:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:  # an optional dependency missing: say so when used
            _unavailable(sub.add_parser(name, help=help_text), name, e)
            continue
        p = sub.add_parser(
            name,
            help=help_text,
            description=textwrap.fill(getattr(module, "DESCRIPTION", help_text), 79),
            epilog=getattr(module, "EPILOG", None),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure_parser(p)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (its first word that is not an option)."""
    names = {name for name, _, _ in COMMANDS}
    for word in argv:
        if not word.startswith("-"):
            return word if word in names else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    load_settings_file()
    command = _command_of(argv)
    if command == "worker":  # the worker parses its own flags (and environment)
        from .worker.main import main as worker_main

        return worker_main(argv[argv.index("worker") + 1 :])
    try:
        code = _run(command, argv)
        # Inside the try: output still in stdout's buffer (a reader gone before any of
        # it was written) fails here, not in the interpreter's flush at exit (120).
        sys.stdout.flush()
        return code
    except SystemExit:  # argparse's --help, --version or usage error: flush its text too
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_broken_pipe()
        raise
    except BrokenPipeError:  # e.g. `elastic-channels plan ... | head`: not an error
        _quiet_broken_pipe()
        return 0


def _run(command: str | None, argv: list[str]) -> int:
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if args.command is None:  # a bare `elastic-channels`: what it can do
        parser.print_help()
        return 0
    return int(args.func(args))


def _quiet_broken_pipe() -> None:
    """Nothing more to say to a reader that has gone: stdout pointed at /dev/null so the
    interpreter's own flush at exit raises no second BrokenPipeError."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.stderr.close()


if __name__ == "__main__":
    sys.exit(main())
