"""A run's figures, derived from what ``elastic-channels run --json`` prints.

- Throughput (``mb_per_s``, ``rows_per_s``, ``seconds``): :func:`..measures.run_throughput`
  over the workers' summaries, the one definition every report uses (acked bytes and rows
  over the sending window; the summaries leave warmup out).
- Latency percentiles: read off the MERGED histograms of the run's fleet windows, warmup
  windows left out (so a fleet p99 is the p99 of every ack of every worker together).
- Ingest-to-visible: no histogram of it is kept, so: the emulator's count over every
  landed row of the run when it made one and the run had no warmup; else the highest of
  the non-warmup windows' values, which is an upper bound of the run's (a percentile of
  the union of windows is at most the highest of theirs); else not measured (None).
- Counts (``errors``, ``resent_batches``, ``sdk_retries``): the whole run's, warmup
  included (an error in warmup is an error); ``lost`` and ``duplicates`` as the
  emulator's check counted them (None on an account: nothing counts them there).
- ``cpu_s_per_gb`` and ``peak_rss_mib`` as the run's totals say (the worst worker's RSS),
  with the peak RSS of each worker beside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..measures import MB, run_throughput
from ..monitor import histogram
from .price import billable_figures
from .sdk_figures import sdk_figures

__all__ = ["figures_of", "run_windows", "stage_figures", "stage_windows"]

Window = Mapping[str, Any]


def run_windows(result: Mapping[str, Any]) -> list[Window]:
    """The run's fleet windows: those it printed live, else those the monitor wrote."""
    return list(result.get("windows") or result.get("metrics_windows") or [])


def figures_of(result: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``(figures, sources)``: the run's figures by name (the threshold figures and a few
    more), and for the figures whose origin varies, where each came from."""
    summaries = [s for s in result.get("worker_summaries") or [] if s]
    totals = result.get("totals") or {}
    landed = result.get("landed") or {}
    windows = run_windows(result)
    kept = [w for w in windows if not w.get("warmup")]
    sources: dict[str, str] = {}
    figures: dict[str, Any] = dict(run_throughput(summaries))
    if windows:
        acks = _merged(kept, "ack_hist_us")
        behind = _merged(kept, "behind_hist_us")
        sources["ack_p99_ms"] = "merged histograms of the run's non-warmup fleet windows"
    else:  # no complete window was reported: the workers' own whole-run histograms
        acks = _merged(summaries, "ack_hist_us")
        behind = _merged(summaries, "behind_hist_us")
        sources["ack_p99_ms"] = "merged histograms of the workers' summaries"
    figures["ack_p50_ms"] = histogram.percentile_ms(acks, 50)
    figures["ack_p99_ms"] = histogram.percentile_ms(acks, 99)
    figures["ack_max_ms"] = histogram.percentile_ms(acks, 100)
    figures["behind_p99_ms"] = histogram.percentile_ms(behind, 99)
    visible, sources["visible_p99_ms"] = _visible(result, windows, landed)
    figures.update(visible)
    figures["lost"] = landed.get("lost")
    figures["duplicates"] = landed.get("duplicates")
    for key in ("errors", "resent_batches", "sdk_retries"):
        figures[key] = sum(int(s.get(key) or 0) for s in summaries) if summaries else None
    figures["cpu_s_per_gb"] = totals.get("cpu_s_per_gb")
    figures["peak_rss_mib"] = totals.get("peak_rss_mib")
    figures["workers"] = result.get("workers")
    figures["failed_workers"] = len(result.get("failed_workers") or [])
    figures["rows_sent"] = totals.get("rows_sent")
    figures["rows_acked"] = totals.get("rows_acked")
    figures["bytes_acked"] = totals.get("bytes_acked")
    # billable GB (the values' bytes, warmup included) and, with the run's price, its cost
    figures.update(billable_figures(summaries, result.get("price")))
    figures["target_mb_per_s"], sources["target_mb_per_s"] = _target(result, kept)
    figures["pct_of_target"] = _share(figures.get("mb_per_s"), figures["target_mb_per_s"])
    figures.update(sdk_figures(summaries))
    return figures, sources


def _share(achieved: Any, target: Any) -> float | None:
    """``achieved`` as a % of ``target`` (None when either is unknown or the target 0)."""
    if not isinstance(achieved, (int, float)) or not isinstance(target, (int, float)):
        return None
    return round(achieved / target * 100, 1) if target > 0 else None


def peak_rss_per_worker(result: Mapping[str, Any]) -> dict[str, float | None]:
    """Each worker's peak RSS (MiB) by worker id, from its summary."""
    return {
        str(s.get("worker_id")): s.get("peak_rss_mib")
        for s in result.get("worker_summaries") or []
        if s
    }


