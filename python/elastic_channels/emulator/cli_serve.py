"""``serve``: the emulator's main command, its flags and what it does."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..landing_table import WORKLOAD_HELP, landing_table
from ..log import configure_logging
from ..model import PIPE_NAME, TABLE_NAME
from .api.drop_sink import SINKS
from .cli_types import finite_count, finite_seconds, mbps, served_host, user_key
from .control import ControlError, running_server
from .emulator import Emulator, EmulatorConfig, write_json_atomic
from .http.server import SERVED_HOSTS, HttpLimits
from .landing.parse_backends import PARSE_BACKENDS
from .storage.store import StoreError

__all__ = ["SERVED_HOSTS", "add_serve", "friendly", "overrides_text"]


def friendly(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """The command, with its expected failures turned into one line and exit code 1."""

    @functools.wraps(command)
    def run_command(args: argparse.Namespace) -> int:
        try:
            return int(command(args))
        except (ControlError, StoreError, ValueError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1

    return run_command


def add_serve(sub: Any) -> None:
    """Add ``serve`` to a subparsers object."""
    s = sub.add_parser(
        "serve",
        allow_abbrev=False,  # a retired spelling (--duration) must not match a new one
        help="run the emulator until SIGINT/SIGTERM (or --duration-seconds)",
        description="Run the emulator. Once ready it prints (and writes to --info-file) "
        "the JSON a client needs: the CA to trust, SDK properties, target names.",
    )
    s.set_defaults(func=serve)
    s.add_argument(
        "--data-dir",
        type=Path,
        required=True,
        help="where certificates, keys, the spool and the DuckDB file live "
        "(created if missing; reused across runs)",
    )
    s.add_argument("--port", type=int, default=0, help="HTTPS port; 0 picks a free one (default)")
    s.add_argument(
        "--server-name",
        action="append",
        default=[],
        metavar="NAME",
        help="another DNS name the server answers to (repeatable): put in its certificate "
        "and named in its hostname reply when a client asks for it; for a client that "
        "connects to an account's host (myorg-myacct.snowflakecomputing.com) pointed at "
        "127.0.0.1 in /etc/hosts, with the emulator on --port 443",
    )
    s.add_argument(
        "--host",
        type=served_host,
        default="127.0.0.1",
        help="loopback address to bind: 127.0.0.1 (default) or localhost, the names the "
        "server's certificate and the client properties cover; any other address (::1, "
        "127.0.0.2 ...) is refused",
    )
    s.add_argument(
        "--info-file",
        type=Path,
        help="once ready, write a JSON object here: ssl_cert_file, properties, "
        "database, schema, pipe, table, url",
    )
    s.add_argument("--account", default="EMULATOR", help="account name in JWTs (default EMULATOR)")
    s.add_argument(
        "--user",
        default="EMULATOR_USER",
        help="default user; its RSA key pair is generated in DATA_DIR/users",
    )
    s.add_argument("--role", default="ACCOUNTADMIN", help="role put in the client properties")
    s.add_argument("--database", default="EMULATOR_DB", help="database name (default EMULATOR_DB)")
    s.add_argument("--schema", default="PUBLIC", help="schema name (default PUBLIC)")
    s.add_argument(
        "--workload",
        metavar="NAME|FILE",
        default=None,
        help=f"{WORKLOAD_HELP}: the landing table is made with its columns (default: resort-sales)",
    )
    s.add_argument("--pipe", default=None, help=f"pipe name (default: the workload's; {PIPE_NAME})")
    s.add_argument(
        "--table", default=None, help=f"landing table (default: the workload's; {TABLE_NAME})"
    )
    s.add_argument(
        "--public-key",
        type=user_key,
        action="append",
        default=[],
        metavar="USER=PEM",
        help="register another user's RSA public key (repeatable)",
    )
    s.add_argument(
        "--token-ttl-seconds",
        type=finite_count(positive=True),
        default=3600,
        help="lifetime of issued scoped tokens in seconds (default 3600)",
    )
    s.add_argument(
        "--append-buffer-ms",
        type=finite_count(),
        help="send max_append_request_buffer_duration_ms to the SDK in pipe-info's "
        "parameter_overrides (lower = faster acks, smaller requests and files; named in the "
        "startup line, info and stats). Default: no override, as an account is known to "
        "answer; the SDK buffers ~1 s",
    )
    s.add_argument(
        "--no-fsync",
        action="store_true",
        help="ack appends once written to the spool, without fsync (faster, "
        "survives an emulator crash but not a machine crash)",
    )
    s.add_argument(
        "--no-key-check",
        action="store_true",
        help="skip the landing pre-scan that rejects rows with unknown or duplicated keys "
        "(those keys are then ignored, not rejected; missing keys, nulls and bad values are "
        "still rejected)",
    )
    s.add_argument(
        "--parse",
        choices=PARSE_BACKENDS,
        default=None,
        help="how landing parses the rows: native (the project's Rust row parser; the lines "
        "it leaves go through the SQL path) or sql (one DuckDB query per batch); default: "
        "native when the native module is built, else sql",
    )
    s.add_argument(
        "--duckdb-threads",
        type=finite_count(positive=True),
        default=2,
        help="DuckDB threads (default 2)",
    )
    s.add_argument(
        "--table-format",
        choices=("native", "iceberg"),
        default="native",
        help="native: rows land in Parquet files in DATA_DIR/files, queried through a DuckDB "
        "view under the table's name (default); iceberg: in an Apache Iceberg "
        "table in DATA_DIR/iceberg (Parquet + metadata, one commit per landed flush), "
        "queried under the same table name (needs the iceberg extra)",
    )
    s.add_argument(
        "--sink",
        choices=SINKS,
        default="land",
        help="land: spool every acked request and land its rows in the table (default); drop: "
        "inflate and type-check every row of every request, ack, and discard the rows (a "
        "drop sink, for measuring clients flat out; 'stats' shows its time per request)",
    )
    s.add_argument(
        "--no-sink-check",
        action="store_true",
        help="with --sink drop: inflate every body but only count its lines, without "
        "type-checking the rows (bad rows go unreported); to measure what the check costs",
    )
    s.add_argument(
        "--answer-delay-seconds",
        type=finite_seconds(at_most=600),
        default=0.0,
        help="wait this many seconds before answering each rows request, to model a real "
        "account's ack latency; other requests are not held up (default 0)",
    )
    s.add_argument(
        "--channel-limit-mbps",
        type=mbps,
        default=None,
        metavar="X",
        help="each channel's throughput limit in MB/s (10^6 bytes, uncompressed: inline "
        "rows and file-mode fragments alike), as Snowflake limits a channel: a request "
        "over it is answered 429 and nothing of it is taken, so the SDK sends it again; "
        "the elastic channel is one per client (default: no limit)",
    )
    s.add_argument(
        "--channel-limit-burst-seconds",
        type=finite_seconds(positive=True, at_most=60),
        default=1.0,
        metavar="S",
        help="with --channel-limit-mbps: how much a channel may send at once, in seconds' "
        "worth of the limit (default 1); a channel sending over the limit by D MB/s is "
        "throttled only after S * X / D seconds",
    )
    s.add_argument(
        "--duration-seconds",
        type=finite_seconds(),
        default=0,
        help="stop by itself after this many seconds (default 0: run until SIGINT/SIGTERM)",
    )
    lim = HttpLimits()
    s.add_argument(
        "--header-timeout-seconds",
        type=finite_seconds(positive=True),
        default=lim.header_timeout_s,
        help="a request whose headers are not complete this long after its first byte is "
        f"answered 408 and closed (default {lim.header_timeout_s:g})",
    )
    s.add_argument(
        "--body-timeout-seconds",
        type=finite_seconds(positive=True),
        default=lim.body_timeout_s,
        help="a request body not complete this long after its headers is answered 408 and "
        f"closed; nothing of it lands (default {lim.body_timeout_s:g})",
    )
    s.add_argument(
        "--idle-timeout-seconds",
        type=finite_seconds(positive=True),
        default=lim.idle_timeout_s,
        help=f"close a connection idle this long (default {lim.idle_timeout_s:g})",
    )
    s.add_argument(
        "--max-connections",
        type=finite_count(positive=True),
        default=lim.max_connections,
        help="connections allowed at once, open or in their TLS handshake; one more is "
        f"answered 503 and closed (default {lim.max_connections})",
    )
    s.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="-v: log a line per landed batch (requests, rows landed and refused, raw MB, "
        "seconds); -vv: also every request",
    )


@friendly
def serve(args: argparse.Namespace) -> int:
    configure_logging([logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)])
    if running_server(args.data_dir):
        print(f"error: an emulator is already running for {args.data_dir}", file=sys.stderr)
        return 2
    keys: dict[str, list[Path]] = {}
    for user, path in args.public_key:
        keys.setdefault(user, []).append(path)
    land = landing_table(args.workload)
    config = EmulatorConfig(
        data_dir=args.data_dir, host=args.host, port=args.port, account=args.account,
        user=args.user, role=args.role, database=args.database, schema=args.schema,
        pipe=args.pipe or land.pipe, table=args.table or land.name, columns=land.columns,
        public_keys=keys,
        token_ttl_s=args.token_ttl_seconds, fsync=not args.no_fsync,
        duckdb_threads=args.duckdb_threads, append_buffer_ms=args.append_buffer_ms,
        check_keys=not args.no_key_check, parse=args.parse, sink=args.sink,
        answer_delay_s=args.answer_delay_seconds,
        channel_limit_bps=None if args.channel_limit_mbps is None
        else args.channel_limit_mbps * 1e6,
        channel_limit_burst_s=args.channel_limit_burst_seconds,
        sink_check=not args.no_sink_check,
        table_format=args.table_format, server_names=tuple(args.server_name),
        limits=HttpLimits(
            header_timeout_s=args.header_timeout_seconds,
            body_timeout_s=args.body_timeout_seconds,
            idle_timeout_s=args.idle_timeout_seconds,
            max_connections=args.max_connections,
        ),
    )  # fmt: skip
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    emu = Emulator(config).start()
    try:
        info = emu.info()
        if args.info_file:
            write_json_atomic(args.info_file, info)
        print(json.dumps(info, indent=2), flush=True)
        print(
            f"emulator ready at {emu.url}; clients need SSL_CERT_FILE={info['ssl_cert_file']}; "
            f"{overrides_text(info['parameter_overrides'])}",
            file=sys.stderr,
            flush=True,
        )
        stop.wait(args.duration_seconds if args.duration_seconds > 0 else None)
    finally:
        emu.stop()
    return 0


def overrides_text(overrides: dict[str, Any]) -> str:
    """What pipe-info changes in the SDK, for a startup line or a banner."""
    if not overrides:
        return "pipe-info sends the SDK no parameter_overrides (its own defaults, as an account)"
    shown = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
    return f"pipe-info overrides the SDK's defaults: {shown}"
