"""The landing table the dashboard reads, as the workload declares it.

``elastic-channels dashboard --workload NAME|FILE`` (default ``resort-sales``) names the
workload whose rows the run landed: its table, its columns and their Snowflake types,
and which columns say whose row it is (:class:`LandingView`). The Resort sales page is
for the resort-sales table only; every other workload gets the "Latest rows" page, and
the Run page counts what landed in the workload's table.

A workload's names may be almost any text (``workload/check.py``: 1 to 255 characters
of valid Unicode, no control characters: quotes, spaces, ``?``, commas and any script
are allowed), so every name is written into SQL as a quoted identifier, its ``"``
doubled (:func:`ident`): DuckDB's and Snowflake's rule alike. On Snowflake a table name that is
a plain identifier is written unquoted, as ``setup`` creates it (Snowflake upper-cases
it); a column name is always quoted, as ``setup`` creates columns (case kept, as the
pipe's ``MATCH_BY_COLUMN_NAME = CASE_SENSITIVE`` needs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import COLUMNS, TABLE_NAME
from ..workload import CheckedWorkload, load_workload
from ..workload.types import TIMESTAMP_TZ, SnowflakeType
from .dialect import Dialect

__all__ = ["DEFAULT_WORKLOAD", "LandingView", "ident", "load_view", "view_of"]

DEFAULT_WORKLOAD = "resort-sales"
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (its ``"`` doubled): any text stays one name."""
    if "\x00" in name:  # neither target takes a NUL in a name; never cut one short
        raise ValueError(f"a name with a NUL character cannot be quoted: {name!r}")
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class LandingView:
    """One workload's landing table as the pages read it.

    ``run_id``: the column holding the run's id (None: rows cannot be told apart by
    run); ``worker_id``: the one holding the worker's index (None: none);
    ``unique_id``: the column holding ``<run>-<worker>-<seq>`` (None: duplicates
    and loss cannot be counted); ``send_time``: the TIMESTAMP_TZ column stamped with
    the batch's send time, what ingest-to-visible is measured from (None: none);
    ``order_by``: the column the latest rows are ordered by (the send time, the first
    of whatever type, else None: by commit time)."""

    workload: str
    description: str
    table: str
    columns: tuple[tuple[str, SnowflakeType], ...]
    run_id: str | None
    worker_id: str | None
    unique_id: str | None
    send_time: str | None
    order_by: str | None
    is_resort: bool

    def table_sql(self, d: Dialect) -> str:
        """The table's name as ``d`` reads it (see the module)."""
        if d.name == "snowflake" and _PLAIN.fullmatch(self.table):
            return self.table
        return ident(self.table)

    def type_of(self, column: str) -> SnowflakeType:
        return dict(self.columns)[column]


def _first(w: CheckedWorkload, source: str, kinds: tuple[str, ...] | None = None) -> str | None:
    for c in w.columns_with(source):
        if kinds is None or c.type.kind in kinds:
            return c.name
    return None


def view_of(w: CheckedWorkload) -> LandingView:
    names = [c.name for c in w.columns]
    resort = (
        w.name == DEFAULT_WORKLOAD and w.table == TABLE_NAME and names == [n for n, _ in COLUMNS]
    )
    # a TIMESTAMP_NTZ send time is UTC wall time, which Snowflake would read in the
    # session's time zone: only a TIMESTAMP_TZ one measures ingest-to-visible
    send = _first(w, "send_time", (TIMESTAMP_TZ,))
    return LandingView(
        workload=w.name,
        description=w.description,
        table=w.table,
        columns=tuple((c.name, c.type) for c in w.columns),
        run_id=_first(w, "run_id"),
        worker_id=_first(w, "worker_id"),
        unique_id=w.unique_id_column,
        send_time=send,
        order_by=send or _first(w, "send_time"),
        is_resort=resort,
    )


def load_view(name_or_path: str | None) -> LandingView:
    """The view of workload ``name_or_path`` (None or empty: resort-sales); a
    :class:`~..workload.WorkloadError` names the file, line, column and key."""
    return view_of(load_workload((name_or_path or "").strip() or DEFAULT_WORKLOAD))