def stage_figures(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per stage (the windows' ``stage``, warmup windows left out): its seconds and rates
    over its whole windows (:func:`stage_windows`: a stage's time only), its latency
    percentiles off the merged histograms and its counts over all its windows (the acks
    of its last sends come in the drain). A run whose windows name no stage is one stage,
    0; a stage with no whole window is none."""
    visible_at = _visible_by_window(result)
    constant = _constant_target(result)
    windows = run_windows(result)
    whole = stage_windows(windows)
    every = stage_windows(windows, whole_only=False)
    return [_stage(i, whole[i], every[i], visible_at, constant) for i in sorted(whole)]


def stage_windows(windows: Iterable[Window], whole_only: bool = True) -> dict[int, list[Window]]:
    """The windows of each stage, warmup's left out. ``whole_only``: only those whose
    time is the stage's, leaving out the edges of the schedule: a sliver (a partial
    window too short to have a rate, :func:`..fleet.report.is_sliver`) and a partial
    window in which nothing was sent (after the schedule's end, while the workers drain
    their acks). Such a window never makes a stage of its own nor dilutes a stage's
    rate."""
    from ..fleet.report import is_sliver

    groups: dict[int, list[Window]] = {}
    for w in windows:
        if w.get("warmup"):
            continue
        if whole_only and (is_sliver(w) or (w.get("partial") and not w.get("rows"))):
            continue
        groups.setdefault(int(w.get("stage") or 0), []).append(w)
    return groups


def warmup_figures(result: Mapping[str, Any]) -> dict[str, Any]:
    """How much of the run was warmup: its windows and their seconds (0 for none)."""
    warm = [w for w in run_windows(result) if w.get("warmup")]
    return {"windows": len(warm), "seconds": round(sum(_seconds(w) for w in warm), 3)}


def _stage(
    index: int,
    windows: Sequence[Window],
    every: Sequence[Window],
    visible_at: dict[float, Any],
    constant: float | None,
) -> dict[str, Any]:
    seconds = sum(_seconds(w) for w in windows)
    secs = max(seconds, 1e-9)
    acks = _merged(every, "ack_hist_us")
    behind = _merged(every, "behind_hist_us")
    targets = [w for w in windows if w.get("target_bps") is not None]
    target = (
        round(sum(float(w["target_bps"]) * _seconds(w) for w in targets) / secs / MB, 3)
        if targets
        else constant
    )
    visible = [visible_at.get(float(w["window_start"])) for w in windows if "window_start" in w]
    measured = [v for v in visible if v is not None]
    return {
        "stage": index,
        "windows": len(windows),
        "seconds": round(seconds, 3),
        "target_mb_per_s": target,
        "mb_per_s": round(sum(int(w.get("bytes") or 0) for w in windows) / secs / MB, 3),
        "acked_mb_per_s": round(
            sum(int(w.get("acked_bytes") or 0) for w in windows) / secs / MB, 3
        ),
        "rows_per_s": round(sum(int(w.get("rows") or 0) for w in windows) / secs, 1),
        "ack_p50_ms": histogram.percentile_ms(acks, 50),
        "ack_p99_ms": histogram.percentile_ms(acks, 99),
        "behind_p99_ms": histogram.percentile_ms(behind, 99),
        "visible_p99_ms": max(measured) if measured else None,
        "errors": sum(int(w.get("errors") or 0) for w in every),
        "resent_batches": sum(int(w.get("resent_batches") or 0) for w in every),
        "sdk_retries": sum(int(w.get("sdk_retries") or 0) for w in every),
        "cpu_s": round(sum(float(w.get("cpu_pct") or 0) / 100 * _seconds(w) for w in windows), 3),
    }


def _seconds(w: Window) -> float:
    """A window's seconds: from its first start to its last end (a partial one's part)."""
    try:
        return max(float(w["end"]) - float(w.get("start", w["window_start"])), 0.0)
    except (KeyError, TypeError, ValueError):
        return float(w.get("window_seconds") or 0)


def _merged(items: Iterable[Window], key: str) -> Any:
    return histogram.merge(str(x[key]) for x in items if x.get(key))


def _visible(
    result: Mapping[str, Any], windows: Sequence[Window], landed: Mapping[str, Any]
) -> tuple[dict[str, Any], str]:
    warmup = any(w.get("warmup") for w in windows)
    after_warmup = landed.get("visible_sent_from") is not None
    if (after_warmup or not warmup) and landed.get("visible_p99_ms") is not None:
        figures = {k: landed.get(k) for k in ("visible_p50_ms", "visible_p99_ms")}
        rows = "sent after warmup" if after_warmup else "of the run"
        return figures, f"the emulator's count over every landed row {rows}"
    kept = [w for w in result.get("metrics_windows") or [] if not w.get("warmup")]
    out = {}
    for key in ("visible_p50_ms", "visible_p99_ms"):
        values = [float(w[key]) for w in kept if w.get(key) is not None]
        out[key] = max(values) if values else None
    if out["visible_p99_ms"] is None:
        return out, "not measured (no window of the run has an ingest-to-visible figure)"
    return out, "the highest of the non-warmup windows' values (an upper bound of the run's)"


def _visible_by_window(result: Mapping[str, Any]) -> dict[float, Any]:
    return {
        float(w["window_start"]): w.get("visible_p99_ms")
        for w in result.get("metrics_windows") or []
        if "window_start" in w
    }


def _target(result: Mapping[str, Any], kept: Sequence[Window]) -> tuple[float | None, str]:
    """The fleet's target MB/s: the mean over the non-warmup windows of their targets
    when they carry one, else the workers times the run's constant target."""
    timed = [w for w in kept if w.get("target_bps") is not None]
    seconds = sum(_seconds(w) for w in timed)
    if timed and seconds > 0:
        mean = sum(float(w["target_bps"]) * _seconds(w) for w in timed) / seconds
        return round(mean / MB, 3), "the mean of the non-warmup windows' targets"
    constant = _constant_target(result)
    if constant is not None:
        return constant, "workers x the run's --target-bps"
    return None, "not known"


def _constant_target(result: Mapping[str, Any]) -> float | None:
    """Workers times the run's ``target_bps``, in MB/s (None when either is missing)."""
    per_worker = result.get("target_bps")
    workers = result.get("workers")
    if isinstance(per_worker, bool) or not isinstance(per_worker, (int, float)):
        return None
    if isinstance(workers, bool) or not isinstance(workers, int):
        return None
    return round(per_worker * workers / MB, 3)
