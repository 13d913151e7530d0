"""The Run page's "Per stage" table: the run's rows of the per-stage table the monitor
writes once every worker has ended (``ELASTIC_K8S_METRICS_STAGES``: see
``monitor/stage_rows.py``), for a run whose load shape has stages; nothing while the run
goes on or for a table made before it existed."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..model import METRICS_TABLE_NAME
from ..snowflake.ddl import stages_table
from .common import load
from .source import DataSource
from .statement import Binder, Statement

__all__ = ["COLUMNS", "STAGES_TABLE", "show_stages", "stage_rows"]

STAGES_TABLE = stages_table(METRICS_TABLE_NAME)
#: The columns shown, their headings, and how their numbers are written: as the Run
#: page's other tables write them (MB/s to 2 places, rows/s and ms whole, counts whole).
SHOWN = {
    "STAGE": ("Stage", "%d"),
    "SECONDS": ("Seconds", "%.1f"),
    "TARGET_MB_PER_SEC": ("Target MB/s", "%.2f"),
    "MB_PER_SEC": ("MB/s", "%.2f"),
    "ACKED_MB_PER_SEC": ("Acked MB/s", "%.2f"),
    "ROWS_PER_SEC": ("Rows/s", "%.0f"),
    "ACK_LATENCY_P50_MS": ("Ack p50 ms", "%.0f"),
    "ACK_LATENCY_P99_MS": ("Ack p99 ms", "%.0f"),
    "BEHIND_SCHEDULE_P99_MS": ("Behind p99 ms", "%.0f"),
    "ERRORS": ("Errors", "%d"),
    "RESENT_BATCHES": ("Resends", "%d"),
}
#: The table's column settings, by heading.
COLUMNS = {title: st.column_config.NumberColumn(title, format=fmt) for title, fmt in SHOWN.values()}


def stage_rows(run_id: str) -> Statement:
    """The run's stages, in order, with the columns shown."""
    b = Binder()
    sql = f"SELECT {', '.join(SHOWN)} FROM {STAGES_TABLE} WHERE RUN_ID = {b(run_id)} ORDER BY STAGE"
    return Statement(sql, b.params)


def show_stages(src: DataSource, run_id: str) -> None:
    """The table, when the per-stage table holds rows of the run."""
    if load(src, src.dialect.table_columns(STAGES_TABLE)).empty:
        return
    df: pd.DataFrame = load(src, stage_rows(run_id))
    if df.empty:
        return
    st.subheader("Per stage")
    st.caption(
        "Written by the monitor once every worker has ended: each stage's windows, "
        "warmup left out, by the result file's definitions (MB/s appended, acked MB/s "
        "acknowledged, over the stage's seconds; latencies off merged histograms)."
    )
    shown = df.rename(columns={c: title for c, (title, _) in SHOWN.items()})
    st.dataframe(shown, hide_index=True, width="stretch", key="stages", column_config=COLUMNS)
