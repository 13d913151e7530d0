"""A PNG of a run: fleet MB/s and ack latency per window (needs matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from ..measures import MB
from .report import is_sliver, window_seconds_covered


def write_chart(
    path: Path,
    windows: list[dict[str, Any]],
    title: str,
    run: dict[str, Any] | None = None,
    result: dict[str, Any] | None = None,
) -> None:
    """The run's chart (:func:`draw`) as a PNG at ``path``."""
    fig = draw(windows, title, run, result)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw(
    windows: list[dict[str, Any]],
    title: str,
    run: dict[str, Any] | None = None,
    result: dict[str, Any] | None = None,
) -> Figure:
    """Fleet MB/s and ack latency per window. A window some workers did not report in
    full (the first and last of a run: partial, or a worker already done) is drawn as a
    hollow grey point, its rate over the part it covers, apart from the full windows; a
    sliver (``report.is_sliver``: a few ms after a window's start) is not drawn.
    When the windows carry a target (the fleet's, ``target_bps``) it is drawn beside
    the achieved rate, and warmup windows are shaded (they are outside the run's
    figures). ``run``: the run's totals (``fleet_totals``), whose MB/s goes in the
    title. ``result``: the run's result as ``run`` records it: its outcome goes in the
    title, its workers are the fleet's size, and a worker that failed, the interrupt and
    every stage boundary are marked where they happened. The target is drawn as the
    schedule's steps."""
    seen = max(int(w.get("workers") or 0) for w in windows)
    workers = int((result or {}).get("workers") or seen)
    # not the drain's windows (acks only), nor a sliver's rate (a batch over a few ms)
    sent = [w for w in windows if w.get("rows") and not is_sliver(w)]
    full = [w for w in sent if not w.get("partial") and w.get("workers") == workers]
    part = [w for w in sent if w not in full]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    top.plot([w["t"] for w in full], [w["mb_per_s"] for w in full], marker="o", label="MB/s")
    if part:
        top.plot(
            [w["t"] for w in part], [w["mb_per_s"] for w in part], linestyle="none",
            marker="o", markerfacecolor="none", color="grey",
            label="partial window (not every worker, or not the whole window)",
        )  # fmt: skip
    targets = [w for w in windows if w.get("target_bps") is not None and not is_sliver(w)]
    if targets:
        xs = [w["t"] - window_seconds_covered(w) for w in targets] + [targets[-1]["t"]]
        ys = [float(w["target_bps"]) / MB for w in targets]
        top.step(xs, [*ys, ys[-1]], where="post", linestyle="--", color="black", alpha=0.7,
                 label="target MB/s")  # fmt: skip
    _marks(top, bottom, windows, result or {})
    warm = [w for w in windows if w.get("warmup")]
    if warm:
        first = min(w["t"] - window_seconds_covered(w) for w in warm)
        last = max(w["t"] for w in warm)
        label = "warmup (outside the run's figures)"
        top.axvspan(first, last, color="tab:orange", alpha=0.15, label=label)
        bottom.axvspan(first, last, color="tab:orange", alpha=0.15)
    top.legend(loc="lower center", fontsize="small")
    t = [w["t"] for w in windows]
    top.set_ylabel("MB/s (all workers)")
    top.set_ylim(bottom=0)
    top.grid(alpha=0.3)
    rows = top.twinx()
    rows.plot(
        [w["t"] for w in full], [w["rows_per_s"] / 1e3 for w in full], color="tab:green", alpha=0.5
    )
    rows.set_ylabel("thousand rows/s", color="tab:green")
    rows.set_ylim(bottom=0)
    for key, label in (("ack_p50_ms", "ack p50"), ("ack_p99_ms", "ack p99")):
        bottom.plot(t, [w[key] for w in windows], marker=".", label=label)
    bottom.set_ylabel("batch ack latency, ms")
    bottom.set_xlabel("seconds since start")
    bottom.set_ylim(bottom=0)
    bottom.grid(alpha=0.3)
    bottom.legend(loc="upper right")
    rate = (run or {}).get("mb_per_s")
    outcome = ((result or {}).get("outcome") or {}).get("outcome")
    fig.suptitle(
        f"{title}: {workers} worker(s)"
        + (f", {rate:.1f} MB/s acked over the sending window" if rate is not None else "")
        + (f" - {str(outcome).upper().replace('_', ' ')}" if outcome else "")
    )
    fig.tight_layout()
    return fig


def _marks(top: Any, bottom: Any, windows: list[dict[str, Any]], result: dict[str, Any]) -> None:
    """Vertical lines where a stage began, a worker failed and the run was interrupted
    (seconds since the agreed start, as the windows' ``t``)."""
    previous = None
    for w in windows:
        stage = w.get("stage")
        if stage is not None and previous is not None and stage != previous:
            at = w["t"] - window_seconds_covered(w)
            for ax in (top, bottom):
                ax.axvline(at, color="grey", linestyle=":", alpha=0.8)
            top.annotate(f"stage {stage}", (at, 0), fontsize="x-small", color="grey",
                         xytext=(2, 2), textcoords="offset points")  # fmt: skip
        previous = stage if stage is not None else previous
    labelled = False
    for f in result.get("failed_worker_details") or []:
        if isinstance(f.get("at_s"), (int, float)):
            label = None if labelled else "a worker failed"
            top.axvline(f["at_s"], color="tab:red", alpha=0.8, label=label)
            bottom.axvline(f["at_s"], color="tab:red", alpha=0.8)
            labelled = True
    interrupt = result.get("interrupt") or {}
    if isinstance(interrupt.get("at_s"), (int, float)):
        for ax in (top, bottom):
            ax.axvline(interrupt["at_s"], color="tab:purple", linestyle="-.",
                       label=None if ax is bottom else f"{interrupt.get('signal')}")  # fmt: skip
