"""The per-stage table beside the metrics table (``<metrics table>_STAGES``, columns
:data:`..snowflake.ddl.STAGE_COLUMNS`): created when missing, as ``setup`` creates it;
its rows upserted on (RUN_ID, STAGE), so writing a stage again replaces its row; read
back by run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..snowflake.ddl import STAGE_COLUMNS
from .merge_sql import merge_head
from .sql_client import SqlClient, SqlError, SqlUnreachable, TypedNull

__all__ = ["StageTable"]

#: What the monitor writes: every column but the one the MERGE sets.
WRITTEN = tuple((n, t) for n, t in STAGE_COLUMNS if n != "UPDATED_AT")
#: Rows per MERGE: a stage's row binds ~30 values and two histograms of a few KB.
CHUNK_ROWS = 50


class StageTable:
    def __init__(self, client: SqlClient, table: str) -> None:
        self.client = client
        self.table = table
        on = "T.RUN_ID = S.RUN_ID AND T.STAGE = S.STAGE"
        self._head = merge_head(table, WRITTEN, on, ("RUN_ID", "STAGE"))

    def ensure(self) -> None:
        """Create the table if it is not there (SqlError with what to do if it cannot)."""
        try:
            self.client.execute(f"SELECT RUN_ID FROM {self.table} LIMIT 0")
            return
        except SqlUnreachable:
            raise
        except SqlError:
            pass
        cols = ",\n".join(f'    "{n}" {t}' for n, t in STAGE_COLUMNS)
        try:
            self.client.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (\n{cols}\n)")
        except SqlError as e:
            raise SqlError(
                f"the per-stage table {self.table} is missing and cannot be created ({e}); "
                "run `elastic-channels setup` with a role that may create it"
            ) from None

    def upsert(self, rows: Sequence[dict[str, Any]]) -> None:
        """Insert or replace the rows (SqlError: the target refused or failed)."""
        names = [n for n, _ in WRITTEN]
        nulls = [TypedNull.of(t) for _, t in WRITTEN]
        one = "(" + ", ".join("?" for _ in WRITTEN) + ")"
        for i in range(0, len(rows), CHUNK_ROWS):
            chunk = rows[i : i + CHUNK_ROWS]
            params = [
                null if r.get(n) is None else r[n]
                for r in chunk
                for n, null in zip(names, nulls, strict=True)
            ]
            sql = self._head.replace("{values}", ", ".join(one for _ in chunk))
            self.client.execute(sql, params)

    def read(self, run_id: str) -> list[dict[str, Any]]:
        """The run's stage rows, by stage."""
        cols = ", ".join(n for n, _ in STAGE_COLUMNS)
        sql = f"SELECT {cols} FROM {self.table} WHERE RUN_ID = ? ORDER BY STAGE"
        return self.client.execute(sql, [run_id]).dicts()
