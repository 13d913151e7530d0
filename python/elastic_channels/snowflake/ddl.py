"""The Snowflake objects a fleet run writes to, as SQL (``elastic-channels setup``).

- ``RESORT_SALES``: the typed landing table, one column per entry of
  :data:`elastic_channels.model.COLUMNS`, in that order; with ``--workload``, the
  workload's table and columns (``landing_table.py``), each with its Snowflake type.
- ``RESORT_SALES_PIPE``: a Snowpipe Streaming (high-performance) pipe into it that maps
  each JSON key to the column of the same name (``MATCH_BY_COLUMN_NAME =
  CASE_SENSITIVE``); with ``--workload``, the workload's pipe.
- ``ELASTIC_K8S_METRICS``: one row per worker per reporting window and one fleet row
  per window, written by the monitor that follows the workers' JSON lines.

``RESORT_SALES`` has row timestamps (``ROW_TIMESTAMP = TRUE``; an ``ALTER TABLE ... SET
ROW_TIMESTAMP = TRUE`` turns them on for a table made before), so
``METADATA$ROW_LAST_COMMIT_TIME`` gives each row's commit time: the monitor's
ingest-to-visible latency. Every statement is ``CREATE ... IF NOT EXISTS``, an
``ALTER ... SET`` of a property or ``ADD COLUMN IF NOT EXISTS``, so running it twice is
harmless and never drops data. With ``--table-format iceberg`` ``RESORT_SALES`` is a
Snowflake-managed Apache Iceberg table instead (``iceberg.py`` says which column types and
why), on ``--external-volume`` under ``--base-location``; the pipe and the metrics table
are the same. ``--print`` writes the SQL to stdout and connects to nothing. With
credentials it runs the statements one by one through Snowflake's SQL API (``sql_api.py``;
``--via connector``: snowflake-connector-python, ``connector.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import COLUMNS, METRICS_TABLE_NAME, PIPE_NAME, TABLE_NAME
from .iceberg import IcebergTypeError, create_iceberg_table

__all__ = [
    "METRICS_COLUMNS",
    "METRICS_TABLE",
    "PIPE",
    "STAGE_COLUMNS",
    "TABLE",
    "TABLE_FORMATS",
    "SetupError",
    "plain_identifier",
    "quote_column",
    "render",
    "stages_table",
    "statements",
]

TABLE = TABLE_NAME
PIPE = PIPE_NAME
METRICS_TABLE = METRICS_TABLE_NAME
#: What RESORT_SALES can be: a native (FDN) table, or a Snowflake-managed Iceberg table.
TABLE_FORMATS = ("native", "iceberg")

#: One row per worker per window, and one fleet row per window (``IS_FLEET``, no
#: ``WORKER_ID``), keyed by (RUN_ID, IS_FLEET, WORKER_ID, WINDOW_START): the monitor
#: upserts, so a late or repeated line updates its row. ``IS_SUMMARY`` rows (one per
#: worker that printed its summary line, keyed by RUN_ID, WORKER_ID, IS_SUMMARY) hold
#: the worker's whole-run totals from that line: ROWS_APPENDED its rows generated (each
#: with a TXID of its own, appended once; resends are RESENT_BATCHES), BYTES_APPENDED,
#: ROWS_ACKED, RESENT_BATCHES, SDK_RETRIES, ERRORS, the run's ack percentiles; its
#: WINDOW_START/END span the worker's windows (NULL if it had none). Percentiles of fleet rows come
#: from the merged histograms (``*_HIST``: HdrHistogram's encoded form, microseconds),
#: which also let anyone merge any set of rows again. ``INGEST_TO_VISIBLE_*``: from
#: ``SALE_TIME`` to ``METADATA$ROW_LAST_COMMIT_TIME`` of the run's rows committed in the
#: window (fleet rows). RAW keeps the worker's whole JSON line, so a field added to the
#: worker later is never lost even before a column exists for it. WORKER_STATE (worker
#: rows): ``running``, or on the worker's last window once its summary came ``done`` /
#: ``failed`` (its summary carries an error or unacked rows); a worker killed without a
#: summary stays ``running``, and readers judge it by its windows stopping. The load
#: shape (issue #24): TARGET_BPS the schedule's mean rate over the window (bytes/s; a
#: fleet row's is the workers' added up; a summary row's the mean over the worker's
#: sending window), STAGE the stage the window ends in (-1: warmup), WARMUP whether the
#: window is warmup (outside the run's figures), SCENARIO_NAME and SCENARIO_HASH the
#: scenario the run followed (NULL for a run of flags alone). The SDK's own figures
#: (issue #32): SDK the line's ``sdk`` object (docs/WORKER.md: files, API calls and
#: latency, buffer delays, throttle counts; a fleet row's merged: counts summed, means
#: weighted by count, quantiles the largest worker's, an upper bound; a summary row's the
#: worker's whole run), SDK_THROTTLED the window's throttle counts added up (a summary
#: row's: the windows the SDK throttled in); both NULL when the worker did not read them.
#: BILLABLE_BYTES: the bytes of the values sent (what Snowflake bills; keys and JSON's
#: structure are free: docs/RESULTS.md), a fleet row's the workers' added up.
METRICS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("RUN_ID", "VARCHAR"),
    ("WORKER_ID", "NUMBER(10,0)"),
    ("IS_FLEET", "BOOLEAN"),
    ("IS_SUMMARY", "BOOLEAN"),
    ("POD_NAME", "VARCHAR"),
    ("NODE_NAME", "VARCHAR"),
    ("WINDOW_START", "TIMESTAMP_TZ"),
    ("WINDOW_END", "TIMESTAMP_TZ"),
    ("WINDOW_SECONDS", "FLOAT"),
    ("PARTIAL", "BOOLEAN"),
    ("WORKERS_REPORTING", "NUMBER(10,0)"),
    ("ROWS_APPENDED", "NUMBER(19,0)"),
    ("BYTES_APPENDED", "NUMBER(19,0)"),
    ("ROWS_ACKED", "NUMBER(19,0)"),
    ("ACKS", "NUMBER(19,0)"),
    ("MB_PER_SEC", "FLOAT"),
    ("ROWS_PER_SEC", "FLOAT"),
    ("ACK_LATENCY_P50_MS", "FLOAT"),
    ("ACK_LATENCY_P95_MS", "FLOAT"),
    ("ACK_LATENCY_P99_MS", "FLOAT"),
    ("ACK_LATENCY_MAX_MS", "FLOAT"),
    ("ACK_LATENCY_HIST", "VARCHAR"),
    ("BEHIND_SCHEDULE_P99_MS", "FLOAT"),
    ("BEHIND_SCHEDULE_MAX_MS", "FLOAT"),
    ("BEHIND_SCHEDULE_HIST", "VARCHAR"),
    ("IN_FLIGHT_BYTES", "NUMBER(19,0)"),
    ("RESENT_BATCHES", "NUMBER(19,0)"),
    ("SDK_RETRIES", "NUMBER(19,0)"),
    ("ERRORS", "NUMBER(19,0)"),
    ("CPU_PCT", "FLOAT"),
    ("CPU_MILLICORES", "FLOAT"),
    ("RSS_MIB", "FLOAT"),
    ("INGEST_TO_VISIBLE_ROWS", "NUMBER(19,0)"),
    ("INGEST_TO_VISIBLE_P50_MS", "FLOAT"),
    ("INGEST_TO_VISIBLE_P99_MS", "FLOAT"),
    ("INGEST_TO_VISIBLE_AVG_MS", "FLOAT"),
    ("RAW", "VARIANT"),
    ("WORKER_STATE", "VARCHAR"),
    ("TARGET_BPS", "FLOAT"),
    ("STAGE", "NUMBER(10,0)"),
    ("WARMUP", "BOOLEAN"),
    ("SCENARIO_NAME", "VARCHAR"),
    ("SCENARIO_HASH", "VARCHAR"),
    ("SDK", "VARIANT"),
    ("SDK_THROTTLED", "NUMBER(19,0)"),
    ("BILLABLE_BYTES", "NUMBER(19,0)"),
    ("INSERTED_AT", "TIMESTAMP_TZ DEFAULT CURRENT_TIMESTAMP()"),
    ("UPDATED_AT", "TIMESTAMP_TZ"),
)

#: One row per stage of a run's load shape, keyed by (RUN_ID, STAGE), in the table beside
#: the metrics table (:func:`stages_table`): the monitor writes them once the run's
#: workers have ended (and again if a late line changes a window), from the run's fleet
#: windows, warmup's left out, by the same definitions as a local run's result file
#: (``results/derive.py``): STAGE_START/END its first window's start and last window's
#: end, SECONDS its windows' seconds, MB_PER_SEC and ROWS_PER_SEC appended over those
#: seconds, ACKED_MB_PER_SEC acknowledged, TARGET_MB_PER_SEC the fleet's mean target,
#: latencies off the windows' merged histograms (``*_HIST`` as in the metrics table),
#: CPU_SECONDS the fleet's. RAW holds the figures as the result file spells them.
STAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("RUN_ID", "VARCHAR"),
    ("STAGE", "NUMBER(10,0)"),
    ("STAGE_START", "TIMESTAMP_TZ"),
    ("STAGE_END", "TIMESTAMP_TZ"),
    ("SECONDS", "FLOAT"),
    ("WINDOWS", "NUMBER(10,0)"),
    ("WORKERS_REPORTING", "NUMBER(10,0)"),
    ("TARGET_MB_PER_SEC", "FLOAT"),
    ("MB_PER_SEC", "FLOAT"),
    ("ACKED_MB_PER_SEC", "FLOAT"),
    ("ROWS_PER_SEC", "FLOAT"),
    ("ROWS_APPENDED", "NUMBER(19,0)"),
    ("BYTES_APPENDED", "NUMBER(19,0)"),
    ("ROWS_ACKED", "NUMBER(19,0)"),
    ("ACK_LATENCY_P50_MS", "FLOAT"),
    ("ACK_LATENCY_P99_MS", "FLOAT"),
    ("ACK_LATENCY_MAX_MS", "FLOAT"),
    ("ACK_LATENCY_HIST", "VARCHAR"),
    ("BEHIND_SCHEDULE_P99_MS", "FLOAT"),
    ("BEHIND_SCHEDULE_HIST", "VARCHAR"),
    ("ERRORS", "NUMBER(19,0)"),
    ("RESENT_BATCHES", "NUMBER(19,0)"),
    ("SDK_RETRIES", "NUMBER(19,0)"),
    ("CPU_SECONDS", "FLOAT"),
    ("SCENARIO_NAME", "VARCHAR"),
    ("SCENARIO_HASH", "VARCHAR"),
    ("RAW", "VARIANT"),
    ("UPDATED_AT", "TIMESTAMP_TZ"),
)


def stages_table(metrics_table: str) -> str:
    """The per-stage table beside a metrics table: its name and ``_STAGES``."""
    return f"{metrics_table}_STAGES"


# Unquoted Snowflake identifiers: what the SDK's database/schema/pipe names are too.
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,254}")


class SetupError(Exception):
    """Bad input or a missing dependency; the message says which."""


def plain_identifier(name: str) -> bool:
    """Whether ``name`` is an unquoted Snowflake identifier (as the SDK names objects)."""
    return _IDENT.fullmatch(name) is not None


def _ident(kind: str, name: str) -> str:
    if not plain_identifier(name):
        raise SetupError(
            f"--{kind} {name!r} is not a plain Snowflake identifier "
            "(letters, digits, _ and $, starting with a letter or _)"
        )
    return name.upper()


def _column_list(columns: Sequence[tuple[str, str]]) -> str:
    return ",\n".join(f"    {quote_column(name)} {sf_type}" for name, sf_type in columns)


def quote_column(name: str) -> str:
    """A column name as a quoted identifier (its own ``"`` doubled): kept as it is, case
    and all, as the pipe's MATCH_BY_COLUMN_NAME = CASE_SENSITIVE matches the JSON keys."""
    return '"' + name.replace('"', '""') + '"'


def statements(
    database: str,
    schema: str,
    *,
    create_database: bool = True,
    table: str = TABLE,
    pipe: str = PIPE,
    columns: Sequence[tuple[str, str]] = COLUMNS,
    metrics_table: str = METRICS_TABLE,
    table_format: str = "native",
    external_volume: str | None = None,
    base_location: str | None = None,
    upgrades: bool = True,
) -> list[str]:
    """The setup SQL, one statement per item, idempotent, in the order it must run;
    ``columns`` are the landing table's (name, Snowflake type), in order. ``upgrades``:
    also the ALTERs that bring tables made by an older version up to date (row
    timestamps on, metrics columns added since), no-ops after the CREATEs."""
    if table_format not in TABLE_FORMATS:
        raise SetupError(f"--table-format must be one of {', '.join(TABLE_FORMATS)}")
    if table_format == "native" and (external_volume or base_location):
        raise SetupError("--external-volume and --base-location need --table-format iceberg")
    db = _ident("database", database)
    sc = _ident("schema", schema)
    tb = _ident("table", table)
    pp = _ident("pipe", pipe)
    mt = _ident("metrics-table", metrics_table)
    out: list[str] = []
    if create_database:
        out.append(f"CREATE DATABASE IF NOT EXISTS {db}")
        out.append(f"CREATE SCHEMA IF NOT EXISTS {db}.{sc}")
    if table_format == "iceberg":
        if not external_volume:
            raise SetupError(
                "--table-format iceberg needs --external-volume (the Snowflake external "
                "volume the table's Parquet and metadata files are written to)"
            )
        vol = _ident("external-volume", external_volume)
        try:
            out.append(create_iceberg_table(f"{db}.{sc}.{tb}", columns, vol, base_location or tb))
        except (IcebergTypeError, ValueError) as e:
            raise SetupError(str(e)) from None
    else:
        # Row timestamps: METADATA$ROW_LAST_COMMIT_TIME, what ingest-to-visible is read off.
        out.append(
            f"CREATE TABLE IF NOT EXISTS {db}.{sc}.{tb} (\n{_column_list(columns)}\n)"
            "\nROW_TIMESTAMP = TRUE"
        )
        if upgrades:  # ... and on for a table made before (again, it changes nothing)
            out.append(f"ALTER TABLE {db}.{sc}.{tb} SET ROW_TIMESTAMP = TRUE")
    out.append(
        f"CREATE PIPE IF NOT EXISTS {db}.{sc}.{pp}\n"
        f"  AS COPY INTO {db}.{sc}.{tb}\n"
        "  FROM TABLE(DATA_SOURCE(TYPE => 'STREAMING'))\n"
        "  MATCH_BY_COLUMN_NAME = CASE_SENSITIVE"
    )
    out.append(f"CREATE TABLE IF NOT EXISTS {db}.{sc}.{mt} (\n{_column_list(METRICS_COLUMNS)}\n)")
    st = _ident("metrics-table", stages_table(metrics_table))
    out.append(f"CREATE TABLE IF NOT EXISTS {db}.{sc}.{st} (\n{_column_list(STAGE_COLUMNS)}\n)")
    # A metrics table made by an older setup gains the columns it lacks.
    out.extend(
        f'ALTER TABLE {db}.{sc}.{mt} ADD COLUMN IF NOT EXISTS "{name}" {sf_type}'
        for name, sf_type in METRICS_COLUMNS
        # a default needs a constant on an existing table
        if upgrades and " DEFAULT " not in sf_type
    )
    return out


def render(stmts: Sequence[str]) -> str:
    """The statements as one script, each ended with ``;``."""
    return "".join(f"{s};\n\n" for s in stmts).rstrip("\n") + "\n"
