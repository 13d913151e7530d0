"""What ``run`` knows at its end, turned into the run's one outcome (results/outcome.py)
and said: the headline first, then the tables, the result file and the thresholds.

Also what the run process itself cost: it hosts the embedded emulator and the monitor,
so its peak RSS and CPU are printed beside the workers'.
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ..measures import MB
from ..results.outcome import Interrupt, Outcome, decide
from .local import WorkerProc
from .verify import loss_accepted

__all__ = ["failed_workers", "landed_problems", "process_figures", "run_outcome"]


def failed_workers(
    workers: Sequence[WorkerProc], start_at: float | None, landed: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """Each worker that failed: exited non-zero or without its summary; how and when
    (seconds after the agreed start), and what is known of the rows it left unacked."""
    killed = {k["worker_id"]: k for k in (landed or {}).get("killed_workers") or []}
    out = []
    for wp in workers:
        code = wp.proc.returncode
        if code == 0 and wp.summary is not None:
            continue
        at = None
        if wp.exited_at is not None and start_at is not None:
            at = round(wp.exited_at - start_at, 1)
        out.append({
            "worker_id": wp.worker_id, "how": wp.exit_text(), "at_s": at,
            "summary": wp.summary is not None, "loss": _loss_text(wp, killed.get(wp.worker_id)),
        })  # fmt: skip
    return out


def _loss_text(wp: WorkerProc, killed: dict[str, Any] | None) -> str:
    if wp.summary is not None:
        unacked = int(wp.summary.get("unacked_rows") or 0)
        return f"{unacked:,} rows unacked" if unacked else "every row it sent was acked"
    if killed is None:
        return "its loss is unknown (what landed was not checked)"
    most = killed.get("lost_at_most")
    tail = f", at most {most:,}" if most is not None else ", no upper bound known"
    return f"lost unknown: at least {killed.get('lost_at_least', 0):,}{tail}"


def landed_problems(landed: dict[str, Any] | None) -> list[str]:
    """What the landed check found wrong, one sentence each (none: nothing, or it was
    not checked)."""
    if landed is None:
        return []
    out = []
    if not loss_accepted(landed):
        lost = landed.get("lost")
        out.append(f"{lost:,} acked rows never landed" if lost is not None
                   else "rows may be lost: their number is unknown")  # fmt: skip
    ice = landed.get("iceberg")
    if ice and ice.get("run_rows_read_by_pyiceberg") != landed.get("rows_landed"):
        out.append("the Iceberg table read by pyiceberg disagrees with the SQL count")
    return out


def run_outcome(
    doc: dict[str, Any],
    interrupt: Interrupt | None,
    failed: list[dict[str, Any]],
    landed: dict[str, Any] | None,
) -> Outcome:
    """The outcome of a run from its result document (thresholds as evaluated) and what
    happened to it."""
    loss = landed_problems(landed)
    sent = (doc.get("figures") or {}).get("rows_sent")
    return decide(
        rows_sent=sent if isinstance(sent, int) else None,
        interrupt=interrupt,
        failed_workers=failed,
        loss=loss,
        thresholds=doc.get("thresholds") or [],
        thresholds_error=doc.get("thresholds_error"),
    )


def process_figures(acked_bytes: int | None) -> dict[str, Any]:
    """This process's peak RSS (MiB) and CPU seconds (it hosts the embedded emulator
    and the monitor), and its CPU-s per GB of the bytes the workers had acked."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    times = os.times()
    cpu = times.user + times.system
    gb = (acked_bytes or 0) / 1e9
    return {
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),  # KiB on Linux
        "cpu_s": round(cpu, 2),
        "cpu_s_per_gb": round(cpu / gb, 3) if gb > 0 else None,
    }


def say_process(figures: dict[str, Any], emulator: bool, out: TextIO = sys.stderr) -> None:
    what = "the embedded emulator and the monitor" if emulator else "the monitor"
    per_gb = figures["cpu_s_per_gb"]
    print(
        f"this run process ({what}): peak RSS {figures['peak_rss_mib']:.0f} MiB, "
        f"CPU {figures['cpu_s']:.1f} s"
        + (f" ({per_gb:.2f} CPU-s per GB acked)" if per_gb is not None else "")
        + " (not counted in the workers' figures)",
        file=out,
    )


def warmup_note(summaries: Sequence[dict[str, Any]]) -> str | None:
    """The landed line's word on warmup: its rows are landed and counted there, and left
    out of 'rows sent' and every figure."""
    rows = sum(int(s.get("warmup_rows_sent") or 0) for s in summaries)
    size = sum(int(s.get("warmup_bytes_sent") or 0) for s in summaries)
    if not rows:
        return None
    return (
        f"{rows:,} of the rows generated ({size / MB:.1f} MB) were sent in warmup: they "
        "landed and are counted above, and are left out of 'rows sent' and the figures"
    )
