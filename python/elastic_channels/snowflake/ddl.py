"""The Snowflake objects a fleet run writes to, as SQL (``elastic-channels setup``).

- ``RESORT_SALES``: the typed landing table, one column per entry of
  :data:`elastic_channels.model.COLUMNS`, in that order.
- ``RESORT_SALES_PIPE``: a Snowpipe Streaming (high-performance) pipe into it that maps
  each JSON key to the column of the same name (``MATCH_BY_COLUMN_NAME =
  CASE_SENSITIVE``).
- ``ELASTIC_K8S_METRICS``: one row per worker per reporting window, written by the
  monitor that tails the workers' JSON lines.

Every statement is ``CREATE ... IF NOT EXISTS``, so running it twice is harmless and
never drops data. ``--print`` writes the SQL to stdout and connects to nothing. With
credentials it runs the statements through ``snowflake-connector-python`` (the
``setup`` extra: ``pip install '.[setup]'`` in a checkout).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import COLUMNS, METRICS_TABLE_NAME, PIPE_NAME, TABLE_NAME

__all__ = [
    "METRICS_COLUMNS",
    "METRICS_TABLE",
    "PIPE",
    "TABLE",
    "SetupError",
    "render",
    "statements",
]

TABLE = TABLE_NAME
PIPE = PIPE_NAME
METRICS_TABLE = METRICS_TABLE_NAME

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
