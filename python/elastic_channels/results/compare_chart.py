"""One PNG of several runs: throughput and ack p99 per window, aligned at their start
(x: seconds since each run's first non-warmup window; warmup windows fall before 0).
Needs matplotlib (the ``chart`` extra)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

from ..fleet.report import is_sliver
from ..measures import MB

Window = Mapping[str, Any]


def aligned(windows: Sequence[Window]) -> list[tuple[float, Window]]:
    """``(x, window)`` for each window: x is its end in seconds since the start of the
    run's first non-warmup window (the first window when all are warmup)."""
    if not windows:
        return []
    ordered = sorted(windows, key=lambda w: float(w["window_start"]))
    first = next((w for w in ordered if not w.get("warmup")), ordered[0])
    t0 = float(first["window_start"])
    return [(float(w.get("end", w["window_start"])) - t0, w) for w in ordered]


def write_compare_chart(path: Path, runs: Sequence[tuple[str, Sequence[Window]]]) -> None:
    """``runs``: (legend label, fleet windows) per run, in the table's order."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    warm = False
    for i, (label, windows) in enumerate(runs):
        color = f"C{i % 10}"
        points = aligned(windows)
        warm = warm or any(w.get("warmup") for _, w in points)
        sent = [(x, w) for x, w in points if w.get("rows") and not is_sliver(w)]
        top.plot(
            [x for x, _ in sent], [w.get("mb_per_s") for _, w in sent],
            marker="o", markersize=3, color=color, label=label,
        )  # fmt: skip
        target = [(x, w) for x, w in points if w.get("target_bps") is not None]
        if target:
            top.plot(
                [x for x, _ in target], [float(w["target_bps"]) / MB for _, w in target],
                linestyle="--", drawstyle="steps-pre", color=color, alpha=0.6,
                label=f"{label}: target",
            )  # fmt: skip
        acked = [(x, w) for x, w in points if w.get("ack_p99_ms") is not None]
        bottom.plot(
            [x for x, _ in acked], [w["ack_p99_ms"] for _, w in acked],
            marker=".", color=color, label=label,
        )  # fmt: skip
    for ax in (top, bottom):
        if warm:
            ax.axvline(0, color="grey", linewidth=0.8, linestyle=":")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    top.set_ylabel("MB/s sent (all workers)")
    top.legend(loc="best", fontsize="small")
    bottom.set_ylabel("batch ack p99, ms")
    bottom.set_xlabel(
        "seconds since the run's first window after warmup"
        if warm
        else "seconds since the run's first window"
    )
    fig.suptitle(f"{len(runs)} runs side by side, aligned at their start")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
