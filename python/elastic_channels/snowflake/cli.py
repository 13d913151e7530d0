"""``elastic-channels setup``: create the Snowflake objects, or print their SQL."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager

from ..account import AccountSettings, account_settings
from ..account.settings import BY_NAME as ACCOUNT_SETTINGS
from ..landing_table import WORKLOAD_HELP, WorkloadArgError, landing_table, pipe_named
from ..setting import SettingError, add_flags
from .connector import connector_session
from .ddl import (
    METRICS_TABLE,
    PIPE,
    TABLE,
    TABLE_FORMATS,
    SetupError,
    plain_identifier,
    render,
    statements,
)
from .execute import RunOne, execute
from .sql_api import DEFAULT_TIMEOUT_S, sql_api_session
from .sql_file import read_sql_file

DESCRIPTION = (
    f"Create {TABLE} (typed, one column per field of the model), {PIPE} "
    f"(MATCH_BY_COLUMN_NAME = CASE_SENSITIVE) and {METRICS_TABLE}; with --workload, that "
    "workload's table (its columns and types) and pipe instead of the first two. "
    "Idempotent: every statement is CREATE ... IF NOT EXISTS."
)
EPILOG = (
    "Without --print, credentials are required: --account, --user and a key "
    "(--private-key-file, SNOWFLAKE_PRIVATE_KEY, or --profile; an encrypted key's "
    "passphrase in SNOWFLAKE_PRIVATE_KEY_PWD). The statements go one by one through "
    "Snowflake's SQL API (POST /api/v2/statements, a key-pair JWT; no driver) at the "
    "account URL derived from the account (SNOWFLAKE_HOST and SNOWFLAKE_PORT only "
    "override it); --profile an emulator's info file runs them on that emulator. "
    "--via connector runs them through snowflake-connector-python instead "
    "(pip install '.[setup]' in a checkout). With --sql-file "
    "it runs that file's statements instead (deploy/allowlist.sh does), on the same "
    "connection settings."
)
#: Options that shape the generated SQL: meaningless with --sql-file, so refused there.
_DDL_ONLY = ("external_volume", "base_location", "no_create_database", "workload")
#: The account settings setup takes as flags (the rest, e.g. SNOWFLAKE_PRIVATE_KEY,
#: SNOWFLAKE_HOST, come from the environment or .env).
_TARGET_FLAGS = ("database", "schema", "pipe")
_ACCOUNT_FLAGS = ("account", "user", "role", "warehouse", "private_key_file", "profile")
#: The ways setup reaches the account.
VIAS = ("sql-api", "connector")


def build_parser(prog: str = "elastic-channels setup") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EPILOG)
    configure_parser(p)
    return p


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--print",
        dest="print_only",
        action="store_true",
        help="print the SQL and exit, connecting to nothing (the objects as created; "
        "with --upgrade also the ALTERs that bring tables made by an older version up to "
        "date, which setup without --print always runs)",
    )
    p.add_argument(
        "--upgrade",
        action="store_true",
        help="with --print: also print the ALTERs for tables made by an older version "
        "(row timestamps on, columns added since); on new tables they change nothing",
    )
    p.add_argument(
        "--sql-file",
        metavar="FILE",
        help="run the statements of FILE (split at ';' outside quotes and comments) "
        "instead of creating the objects; --database and the table options do not apply",
    )
    add_flags(p, (ACCOUNT_SETTINGS[n] for n in _TARGET_FLAGS), "where the objects go")
    p.add_argument(
        "--workload",
        metavar="NAME|FILE",
        help=f"{WORKLOAD_HELP} [WORKLOAD] (default: resort-sales)",
    )
    p.add_argument(
        "--table", default=None, help=f"landing table (default: the workload's; {TABLE})"
    )
    p.add_argument("--metrics-table", default=METRICS_TABLE, help=f"[{METRICS_TABLE}]")
    p.add_argument(
        "--table-format",
        choices=TABLE_FORMATS,
        default="native",
        help="native: a Snowflake table with row timestamps (default); iceberg: a "
        "Snowflake-managed Apache Iceberg table (CATALOG = 'SNOWFLAKE') on --external-volume",
    )
    p.add_argument(
        "--external-volume",
        help="with --table-format iceberg: the external volume the table's files go to",
    )
    p.add_argument(
        "--base-location",
        help="with --table-format iceberg: the table's directory on the external volume, "
        "relative (default: the table name)",
    )
    p.add_argument(
        "--no-create-database",
        action="store_true",
        help="do not CREATE DATABASE/SCHEMA IF NOT EXISTS (they must exist already)",
    )
    add_flags(p, (ACCOUNT_SETTINGS[n] for n in _ACCOUNT_FLAGS), "the account")
    p.add_argument(
        "--via",
        choices=VIAS,
        default="sql-api",
        help="sql-api: Snowflake's SQL API, one statement per request (default; no driver); "
        "connector: snowflake-connector-python, which also runs what the SQL API refuses "
        "(USE, ALTER SESSION, BEGIN/COMMIT, PUT/GET)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="how long one statement may run through the SQL API (a statement still "
        f"running is polled until then) [{DEFAULT_TIMEOUT_S}]",
    )
    p.set_defaults(func=cmd_setup)


def main(argv: Sequence[str] | None = None) -> int:
    return cmd_setup(build_parser().parse_args(argv))


def cmd_setup(args: argparse.Namespace) -> int:
    try:
        acct = account_settings(vars(args))
        if args.sql_file:
            stmts, labels = _sql_file(args)
        else:
            stmts, labels = _setup_statements(args, acct), None
        if args.print_only:
            shown = stmts
            if not (args.upgrade or args.sql_file):
                shown = _setup_statements(args, acct, upgrades=False)
            sys.stdout.write(render(shown))
            if len(shown) < len(stmts):
                print(
                    f"-- {len(stmts) - len(shown)} ALTER(s) for tables made by an older "
                    "version left out (no-ops on new tables): --print --upgrade shows them"
                )
            return 0
        if acct.account is None:
            raise SetupError(
                "no credentials: give --account/--user/--private-key-file (or the "
                "SNOWFLAKE_* variables, or --profile) to execute, or --print to see the SQL"
            )
        with _session(args, acct) as run_one:
            execute(stmts, run_one, labels=labels)
    except (SetupError, SettingError, WorkloadArgError) as e:
        print(f"setup: error: {e}", file=sys.stderr)
        return 2
    return 0


def _session(args: argparse.Namespace, acct: AccountSettings) -> AbstractContextManager[RunOne]:
    if args.via == "connector":
        return connector_session(acct)
    return sql_api_session(acct, args.timeout)


def _seconds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 second, got {value}")
    return value


def _setup_statements(
    args: argparse.Namespace, acct: AccountSettings, *, upgrades: bool = True
) -> list[str]:
    if not acct.database:
        raise SetupError("--database (or SNOWFLAKE_DATABASE) is required")
    where = "--workload" if args.workload else "WORKLOAD"
    land = landing_table(args.workload or os.environ.get("WORKLOAD"), where)
    named = {"table": bool(args.table), "pipe": pipe_named(args.pipe, os.environ, acct.profile)}
    for kind, name in (("table", land.name), ("pipe", land.pipe)):
        if not named[kind] and not plain_identifier(name):
            raise SetupError(
                f"workload {land.workload}: its {kind} {name!r} is not a plain Snowflake "
                f"identifier (letters, digits, _ and $, starting with a letter or _); give "
                f"--{kind} NAME"
            )
    return statements(
        acct.database,
        acct.schema,
        create_database=not args.no_create_database,
        table=args.table or land.name,
        pipe=acct.pipe if named["pipe"] else land.pipe,
        columns=land.columns,
        metrics_table=args.metrics_table,
        table_format=args.table_format,
        upgrades=upgrades,
        external_volume=args.external_volume,
        base_location=args.base_location,
    )


def _sql_file(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The file's statements, and for each where it is (for a failed statement's error)."""
    given = [f"--{name.replace('_', '-')}" for name in _DDL_ONLY if getattr(args, name)]
    if args.table_format != "native":
        given.append("--table-format")
    if given:
        raise SetupError(f"--sql-file runs the file as it is: {', '.join(given)} cannot apply")
    found = read_sql_file(args.sql_file)
    labels = [
        f"{args.sql_file} statement {k} of {len(found)} (line {line})"
        for k, (line, _) in enumerate(found, 1)
    ]
    return [stmt for _, stmt in found], labels
