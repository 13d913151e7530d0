"""The SQL spellings that differ between the emulator's DuckDB and Snowflake.

Everything else the dashboard sends is the common subset of both (``GROUP BY``,
``CASE``, ``count(DISTINCT ...)``, ``(VALUES ...) AS t(a, b)``, ``LIMIT``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DUCKDB", "SNOWFLAKE", "Dialect", "sql_string"]


def sql_string(value: str) -> str:
    """``value`` as a SQL string literal (quotes doubled)."""
    return "'" + str(value).replace("'", "''") + "'"


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

    def now(self) -> str:
        return "CURRENT_TIMESTAMP"

    def timestamp(self, iso: str) -> str:
        """A TIMESTAMP WITH TIME ZONE literal from an ISO 8601 string."""
        if self.name == "duckdb":
            return f"CAST({sql_string(iso)} AS TIMESTAMPTZ)"
        return f"TO_TIMESTAMP_TZ({sql_string(iso)})"

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
        """The text of ``key`` in a JSON (VARIANT) column, NULL when absent."""
        if self.name == "duckdb":
            return f"json_extract_string({column}, '$.{key}')"
        return f"{column}:{key}::STRING"

    def table_columns(self, table: str) -> str:
        """A query listing ``table``'s columns as ``COLUMN_NAME`` (no rows if it is absent)."""
        schema = "main" if self.name == "duckdb" else None
        where = f"upper(table_name) = {sql_string(table.upper())}"
        if schema:
            where += f" AND table_schema = {sql_string(schema)}"
        else:
            where += " AND table_schema = CURRENT_SCHEMA()"
        return (
            "SELECT upper(column_name) AS COLUMN_NAME FROM information_schema.columns "
            f"WHERE {where} ORDER BY ordinal_position"
        )


DUCKDB = Dialect("duckdb", "_COMMIT_TIME")
SNOWFLAKE = Dialect("snowflake", "METADATA$ROW_LAST_COMMIT_TIME")
