"""A PNG of a run: fleet MB/s and ack latency per window (needs matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt


def write_chart(path: Path, windows: list[dict[str, Any]], title: str) -> None:
    t = [w["t"] for w in windows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    top.plot(t, [w["mb_per_s"] for w in windows], marker="o", label="MB/s")
    top.set_ylabel("MB/s (all workers)")
    top.set_ylim(bottom=0)
    top.grid(alpha=0.3)
    rows = top.twinx()
    rows.plot(t, [w["rows_per_s"] / 1e3 for w in windows], color="tab:green", alpha=0.5)
    rows.set_ylabel("thousand rows/s", color="tab:green")
    rows.set_ylim(bottom=0)
    for key, label in (("ack_p50_ms", "ack p50"), ("ack_p99_ms", "ack p99")):
        bottom.plot(t, [w[key] for w in windows], marker=".", label=label)
    bottom.set_ylabel("batch ack latency, ms")
    bottom.set_xlabel("seconds since start")
    bottom.set_ylim(bottom=0)
    bottom.grid(alpha=0.3)
    bottom.legend(loc="upper right")
    fig.suptitle(f"{title}: {windows[-1]['workers']} worker(s)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
