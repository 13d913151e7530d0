"""Create the Snowflake objects a fleet run writes to: ``python -m elastic_channels.setup``.

- ``RESORT_SALES``: the typed landing table, one column per entry of
  :data:`elastic_channels.resort_sales.COLUMNS`, in that order.
- ``RESORT_SALES_PIPE``: a Snowpipe Streaming (high-performance) pipe into it that maps
  each JSON key to the column of the same name (``MATCH_BY_COLUMN_NAME =
  CASE_SENSITIVE``).
- ``ELASTIC_K8S_METRICS``: one row per worker per reporting window, written by the
  monitor that tails the workers' JSON lines.

Every statement is ``CREATE ... IF NOT EXISTS``, so running it twice is harmless and
never drops data. ``--print`` writes the SQL to stdout and connects to nothing. With
credentials it runs the statements through ``snowflake-connector-python`` (the
``setup`` extra: ``pip install 'elastic-native[setup]'``).

    python -m elastic_channels.setup --database DEMO --schema PUBLIC --print
    python -m elastic_channels.setup --database DEMO --schema PUBLIC \\
        --account ORG-ACCT --user INGEST --role INGEST_ROLE --private-key-file rsa_key.p8
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from elastic_channels.resort_sales import COLUMNS

__all__ = [
    "METRICS_COLUMNS",
    "METRICS_TABLE",
    "PIPE",
    "TABLE",
    "SetupError",
    "main",
    "statements",
]

TABLE = "RESORT_SALES"
PIPE = "RESORT_SALES_PIPE"
METRICS_TABLE = "ELASTIC_K8S_METRICS"

#: One row per worker per window. The typed columns are what the dashboard charts;
#: RAW keeps the worker's whole JSON line, so a field added to the worker later is
#: never lost even before a column exists for it.
METRICS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("RUN_ID", "VARCHAR"),
    ("WORKER_ID", "NUMBER(10,0)"),
    ("POD_NAME", "VARCHAR"),
    ("NODE_NAME", "VARCHAR"),
    ("WINDOW_START", "TIMESTAMP_TZ"),
    ("WINDOW_END", "TIMESTAMP_TZ"),
    ("ROWS_APPENDED", "NUMBER(19,0)"),
    ("BYTES_APPENDED", "NUMBER(19,0)"),
    ("ROWS_ACKED", "NUMBER(19,0)"),
    ("MB_PER_SEC", "FLOAT"),
    ("ROWS_PER_SEC", "FLOAT"),
    ("ACK_LATENCY_P50_MS", "FLOAT"),
    ("ACK_LATENCY_P99_MS", "FLOAT"),
    ("UNACKED_ROWS", "NUMBER(19,0)"),
    ("CPU_MILLICORES", "FLOAT"),
    ("RSS_MIB", "FLOAT"),
    ("IS_SUMMARY", "BOOLEAN"),
    ("RAW", "VARIANT"),
    ("INSERTED_AT", "TIMESTAMP_TZ DEFAULT CURRENT_TIMESTAMP()"),
)

# Unquoted Snowflake identifiers: what the SDK's database/schema/pipe names are too.
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,254}")


class SetupError(Exception):
    """Bad input or a missing dependency; the message says which."""


def _ident(kind: str, name: str) -> str:
    if not _IDENT.fullmatch(name):
        raise SetupError(
            f"--{kind} {name!r} is not a plain Snowflake identifier "
            "(letters, digits, _ and $, starting with a letter or _)"
        )
    return name.upper()


def _column_list(columns: Sequence[tuple[str, str]]) -> str:
    return ",\n".join(f'    "{name}" {sf_type}' for name, sf_type in columns)


def statements(
    database: str,
    schema: str,
    *,
    create_database: bool = True,
    table: str = TABLE,
    pipe: str = PIPE,
    metrics_table: str = METRICS_TABLE,
) -> list[str]:
    """The setup SQL, one statement per item, idempotent, in the order it must run."""
    db = _ident("database", database)
    sc = _ident("schema", schema)
    tb = _ident("table", table)
    pp = _ident("pipe", pipe)
    mt = _ident("metrics-table", metrics_table)
    out: list[str] = []
    if create_database:
        out.append(f"CREATE DATABASE IF NOT EXISTS {db}")
        out.append(f"CREATE SCHEMA IF NOT EXISTS {db}.{sc}")
    out.append(f"CREATE TABLE IF NOT EXISTS {db}.{sc}.{tb} (\n{_column_list(COLUMNS)}\n)")
    out.append(
        f"CREATE PIPE IF NOT EXISTS {db}.{sc}.{pp}\n"
        f"  AS COPY INTO {db}.{sc}.{tb}\n"
        "  FROM TABLE(DATA_SOURCE(TYPE => 'STREAMING'))\n"
        "  MATCH_BY_COLUMN_NAME = CASE_SENSITIVE"
    )
    out.append(f"CREATE TABLE IF NOT EXISTS {db}.{sc}.{mt} (\n{_column_list(METRICS_COLUMNS)}\n)")
    return out


def render(stmts: Sequence[str]) -> str:
    """The statements as one script, each ended with ``;``."""
    return "".join(f"{s};\n\n" for s in stmts).rstrip("\n") + "\n"


# --- executing ---------------------------------------------------------------------


def _load_private_key_der(pem: bytes, passphrase: str | None) -> bytes:
    try:
        from cryptography.hazmat.primitives import serialization
    except ModuleNotFoundError as e:  # pragma: no cover - cryptography comes with the connector
        raise SetupError("reading the private key needs 'cryptography'") from e
    try:
        key = serialization.load_pem_private_key(
            pem, password=passphrase.encode() if passphrase else None
        )
    except (ValueError, TypeError) as e:
        raise SetupError(f"the private key is not a usable PEM private key: {e}") from e
    return key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def connection_params(args: argparse.Namespace) -> dict[str, Any] | None:
    """Connector keyword arguments from flags, env and ``--profile``; None if no account."""
    profile: dict[str, Any] = {}
    if args.profile:
        try:
            profile = json.loads(Path(args.profile).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise SetupError(f"--profile {args.profile}: cannot read it as JSON: {e}") from e
        if not isinstance(profile, dict):
            raise SetupError(f"--profile {args.profile}: expected a JSON object")
    account = args.account or profile.get("account")
    if not account:
        return None
    user = args.user or profile.get("user")
    if not user:
        raise SetupError("--user (or SNOWFLAKE_USER, or 'user' in --profile) is required")
    pem: bytes | None = None
    if args.private_key_file:
        try:
            pem = Path(args.private_key_file).read_bytes()
        except OSError as e:
            raise SetupError(f"--private-key-file {args.private_key_file}: {e}") from e
    elif os.environ.get("SNOWFLAKE_PRIVATE_KEY"):
        pem = os.environ["SNOWFLAKE_PRIVATE_KEY"].encode()
    elif profile.get("private_key_file"):
        pem = Path(profile["private_key_file"]).read_bytes()
    elif profile.get("private_key"):
        text = str(profile["private_key"])
        if "-----BEGIN" not in text:  # the SDK's profile holds the bare base64 body
            text = f"-----BEGIN PRIVATE KEY-----\n{text}\n-----END PRIVATE KEY-----\n"
        pem = text.encode()
    if pem is None:
        raise SetupError(
            "no private key: give --private-key-file, SNOWFLAKE_PRIVATE_KEY (PEM text) "
            "or a --profile with private_key"
        )
    params: dict[str, Any] = {
        "account": account,
        "user": user,
        "private_key": _load_private_key_der(pem, os.environ.get("SNOWFLAKE_PRIVATE_KEY_PWD")),
    }
    role = args.role or profile.get("role")
    if role:
        params["role"] = role
    if args.warehouse:
        params["warehouse"] = args.warehouse
    return params


def execute(stmts: Sequence[str], params: dict[str, Any], out: Any = sys.stdout) -> None:
    """Run ``stmts`` in order on one connection from snowflake-connector-python."""
    try:
        connector = importlib.import_module("snowflake.connector")
    except ImportError as e:
        raise SetupError(
            "executing the setup needs snowflake-connector-python: "
            "pip install 'elastic-native[setup]' (or use --print and run the SQL yourself)"
        ) from e
    errors = getattr(connector, "Error", Exception)
    try:
        conn = connector.connect(**params)
    except errors as e:
        raise SetupError(f"cannot connect to account {params.get('account')!r}: {e}") from e
    try:
        cur = conn.cursor()
        try:
            for stmt in stmts:
                first_line = stmt.splitlines()[0]
                try:
                    cur.execute(stmt)
                except errors as e:
                    raise SetupError(f"{first_line}: {e}") from e
                print(f"ok: {first_line}", file=out)
        finally:
            cur.close()
    finally:
        conn.close()


# --- command line ------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    env = os.environ.get
    p = argparse.ArgumentParser(
        prog="python -m elastic_channels.setup",
        description=(
            f"Create {TABLE} (typed, from resort_sales.COLUMNS), {PIPE} "
            f"(MATCH_BY_COLUMN_NAME = CASE_SENSITIVE) and {METRICS_TABLE}. Idempotent: "
            "every statement is CREATE ... IF NOT EXISTS."
        ),
        epilog=(
            "Without --print, credentials are required: --account, --user and a key "
            "(--private-key-file, SNOWFLAKE_PRIVATE_KEY, or --profile). Executing needs "
            "snowflake-connector-python (pip install 'elastic-native[setup]')."
        ),
    )
    p.add_argument(
        "--print",
        dest="print_only",
        action="store_true",
        help="print the SQL and exit, connecting to nothing",
    )
    p.add_argument("--database", default=env("SNOWFLAKE_DATABASE"), help="[SNOWFLAKE_DATABASE]")
    p.add_argument(
        "--schema", default=env("SNOWFLAKE_SCHEMA", "PUBLIC"), help="[SNOWFLAKE_SCHEMA, PUBLIC]"
    )
    p.add_argument("--pipe", default=env("SNOWFLAKE_PIPE", PIPE), help=f"[SNOWFLAKE_PIPE, {PIPE}]")
    p.add_argument("--table", default=TABLE, help=f"landing table [{TABLE}]")
    p.add_argument("--metrics-table", default=METRICS_TABLE, help=f"[{METRICS_TABLE}]")
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
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if not args.database:
            raise SetupError("--database (or SNOWFLAKE_DATABASE) is required")
        stmts = statements(
            args.database,
            args.schema,
            create_database=not args.no_create_database,
            table=args.table,
            pipe=args.pipe,
            metrics_table=args.metrics_table,
        )
        if args.print_only:
            sys.stdout.write(render(stmts))
            return 0
        params = connection_params(args)
        if params is None:
            raise SetupError(
                "no credentials: give --account/--user/--private-key-file (or the "
                "SNOWFLAKE_* variables, or --profile) to execute, or --print to see the SQL"
            )
        execute(stmts, params)
    except SetupError as e:
        print(f"setup: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
