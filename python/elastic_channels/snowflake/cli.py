"""``elastic-channels setup``: create the Snowflake objects, or print their SQL."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .connection import connection_params, execute, read_sql_file
from .ddl import METRICS_TABLE, PIPE, TABLE, TABLE_FORMATS, SetupError, render, statements

DESCRIPTION = (
    f"Create {TABLE} (typed, one column per field of the model), {PIPE} "
    f"(MATCH_BY_COLUMN_NAME = CASE_SENSITIVE) and {METRICS_TABLE}. Idempotent: every "
    "statement is CREATE ... IF NOT EXISTS."
)
EPILOG = (
    "Without --print, credentials are required: --account, --user and a key "
    "(--private-key-file, SNOWFLAKE_PRIVATE_KEY, or --profile). Executing needs "
    "snowflake-connector-python (pip install '.[setup]' in a checkout). With --sql-file "
    "it runs that file's statements instead (deploy/allowlist.sh does), on the same "
    "connection settings."
)
#: Options that shape the generated SQL: meaningless with --sql-file, so refused there.
_DDL_ONLY = ("external_volume", "base_location", "no_create_database")


def build_parser(prog: str = "elastic-channels setup") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EPILOG)
    configure_parser(p)
    return p


def configure_parser(p: argparse.ArgumentParser) -> None:
    env = os.environ.get
    p.add_argument(
        "--print",
        dest="print_only",
        action="store_true",
        help="print the SQL and exit, connecting to nothing",
    )
    p.add_argument(
        "--sql-file",
        metavar="FILE",
        help="run the statements of FILE (split at ';' outside quotes and comments) "
        "instead of creating the objects; --database and the table options do not apply",
    )
    p.add_argument("--database", default=env("SNOWFLAKE_DATABASE"), help="[SNOWFLAKE_DATABASE]")
    p.add_argument(
        "--schema", default=env("SNOWFLAKE_SCHEMA", "PUBLIC"), help="[SNOWFLAKE_SCHEMA, PUBLIC]"
    )
    p.add_argument("--pipe", default=env("SNOWFLAKE_PIPE", PIPE), help=f"[SNOWFLAKE_PIPE, {PIPE}]")
    p.add_argument("--table", default=TABLE, help=f"landing table [{TABLE}]")
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
    p.add_argument("--account", default=env("SNOWFLAKE_ACCOUNT"), help="[SNOWFLAKE_ACCOUNT]")
    p.add_argument("--user", default=env("SNOWFLAKE_USER"), help="[SNOWFLAKE_USER]")
    p.add_argument("--role", default=env("SNOWFLAKE_ROLE"), help="[SNOWFLAKE_ROLE]")
    p.add_argument("--warehouse", default=env("SNOWFLAKE_WAREHOUSE"), help="[SNOWFLAKE_WAREHOUSE]")
    p.add_argument(
        "--private-key-file",
        default=env("SNOWFLAKE_PRIVATE_KEY_FILE"),
        help="PKCS#8 PEM key [SNOWFLAKE_PRIVATE_KEY_FILE; or SNOWFLAKE_PRIVATE_KEY with the PEM "
        "text; SNOWFLAKE_PRIVATE_KEY_PWD if encrypted]",
    )
    p.add_argument(
        "--profile", help="an SDK profile JSON (account, user, private_key, role) for credentials"
    )
    p.set_defaults(func=cmd_setup)


def main(argv: Sequence[str] | None = None) -> int:
    return cmd_setup(build_parser().parse_args(argv))


def cmd_setup(args: argparse.Namespace) -> int:
    try:
        stmts, labels = _sql_file(args) if args.sql_file else (_setup_statements(args), None)
        if args.print_only:
            sys.stdout.write(render(stmts))
            return 0
        params = connection_params(args)
        if params is None:
            raise SetupError(
                "no credentials: give --account/--user/--private-key-file (or the "
                "SNOWFLAKE_* variables, or --profile) to execute, or --print to see the SQL"
            )
        execute(stmts, params, labels=labels)
    except SetupError as e:
        print(f"setup: error: {e}", file=sys.stderr)
        return 2
    return 0


def _setup_statements(args: argparse.Namespace) -> list[str]:
    if not args.database:
        raise SetupError("--database (or SNOWFLAKE_DATABASE) is required")
    return statements(
        args.database,
        args.schema,
        create_database=not args.no_create_database,
        table=args.table,
        pipe=args.pipe,
        metrics_table=args.metrics_table,
        table_format=args.table_format,
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
