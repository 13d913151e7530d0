"""The SQL spellings that differ between the emulator's DuckDB and Snowflake.

Everything else the dashboard sends is the common subset of both (``GROUP BY``,
``CASE``, ``count(DISTINCT ...)``, ``QUALIFY``, ``LIMIT``). No value is written into
the text: what a method needs to compare with comes as a ``?`` bound through a
:class:`~.statement.Binder`; only numbers the code computes (``int()``) and names
from the code are written in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .statement import Binder, Statement

__all__ = ["DUCKDB", "SNOWFLAKE", "Dialect"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Dialect:
    name: str
    #: The column holding a row's commit time (when it became visible).
    commit_time: str

    def diff_ms(self, start: str, end: str) -> str:
        """Milliseconds from ``start`` to ``end`` (two timestamp expressions).

        DuckDB: epoch arithmetic, equal to ``date_diff('millisecond', ...)`` (each side
        truncated to the millisecond; instants after 1970) but plain integer math: on TIMESTAMPTZ
        ``date_diff`` goes through the ICU calendar per value, ~3x slower on the rows of
        the emulator's Parquet files (a DuckDB table's constant-compressed segments hid
        it, computing it once per segment)."""
        if self.name == "duckdb":
            return f"(epoch_us({end}) // 1000 - epoch_us({start}) // 1000)"
        return f"TIMESTAMPDIFF(MILLISECOND, {start}, {end})"

    def bucket(self, expr: str, seconds: int) -> str:
        """``expr`` truncated to a bucket of ``seconds`` (aligned on the epoch).

        DuckDB: on epoch microseconds, not ``time_bucket`` on TIMESTAMPTZ (the ICU
        calendar per value, ~2x slower on the Parquet files' rows; see ``diff_ms``)."""
        seconds = max(1, int(seconds))
        if self.name == "duckdb":
            us = seconds * 1_000_000
            return f"make_timestamptz(CAST(floor(epoch_us({expr}) / {us}) AS BIGINT) * {us})"
        return f"TIME_SLICE({expr}, {seconds}, 'SECOND')"

    def epoch_s(self, expr: str) -> str:
        """Seconds since the epoch (DOUBLE) of the timestamp ``expr``."""
        if self.name == "duckdb":
            return f"(epoch_us({expr}) / 1e6)"
        return f"(DATE_PART(EPOCH_MICROSECOND, {expr}) / 1e6)"

    def timestamp(self, b: Binder, iso: str) -> str:
        """A TIMESTAMP WITH TIME ZONE from an ISO 8601 string, bound."""
        if self.name == "duckdb":
            return f"CAST({b(str(iso))} AS TIMESTAMPTZ)"
        return f"CAST({b(str(iso))} AS TIMESTAMP_TZ)"

    def minus_seconds(self, expr: str, seconds: int) -> str:
        """The timestamp ``seconds`` before ``expr``."""
        if self.name == "duckdb":
            return f"({expr} - INTERVAL '{int(seconds)} seconds')"
        return f"DATEADD(SECOND, -{int(seconds)}, {expr})"

    def approx_quantile(self, expr: str, q: float) -> str:
        if self.name == "duckdb":
            return f"approx_quantile({expr}, {q})"
        return f"APPROX_PERCENTILE({expr}, {q})"

    def json_text(self, column: str, key: str) -> str:
        """The text of ``key`` (a name from the code) in a JSON (VARIANT) column, NULL
        when absent."""
        if not _NAME.fullmatch(key):
            raise ValueError(f"not a JSON key the dashboard reads: {key!r}")
        if self.name == "duckdb":
            return f"json_extract_string({column}, '$.{key}')"
        return f"{column}:{key}::STRING"

    def json_double(self, column: str, path: tuple[str, ...]) -> str:
        """The number at ``path`` (names from the code) inside a JSON (VARIANT) column as
        a DOUBLE, NULL when absent or JSON null: ``SDK``, ``("ms", "file_upload", "mean")``
        is ``SDK:ms.file_upload.mean`` on Snowflake."""
        if not path or not all(_NAME.fullmatch(k) for k in path):
            raise ValueError(f"not a JSON path the dashboard reads: {path!r}")
        if self.name == "duckdb":
            return f"CAST(json_extract_string({column}, '$.{'.'.join(path)}') AS DOUBLE)"
        return f"CAST({column}:{'.'.join(path)} AS DOUBLE)"

    def json_compact(self, expr: str) -> str:
        """A JSON (VARIANT) value as compact JSON text (no spaces between tokens)."""
        if self.name == "duckdb":
            return f"CAST(json({expr}) AS VARCHAR)"
        return f"TO_JSON({expr})"

    def table_columns(self, table: str) -> Statement:
        """A query listing ``table``'s columns as ``COLUMN_NAME`` (no rows if it is absent)."""
        b = Binder()
        where = f"upper(table_name) = {b(table.upper())}"
        if self.name == "duckdb":
            where += f" AND table_schema = {b('main')}"
        else:
            where += " AND table_schema = CURRENT_SCHEMA()"
        sql = (
            "SELECT upper(column_name) AS COLUMN_NAME FROM information_schema.columns "
            f"WHERE {where} ORDER BY ordinal_position"
        )
        return Statement(sql, b.params)


DUCKDB = Dialect("duckdb", "_COMMIT_TIME")
SNOWFLAKE = Dialect("snowflake", "METADATA$ROW_LAST_COMMIT_TIME")
