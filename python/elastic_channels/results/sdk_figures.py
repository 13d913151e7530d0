"""A run's SDK figures, from the ``sdk`` object of its workers' summaries (the SDK's own
Prometheus metrics, merged over the run: docs/WORKER.md): files and their compression,
and where an ack's time goes, as means (exact over the run: the SDK's sums over its
counts). None for each when no worker read the SDK's metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["SDK_FIGURES", "sdk_figures", "sdk_line"]

#: Figure name -> what it is (the result's figures, compare's rows).
SDK_FIGURES: dict[str, str] = {
    "sdk_files": "files the SDK uploaded to the pipe's stage",
    "sdk_compression_ratio": "the files' mean zstd ratio",
    "sdk_input_buffer_ms": "mean time in the SDK's input buffer, ms",
    "sdk_output_buffer_ms": "mean time in the SDK's output buffer, ms",
    "sdk_upload_ms": "mean file upload latency, ms",
    "sdk_register_ms": "mean registration (insert_files) latency, ms",
    "sdk_throttled_windows": "windows in which the SDK held appends back",
}


def _mean(summary: Any) -> float | None:
    if isinstance(summary, Mapping) and summary.get("n") and summary.get("mean") is not None:
        return round(float(summary["mean"]), 2)
    return None


def sdk_figures(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's SDK figures from its workers' summaries (their ``sdk`` merged)."""
    from ..sdk.metrics_window import merge_sdk

    parts = [s.get("sdk") for s in summaries if s]
    merged = merge_sdk(p for p in parts if isinstance(p, dict))
    if merged is None:
        return dict.fromkeys(SDK_FIGURES)
    throttled = sum(int(s.get("sdk_throttled_windows") or 0) for s in summaries if s)
    files = merged.get("files") or {}
    ms = merged.get("ms") or {}
    api = merged.get("api") or {}
    return {
        "sdk_files": int(files.get("durable") or 0) + int(files.get("transient") or 0),
        "sdk_compression_ratio": _mean(merged.get("compression_ratio")),
        "sdk_input_buffer_ms": _mean(ms.get("input_buffer")),
        "sdk_output_buffer_ms": _mean(ms.get("output_buffer")),
        "sdk_upload_ms": _mean(ms.get("file_upload")),
        "sdk_register_ms": _mean((api.get("insert_files") or {}).get("ms")),
        "sdk_throttled_windows": throttled,
    }


def sdk_line(figures: Mapping[str, Any]) -> str | None:
    """The summary's line of the SDK's figures (None when none was read)."""
    if figures.get("sdk_files") is None:
        return None

    def ms(key: str) -> str:
        value = figures.get(key)
        return "-" if value is None else f"{value:.0f}"

    ratio = figures.get("sdk_compression_ratio")
    return (
        f"SDK (its own metrics, means): {figures['sdk_files']:,} files"
        + (f" compressed {ratio:.1f}x" if ratio is not None else "")
        + f"; input buffer {ms('sdk_input_buffer_ms')} ms, output buffer "
        f"{ms('sdk_output_buffer_ms')} ms, upload {ms('sdk_upload_ms')} ms, registration "
        f"{ms('sdk_register_ms')} ms; throttled in {figures['sdk_throttled_windows']} window(s)"
    )
