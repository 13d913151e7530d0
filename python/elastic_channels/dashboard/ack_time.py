"""Where a window's ack time goes: the SDK's own means (the fleet rows' ``SDK`` VARIANT,
the window line's ``sdk`` object: docs/WORKER.md) set against the window's mean ack
latency (its ``ACK_LATENCY_HIST``).

Means, not quantiles: a count-weighted mean of a sum is the sum of the means, so the
parts of an ack's time stack up to its mean; a p99 of a sum is no sum of p99s. Per window:

- buffer: ``ms.input_buffer`` + ``ms.output_buffer`` (waiting to be flushed);
- upload: ``ms.file_upload`` (a file's upload to the stage);
- registration/API: the success latency of ``insert_files`` (a file's registration) and
  ``insert_rows`` (an inline request), their calls' mean when a window has both;
- the rest: the window's mean ack latency minus those, floored at 0 (the server's commit,
  the ack's way back, the worker's callback).

A part the SDK took no value for in the window counts 0. ``ms.processing_files`` (the
SDK's own span from buffer to registered) and ``ms.processing_rows`` are drawn as lines
beside the stack, not in it. :func:`query` reads the figures (one SQL for both dialects:
DuckDB's JSON paths on the emulator, Snowflake's VARIANT paths on an account);
:func:`decompose` does the arithmetic.
"""

from __future__ import annotations

import pandas as pd

from ..model import METRICS_TABLE_NAME
from ..monitor.histogram import HistogramError, decode
from .dialect import Dialect
from .metrics_columns import MetricsColumns
from .statement import Binder, Statement

__all__ = [
    "ACK_MEAN",
    "PARTS",
    "PROCESSING",
    "SDK_PATHS",
    "THROTTLE",
    "THROTTLE_NAMES",
    "decompose",
    "query",
    "throttled_text",
]

#: Column of the query -> its path in the ``SDK`` object (sdk/metrics_window.py).
SDK_PATHS: dict[str, tuple[str, ...]] = {
    "INPUT_BUFFER_MS": ("ms", "input_buffer", "mean"),
    "OUTPUT_BUFFER_MS": ("ms", "output_buffer", "mean"),
    "FILE_UPLOAD_MS": ("ms", "file_upload", "mean"),
    "INSERT_FILES_MS": ("api", "insert_files", "ms", "mean"),
    "INSERT_FILES_N": ("api", "insert_files", "ms", "n"),
    "INSERT_ROWS_MS": ("api", "insert_rows", "ms", "mean"),
    "INSERT_ROWS_N": ("api", "insert_rows", "ms", "n"),
    "PROCESSING_FILES_MS": ("ms", "processing_files", "mean"),
    "PROCESSING_ROWS_MS": ("ms", "processing_rows", "mean"),
}
#: The SDK's throttle counts (column -> ``throttle.<key>``) and how the page names them.
THROTTLE_NAMES = {
    "memory_limit": "memory limit",
    "inflight_byte_limit": "in-flight byte limit",
    "inflight_row_limit": "in-flight row limit",
    "input_buffer_full": "input buffer full",
    "output_buffer_full": "output buffer full",
}
THROTTLE = {f"THROTTLE_{k.upper()}": ("throttle", k) for k in THROTTLE_NAMES}
#: The stacked parts, bottom up (labels on the page).
PARTS = ("buffer", "upload", "registration/API", "the rest")
#: The lines beside the stack: the SDK's processing means.
PROCESSING = {
    "PROCESSING_FILES_MS": "SDK processing, files",
    "PROCESSING_ROWS_MS": "SDK processing, inline",
}
ACK_MEAN = "ack mean"


