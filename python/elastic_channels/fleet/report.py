"""What a local run prints: fleet windows, the summary table, fleet totals.

A fleet window is the workers' windows with the same wall-clock ``window_start``
(workers' windows line up on multiples of the window length since the epoch)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..measures import MB, cpu_s_per_gb, run_throughput
from ..monitor import histogram
from ..sdk.metrics_window import merge_sdk, throttle_counts
from ..worker.meter import ack_fields
from . import text_table

#: Fields of a worker's window line that a fleet window sums exactly.
SUMMED = (
    "rows", "bytes", "acked_rows", "acked_bytes", "acks", "in_flight_batches",
    "in_flight_bytes", "resent_batches", "sdk_retries", "errors", "billable_bytes",
)  # fmt: skip


def window_key(w: dict[str, Any]) -> float:
    """The wall-clock window a worker's line belongs to: its ``window_start``."""
    return float(w["window_start"])


def aggregate_window(
    windows: list[dict[str, Any]], fleet_workers: int | None = None
) -> dict[str, Any]:
    """One fleet-wide window from the workers' lines of the same ``window_start``.

    ``fleet_workers``: the workers the run started. The window's target is then the
    schedule's for all of them (one worker's target times their number), whoever
    reported: a worker that died makes the fleet fall short of its target, not the target
    shrink. Without it (a multi-channel worker merging its channels) the lines' targets
    are added up.

    Counts are exact sums; latency percentiles are read off the merged histograms,
    so they are the percentiles of every worker's latencies together; rates are over
    the window's seconds (from its first start to its last end: a run's first and
    last windows are partial); CPU % and RSS are summed (cores' worth, fleet MiB)."""
    if not windows:
        raise ValueError("aggregate_window needs at least one worker window")
    keys = {window_key(w) for w in windows}
    if len(keys) != 1:
        raise ValueError(f"windows of different window_start mixed: {sorted(keys)}")
    start = min(w["start"] for w in windows)
    end = max(w["end"] for w in windows)
    secs = max(end - start, 1e-9)
    out: dict[str, Any] = {
        "window_start": keys.pop(),
        "window_seconds": windows[0].get("window_seconds"),
        "partial": any(w.get("partial") for w in windows),
        "start": start,
        "end": end,
        "workers": len(windows),
        "worker_ids": sorted(w["worker_id"] for w in windows if "worker_id" in w),
    }
    out.update(_schedule_fields(windows, fleet_workers))
    for key in SUMMED:
        out[key] = sum(int(w.get(key) or 0) for w in windows)
    out["mb_per_s"] = round(out["bytes"] / secs / MB, 3)
    out["rows_per_s"] = round(out["rows"] / secs, 1)
    acks = histogram.merge(w["ack_hist_us"] for w in windows if w.get("ack_hist_us"))
    behind = histogram.merge(w["behind_hist_us"] for w in windows if w.get("behind_hist_us"))
    out.update(ack_fields(acks))
    out["behind_p99_ms"] = histogram.percentile_ms(behind, 99)
    out["behind_max_ms"] = histogram.percentile_ms(behind, 100)
    out["behind_hist_us"] = histogram.encode(behind)
    out["cpu_pct"] = round(sum(float(w.get("cpu_pct") or 0) for w in windows), 1)
    out["rss_mib"] = round(sum(float(w.get("rss_mib") or 0) for w in windows), 1)
    if any("sdk" in w for w in windows):  # the SDK's figures: see sdk/metrics_window.py
        out["sdk"] = merge_sdk(w.get("sdk") for w in windows)
        out["sdk_workers"] = sum(1 for w in windows if w.get("sdk"))
        throttled = throttle_counts(out["sdk"])
        if throttled:
            out["sdk_throttled"] = throttled
    return out


def _schedule_fields(
    windows: list[dict[str, Any]], fleet_workers: int | None = None
) -> dict[str, Any]:
    """The fleet window's target (the schedule's for ``fleet_workers`` workers, else the
    lines' targets added up; None when no line carries one), its stage, whether it is
    warmup, and the scenario. Workers of a run follow one schedule, so they agree on
    these; should they not, the highest target and latest stage win and the window is
    warmup if any worker was still warming up (its figures are left out)."""
    targets = [float(w["target_bps"]) for w in windows if w.get("target_bps") is not None]
    stages = [int(w["stage"]) for w in windows if w.get("stage") is not None]
    target = sum(targets) if fleet_workers is None else max(targets, default=0) * fleet_workers
    return {
        "target_bps": round(target, 1) if targets else None,
        "stage": max(stages) if stages else None,
        "warmup": any(bool(w.get("warmup")) for w in windows),
        "scenario": next((w["scenario"] for w in windows if w.get("scenario")), None),
        "scenario_hash": next(
            (w["scenario_hash"] for w in windows if w.get("scenario_hash")), None
        ),
    }


