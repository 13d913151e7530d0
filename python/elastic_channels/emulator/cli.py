"""The emulator's commands: ``serve``, ``query``, ``stats``, ``faults``.

:func:`configure_parser` adds them to any parser (``elastic-channels emulator ...`` and
``python -m elastic_channels.emulator ...`` both use it); each subcommand sets
``func(args) -> exit code``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..model import TABLE_NAME
from .cli_serve import add_serve, friendly
from .cli_types import finite_count, finite_fraction, finite_seconds
from .control import ControlClient, query_offline, running_server, stats_offline
from .http.faults import ACTIONS, ENDPOINTS, FAULT_STATUSES

__all__ = ["DEFAULT_DATA_DIR", "configure_parser", "main"]

#: Where ``elastic-channels run`` keeps its embedded emulator's data (a native table):
#: what ``query``, ``stats`` and ``faults`` read when no --data-dir is given.
DEFAULT_DATA_DIR = Path(".elastic-channels") / "emulator"
DATA_DIR_HELP = (
    f"the emulator's data dir (default: {DEFAULT_DATA_DIR}, where `elastic-channels run` "
    "keeps it; a run with --table-format iceberg uses .elastic-channels/emulator-iceberg)"
)

DESCRIPTION = (
    "A local Snowpipe Streaming emulator: the real SDK ingests over HTTPS on a loopback "
    "address into a table of Parquet files that DuckDB queries. 'serve' runs it; "
    "'query', 'stats' and 'faults' talk to it (authenticated with the secret it keeps in "
    "its data dir) or, when it is stopped, read its database."
)


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the subcommands serve, query, stats and faults to ``parser``."""
    if not parser.description:
        parser.description = DESCRIPTION
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    add_serve(sub)

    q = sub.add_parser(
        "query",
        allow_abbrev=False,
        help="run one SELECT, print rows as JSON lines (server running or not)",
        description="Run one read-only query (a SELECT, or EXPLAIN of one) of the "
        "emulator's tables and print each row as a JSON object. Goes through the running "
        "server, or reads the database file when it is stopped. No file access from SQL "
        "either way. The SQL is DuckDB's; a statement with Snowflake's VARIANT paths "
        "(CONTEXT:page.url) is read as Snowflake SQL, as the SQL API reads it.",
    )
    q.set_defaults(func=_query)
    q.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help=DATA_DIR_HELP)
    q.add_argument("sql", help=f'e.g. "SELECT count(*) FROM {TABLE_NAME}"')

    st = sub.add_parser(
        "stats",
        allow_abbrev=False,
        help="print the running emulator's counters as JSON (or, when it is stopped, "
        "what its database holds)",
        description="Print the running emulator's counters as one JSON object: requests "
        "and responses per endpoint with handler time, bytes and rows received and landed, "
        "each channel's status, active faults, the landing backlog, and with --sink drop "
        "the sink's own time per request. When the emulator is stopped, print what its "
        "database holds instead: rows landed, the last commit time, errors kept, and "
        "requests spooled but not landed yet.",
    )
    st.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help=DATA_DIR_HELP)
    st.set_defaults(func=_stats)

    f = sub.add_parser(
        "faults",
        allow_abbrev=False,
        help="add, list or clear faults on a running emulator",
        description="Script failures on a running emulator, per endpoint, by count or "
        "probability (see docs/EMULATOR.md).",
    )
    f.set_defaults(func=_faults)
    f.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help=DATA_DIR_HELP)
    fs = f.add_subparsers(dest="fault_command", required=True)
    fs.add_parser(
        "list",
        help="print the active faults",
        description="Print the active faults of the running emulator as a JSON list (what "
        "each hits, its action, how many firings are left).",
    )
    fs.add_parser(
        "clear",
        help="remove every fault",
        description="Remove every fault from the running emulator and print the (now empty) list.",
    )
    a = fs.add_parser(
        "add",
        allow_abbrev=False,  # --delay-s, retired, must not match --delay-seconds
        help="script a failure, e.g. add rows status --status 503 --count 3, or add rows "
        "delay --delay-seconds 2",
        description="Script a failure on a running emulator: which requests it hits, what "
        "it does, how often.",
    )
    a.add_argument("endpoint", choices=ENDPOINTS, help="which requests it hits")
    a.add_argument(
        "action",
        choices=ACTIONS,
        help="status: reply --status; delay: sleep --delay-seconds then serve; drop: close "
        "the connection unanswered; malformed: 200 with a non-JSON body; lose_ack: serve "
        "the request (an append lands) but close the connection unanswered",
    )
    a.add_argument(
        "--status",
        type=int,
        default=500,
        choices=FAULT_STATUSES,
        help="HTTP status for the status action (default 500)",
    )
    a.add_argument(
        "--count",
        type=finite_count(),
        default=1,
        help="fire this many times (default 1; 0 = until cleared)",
    )
    a.add_argument(
        "--probability",
        type=finite_fraction,
        default=1.0,
        help="fire on this fraction of matching requests (default 1.0)",
    )
    a.add_argument(
        "--delay-seconds",
        type=finite_seconds(at_most=600),
        default=0.0,
        help="how long the delay action sleeps",
    )


@friendly
def _query(args: argparse.Namespace) -> int:
    from .sql.translate import variant_paths_to_duckdb

    sql = variant_paths_to_duckdb(args.sql)  # CONTEXT:page.url, as Snowflake reads it
    if running_server(args.data_dir):
        out = ControlClient(args.data_dir).call("POST", "query", {"sql": sql})
        sys.stdout.buffer.write(out)
    else:
        sys.stdout.buffer.write(b"".join(query_offline(args.data_dir, sql)))
    return 0


@friendly
def _stats(args: argparse.Namespace) -> int:
    if not running_server(args.data_dir):
        print(json.dumps(stats_offline(args.data_dir), indent=2))
    else:
        print(json.dumps(ControlClient(args.data_dir).json("GET", "stats"), indent=2))
    return 0


@friendly
def _faults(args: argparse.Namespace) -> int:
    client = ControlClient(args.data_dir)
    if args.fault_command == "add":
        spec = {
            "endpoint": args.endpoint, "action": args.action, "status": args.status,
            "count": args.count or None, "probability": args.probability,
            "delay_s": args.delay_seconds,
        }  # fmt: skip
        print(json.dumps(client.json("POST", "faults", spec), indent=2))
    else:
        method = "DELETE" if args.fault_command == "clear" else "GET"
        print(json.dumps(client.json(method, "faults"), indent=2))
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the subcommand ``args`` was parsed for (its errors are already one line)."""
    return int(args.func(args))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m elastic_channels.emulator")
    configure_parser(parser)
    return run(parser.parse_args(argv))