def query(d: Dialect, run_id: str, m: MetricsColumns) -> Statement | None:
    """The run's fleet windows that carry SDK figures, oldest first (a partial window
    covering less than half its length left out, as the other charts leave it: the
    sliver after the end of sending): ``T0``, ``T``, the
    figures of :data:`SDK_PATHS` and :data:`THROTTLE`, ``SDK_THROTTLED`` and
    ``ACK_HIST``; None when the table has no ``SDK`` column or no fleet rows."""
    if not (m.has("sdk") and m.has("is_fleet")):
        return None
    sdk = m.col("sdk")
    cols = [f"{m.col('start') if m.has('start') else 'NULL'} AS T0", f"{m.col('end')} AS T"]
    cols += [f"{d.json_double(sdk, p)} AS {c}" for c, p in {**SDK_PATHS, **THROTTLE}.items()]
    throttled = m.col("sdk_throttled") if m.has("sdk_throttled") else "NULL"
    cols.append(f"{throttled} AS SDK_THROTTLED")
    cols.append(f"{m.col('ack_hist') if m.has('ack_hist') else 'NULL'} AS ACK_HIST")
    kept = ""
    if all(m.has(c) for c in ("partial", "start", "window_seconds")):  # as fleet_series
        sliver = f"{d.diff_ms(m.col('start'), m.col('end'))} < 500 * {m.col('window_seconds')}"
        kept = f" AND NOT ({m.flag('partial')} AND coalesce({sliver}, FALSE))"
    b = Binder()
    sql = (
        f"SELECT {', '.join(cols)} FROM {METRICS_TABLE_NAME} "
        f"WHERE {m.col('run')} = {b(run_id)} AND {m.flag('is_fleet')} "
        f"AND NOT {m.flag('is_summary')} AND {sdk} IS NOT NULL{kept} ORDER BY T"
    )
    return Statement(sql, b.params)


def ack_mean_ms(encoded: object) -> float:
    """The mean (ms) of an encoded ack histogram; NaN without one, an empty one, or one
    that cannot be read (a gap in the chart, not a failed page)."""
    if not isinstance(encoded, str) or not encoded:
        return float("nan")
    try:
        h = decode(encoded)
    except HistogramError:
        return float("nan")
    return h.get_mean_value() / 1e3 if h.get_total_count() else float("nan")


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    if col not in df.columns:
        return pd.Series(float("nan"), index=df.index)
    return pd.to_numeric(df[col], errors="coerce")


def decompose(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (rows of :func:`query`) as ``T0``, ``T``, one column per part of
    :data:`PARTS` (ms; a part without a value in the window: 0), :data:`ACK_MEAN` (NaN
    without acks; then the rest is NaN too), the processing lines of :data:`PROCESSING`
    (NaN without a value), ``throttled`` (bool) and ``throttle`` (what was hit, text)."""
    zero = lambda c: _num(df, c).fillna(0.0)  # noqa: E731
    out = pd.DataFrame(index=df.index)
    out["T0"] = df["T0"] if "T0" in df.columns else df["T"]
    out["T"] = df["T"]
    out["buffer"] = zero("INPUT_BUFFER_MS") + zero("OUTPUT_BUFFER_MS")
    out["upload"] = zero("FILE_UPLOAD_MS")
    n_files, n_rows = zero("INSERT_FILES_N"), zero("INSERT_ROWS_N")
    n = n_files + n_rows
    api = (n_files * zero("INSERT_FILES_MS") + n_rows * zero("INSERT_ROWS_MS")) / n.where(n > 0)
    out["registration/API"] = api.fillna(0.0)
    if "ACK_HIST" in df.columns:
        ack = df["ACK_HIST"].map(ack_mean_ms).astype(float)
    else:
        ack = pd.Series(float("nan"), index=df.index)
    out[ACK_MEAN] = ack
    known = out["buffer"] + out["upload"] + out["registration/API"]
    out["the rest"] = (ack - known).clip(lower=0.0)
    for col, label in PROCESSING.items():
        out[label] = _num(df, col)
    counts = pd.DataFrame({k: zero(c) for c, (_, k) in THROTTLE.items()}, index=df.index)
    out["throttled"] = (_num(df, "SDK_THROTTLED").fillna(0) > 0) | (counts.sum(axis=1) > 0)
    out["throttle"] = [throttled_text(counts.loc[i].to_dict()) for i in df.index]
    return out.reset_index(drop=True)


def throttled_text(counts: dict[str, float]) -> str:
    """``{"memory_limit": 3, ...}`` as ``memory limit x3, ...`` (the counts above 0)."""
    return ", ".join(
        f"{THROTTLE_NAMES.get(k, k)} x{int(v)}" for k, v in counts.items() if v and v > 0
    )