def aggregate_windows(windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fleet windows, one per ``window_start``, in time order."""
    groups: dict[float, list[dict[str, Any]]] = {}
    for w in windows:
        groups.setdefault(window_key(w), []).append(w)
    return [aggregate_window(groups[k]) for k in sorted(groups)]


def format_window(w: dict[str, Any], clock: bool = True) -> str:
    """A fleet window as a progress line (``clock``: led by its seconds since the
    watch began; the caller puts its own clock first otherwise)."""

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    target = w.get("target_bps")
    sliver = is_sliver(w)
    rate = f"{'-':>9} MB/s " if sliver else f"{w['mb_per_s']:9.1f} MB/s "
    rows = f"{'-':>11} rows/s" if sliver else f"{w['rows_per_s']:>11,.0f} rows/s"
    return (
        (f"[{w['t']:7.1f}s] " if clock else "")
        + f"{w['workers']:3d} workers {rate}"
        + (f"(target {target / MB:.1f}) " if target is not None else "")
        + f"{rows}  ack p50 {ms(w['ack_p50_ms'])} ms "
        f"p99 {ms(w['ack_p99_ms'])} ms  in flight {w['in_flight_bytes'] / MB:.1f} MB"
        + ("  warmup (outside the run's figures)" if w.get("warmup") else "")
        + (throttled_text(w["sdk_throttled"]) if w.get("sdk_throttled") else "")
        + (
            f"  (partial window of {window_seconds_covered(w) * 1e3:.0f} ms: no rate)"
            if sliver
            else "  (partial window: rates over the part it covers)"
            if w.get("partial")
            else ""
        )
    )


def throttled_text(counts: Mapping[str, int]) -> str:
    """What the SDK held back in a window, for a progress line."""
    said = ", ".join(f"{k.replace('_', ' ')} x{v}" for k, v in counts.items())
    return f"  SDK throttled: {said}"


def stage_text(w: dict[str, Any]) -> str | None:
    """A window's phase for a table: ``warmup``, its stage's number, or None (a run
    without a schedule)."""
    if w.get("warmup"):
        return "warmup"
    stage = w.get("stage")
    return None if stage is None else str(stage)


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
    ("throttled windows", "sdk_throttled_windows", "{}"),
    ("unacked", "unacked_rows", "{:,}"),
    ("CPU s/GB", "cpu_s_per_gb", "{:.2f}"),
    ("RSS MiB", "peak_rss_mib", "{:.0f}"),
]


def summary_table(summaries: list[dict[str, Any]], totals: dict[str, Any]) -> str:
    return text_table.render(SUMMARY_COLUMNS, summaries, totals)


def fleet_totals(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [s for s in summaries if s]
    rate = run_throughput(ok)
    bytes_sent = sum(s["bytes_sent"] for s in ok)
    cpu = sum(s.get("cpu_s", 0) for s in ok)
    acks = histogram.merge(s["ack_hist_us"] for s in ok if s.get("ack_hist_us"))
    return {
        "worker_id": "total",
        "append_mode": ",".join(sorted({str(s.get("append_mode")) for s in ok})),
        "rows_sent": sum(s["rows_sent"] for s in ok),
        "rows_acked": sum(s["rows_acked"] for s in ok),
        "bytes_sent": bytes_sent,
        "bytes_acked": sum(s.get("bytes_acked", 0) for s in ok),
        # the values' bytes of the batches acked (what Snowflake bills: billable.py)
        "billable_bytes": sum(int(s.get("billable_bytes") or 0) for s in ok),
        "warmup_billable_bytes": sum(int(s.get("warmup_billable_bytes") or 0) for s in ok),
        # acked bytes over the sending window, as every figure of a run (measures.py)
        **rate,
        # Percentiles of every ack of the run: the workers' histograms merged.
        "ack_p50_ms": histogram.percentile_ms(acks, 50),
        "ack_p99_ms": histogram.percentile_ms(acks, 99),
        "resent_batches": sum(s["resent_batches"] for s in ok),
        "sdk_retries": sum(s["sdk_retries"] for s in ok),
        "unacked_rows": sum(s["unacked_rows"] for s in ok),
        "cpu_s_per_gb": cpu_s_per_gb(cpu, bytes_sent),
        "peak_rss_mib": max((s["peak_rss_mib"] for s in ok), default=None),
        **_sdk_totals(ok),
    }


def _sdk_totals(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's SDK figures (its workers' merged) and the worker windows the SDK
    throttled in, when the workers read them."""
    if not any("sdk" in s for s in summaries):
        return {}
    return {
        "sdk": merge_sdk(s.get("sdk") for s in summaries),
        "sdk_throttled_windows": sum(int(s.get("sdk_throttled_windows") or 0) for s in summaries),
    }


WINDOW_COLUMNS = [
    ("window (UTC)", "clock", "{}"),
    ("stage", "stage_text", "{}"),
    ("workers", "workers", "{}"),
    ("rows", "rows", "{:,}"),
    ("target MB/s", "target_mb_per_s", "{:.1f}"),
    ("MB/s", "mb_per_s", "{:.1f}"),
    ("rows/s", "rows_per_s", "{:,.0f}"),
    ("ack p50 ms", "ack_p50_ms", "{:.0f}"),
    ("ack p99 ms", "ack_p99_ms", "{:.0f}"),
    ("visible p50 ms", "visible_p50_ms", "{:.0f}"),
    ("visible p99 ms", "visible_p99_ms", "{:.0f}"),
]


def windows_table(windows: list[dict[str, Any]], run: dict[str, Any] | None = None) -> str:
    """The fleet windows (as the metrics table holds them), one line each, with their
    stage (``warmup`` for warmup's) and target, and the run: its rates from ``run``
    (``fleet_totals``: acked bytes over the sending window, the one definition, warmup
    left out), not from the windows' span, which starts before the first send; its rows
    and mean target over the windows after warmup. A sliver's rates read ``-``."""
    import datetime as dt

    rows = [
        {**w, "clock": dt.datetime.fromtimestamp(float(w["window_start"]), dt.timezone.utc)
         .strftime("%H:%M:%S"), "stage_text": stage_text(w), "target_mb_per_s": _mb(w),
         **({"mb_per_s": None, "rows_per_s": None} if is_sliver(w) else {})}
        for w in windows
    ]  # fmt: skip
    kept = [w for w in windows if not w.get("warmup")]
    total = {
        "clock": "run",
        "stage_text": "after warmup" if len(kept) < len(windows) else None,
        "workers": max((int(w.get("workers") or 0) for w in kept), default=0),
        "rows": sum(int(w.get("rows") or 0) for w in kept),
        "target_mb_per_s": mean_target_mb(kept),
        "mb_per_s": (run or {}).get("mb_per_s"),
        "rows_per_s": (run or {}).get("rows_per_s"),
    }
    return text_table.render(WINDOW_COLUMNS, rows, total)


def _mb(w: dict[str, Any]) -> float | None:
    target = w.get("target_bps")
    return None if target is None else float(target) / MB


def window_seconds_covered(w: Mapping[str, Any]) -> float:
    """The seconds a window covers: from its first start (its ``window_start`` when not
    said) to its last end, else its length."""
    try:
        return max(float(w["end"]) - float(w.get("start") or w["window_start"]), 0.0)
    except (KeyError, TypeError, ValueError):
        return float(w.get("window_seconds") or 0)


#: A partial window covering less than this part of its length is a sliver: its rate,
#: a batch or two over a few milliseconds, says nothing of the run and is not drawn.
SLIVER_FRACTION = 0.1


def is_sliver(w: Mapping[str, Any]) -> bool:
    """Whether ``w`` is a partial window too short for its rate to mean anything (it
    covers less than :data:`SLIVER_FRACTION` of its length). Its counts still add up
    into the run's figures; only its rate is left out of progress lines and charts."""
    length = float(w.get("window_seconds") or 0)
    return bool(w.get("partial")) and window_seconds_covered(w) < SLIVER_FRACTION * length


def mean_target_mb(windows: list[dict[str, Any]]) -> float | None:
    """The mean target MB/s over ``windows`` (weighted by the seconds each covers), or
    None when none carries one."""
    timed = [(float(w["target_bps"]), window_seconds_covered(w)) for w in windows
             if w.get("target_bps") is not None and w.get("rows")]  # fmt: skip
    seconds = sum(s for _, s in timed)
    return sum(t * s for t, s in timed) / seconds / MB if seconds > 0 else None
