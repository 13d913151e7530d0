"""What the monitor reads off the landing table: ingest-to-visible per window (commit
time less the rows' send time) and how many of the run's rows are visible.

The table and its columns are resort sales' (``RESORT_SALES``: ``SALE_TIME``,
``RUN_ID``, ``TXID``) unless :meth:`LandingReads.follow` is given a workload's
(``landing_table.py``): its send-time column (TIMESTAMP_TZ), its run id column, else the
prefix of its unique ids. Without a send-time column, or a way to tell the run's rows,
ingest-to-visible cannot be read and the monitor writes the windows without it.
"""

from __future__ import annotations

from typing import Any

from ..landing_table import LandingTable
from .sql_client import SqlClient

__all__ = ["LandingReads"]


class LandingReads:
    """The landing table's reads of a metrics sink over SQL."""

    def __init__(self, client: SqlClient, landing_table: str) -> None:
        self.client = client
        self.landing_table = landing_table
        #: The landing table's send-time, run id and unique id columns.
        self.send_time: str | None = "SALE_TIME"
        self.run_id_column: str | None = "RUN_ID"
        self.unique_id: str | None = "TXID"

    def follow(self, land: LandingTable) -> None:
        """Read ingest-to-visible and landed rows off ``land``'s table and columns."""
        self.landing_table = land.name
        self.send_time, self.run_id_column, self.unique_id = (
            land.send_time, land.run_id, land.unique_id,
        )  # fmt: skip

    @property
    def visible_readable(self) -> bool:
        """Whether ingest-to-visible can be read: a send-time column, and the run's rows
        found by a run id column (or a unique id's prefix)."""
        return self.send_time is not None and self._run_rows() is not None

    def _run_rows(self) -> str | None:
        """The condition on the landing table for the run's rows (the run id bound as
        ``?``), or None when its rows cannot be told by run."""
        if self.run_id_column is not None:
            return f"{_quoted(self.run_id_column)} = ?"
        if self.unique_id is not None:
            return f"STARTSWITH({_quoted(self.unique_id)}, ? || '-')"
        return None

    def visible_latency(
        self,
        run_id: str,
        window_s: float,
        start: float,
        end: float,
        last: float | None = None,
    ) -> dict[float, dict[str, Any]]:
        """Ingest-to-visible of the run's rows committed in ``[start, end)`` (epoch s), per
        window of ``window_s``: rows, p50, p99 and average of commit time minus
        the send time, in ms. Keyed by window start ({} without a send-time column).
        With ``last`` (a window start), the rows committed after that window are counted
        in it: the run's last window holds every commit that came after it."""
        window_ms = round(window_s * 1000)
        where = self._run_rows()
        if self.send_time is None or where is None:
            return {}
        send = _quoted(self.send_time)
        latency = f"TIMESTAMPDIFF(MICROSECOND, {send}, METADATA$ROW_LAST_COMMIT_TIME)"
        bucket = (
            f"FLOOR(DATE_PART(EPOCH_MILLISECOND, METADATA$ROW_LAST_COMMIT_TIME) / "
            f"{window_ms}) * {window_ms}"
        )
        if last is not None:
            bucket = f"LEAST({bucket}, {round(last * 1000)})"
        result = self.client.execute(
            f"SELECT {bucket} AS BUCKET_MS, COUNT(*) AS N, "
            f"PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY {latency}) AS P50_US, "
            f"PERCENTILE_CONT(0.99) WITHIN GROUP (ORDER BY {latency}) AS P99_US, "
            f"AVG({latency}) AS AVG_US "
            f"FROM {self.landing_table} WHERE {where} "
            "AND METADATA$ROW_LAST_COMMIT_TIME >= CAST(? AS TIMESTAMP_TZ) "
            "AND METADATA$ROW_LAST_COMMIT_TIME < CAST(? AS TIMESTAMP_TZ) "
            "GROUP BY 1 ORDER BY 1",
            [run_id, iso_utc(start), iso_utc(end)],
        )
        out: dict[float, dict[str, Any]] = {}
        for r in result.dicts():
            out[round(float(r["BUCKET_MS"]) / 1000, 6)] = {
                "visible_rows": int(r["N"]),
                "visible_p50_ms": _ms(r["P50_US"]),
                "visible_p99_ms": _ms(r["P99_US"]),
                "visible_avg_ms": _ms(r["AVG_US"]),
            }
        return out

    def landed_rows(self, run_id: str) -> int:
        """Rows of the run visible in the landing table (0 when they cannot be told)."""
        where = self._run_rows()
        if where is None:
            return 0
        result = self.client.execute(
            f"SELECT COUNT(*) AS N FROM {self.landing_table} WHERE {where}", [run_id]
        )
        return int(result.rows[0][0]) if result.rows else 0


def _quoted(name: str) -> str:
    """A column name as setup creates it: quoted, its case kept."""
    return '"' + name.replace('"', '""') + '"'


def _ms(us: Any) -> float | None:
    return None if us is None else round(float(us) / 1000, 3)


def iso_utc(epoch_s: float) -> str:
    import datetime as dt

    t = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(
        microseconds=round(epoch_s * 1e6)
    )
    return t.isoformat()
