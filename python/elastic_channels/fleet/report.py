"""What a local run prints: fleet windows, the summary table, fleet totals."""

from __future__ import annotations

from typing import Any

from ..measures import MB
from . import text_table


def aggregate_window(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """One fleet-wide line from the workers' windows of the same period."""
    secs = max(w["end"] - w["start"] for w in windows) or 1e-9
    lat = [w for w in windows if w.get("ack_p50_ms") is not None]
    return {
        "end": max(w["end"] for w in windows),
        "workers": len(windows),
        "mb_per_s": round(sum(w["bytes"] for w in windows) / secs / MB, 2),
        "rows_per_s": round(sum(w["rows"] for w in windows) / secs),
        "ack_p50_ms": max((w["ack_p50_ms"] for w in lat), default=None),
        "ack_p99_ms": max((w["ack_p99_ms"] for w in lat), default=None),
        "in_flight_bytes": sum(w["in_flight_bytes"] for w in windows),
        "resent_batches": sum(w["resent_batches"] for w in windows),
        "sdk_retries": sum(w["sdk_retries"] for w in windows),
        "cpu_pct": round(sum(w["cpu_pct"] for w in windows), 1),
    }


def format_window(w: dict[str, Any]) -> str:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    return (
        f"[{w['t']:7.1f}s] {w['workers']:3d} workers {w['mb_per_s']:9.1f} MB/s "
        f"{w['rows_per_s']:>11,} rows/s  ack p50 {ms(w['ack_p50_ms'])} ms "
        f"p99 {ms(w['ack_p99_ms'])} ms  in flight {w['in_flight_bytes'] / MB:.1f} MB"
    )


SUMMARY_COLUMNS = [
    ("worker", "worker_id", "{}"),
    ("path", "append_mode", "{}"),
    ("rows sent", "rows_sent", "{:,}"),
    ("rows acked", "rows_acked", "{:,}"),
    ("MB/s", "mb_per_s", "{:.1f}"),
    ("ack p50 ms", "ack_p50_ms", "{:.0f}"),
    ("ack p99 ms", "ack_p99_ms", "{:.0f}"),
    ("resent", "resent_batches", "{}"),
    ("SDK retries", "sdk_retries", "{}"),
    ("unacked", "unacked_rows", "{:,}"),
    ("CPU s/GB", "cpu_s_per_gb", "{:.2f}"),
    ("RSS MiB", "peak_rss_mib", "{:.0f}"),
]


def summary_table(summaries: list[dict[str, Any]], totals: dict[str, Any]) -> str:
    return text_table.render(SUMMARY_COLUMNS, summaries, totals)


def fleet_totals(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [s for s in summaries if s]
    secs = max((s["seconds"] for s in ok), default=0) or 1e-9
    bytes_sent = sum(s["bytes_sent"] for s in ok)
    cpu = sum(s.get("cpu_s", 0) for s in ok)
    return {
        "worker_id": "total",
        "append_mode": ",".join(sorted({str(s.get("append_mode")) for s in ok})),
        "rows_sent": sum(s["rows_sent"] for s in ok),
        "rows_acked": sum(s["rows_acked"] for s in ok),
        "bytes_sent": bytes_sent,
        "seconds": secs,
        "mb_per_s": round(bytes_sent / secs / MB, 2),
        "rows_per_s": round(sum(s["rows_sent"] for s in ok) / secs),
        "ack_p50_ms": max((s["ack_p50_ms"] for s in ok if s.get("ack_p50_ms")), default=None),
        "ack_p99_ms": max((s["ack_p99_ms"] for s in ok if s.get("ack_p99_ms")), default=None),
        "resent_batches": sum(s["resent_batches"] for s in ok),
        "sdk_retries": sum(s["sdk_retries"] for s in ok),
        "unacked_rows": sum(s["unacked_rows"] for s in ok),
        "cpu_s_per_gb": round(cpu / (bytes_sent / 1e9), 3) if bytes_sent else None,
        "peak_rss_mib": max((s["peak_rss_mib"] for s in ok), default=None),
    }
