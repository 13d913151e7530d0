"""The live watch of local workers: a fleet window waits for every line an exited worker
wrote, and its target is the schedule's for the whole fleet."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time

from elastic_channels.fleet.local import WorkerProc
from elastic_channels.fleet.report import aggregate_window
from elastic_channels.fleet.watch import watch


def _line(worker: int, window_start: float, target: float = 5e6) -> dict:
    return {
        "type": "window", "worker_id": worker, "window_start": window_start,
        "window_seconds": 1.0, "start": window_start, "end": window_start + 1.0,
        "rows": 1000, "bytes": 5_000_000, "acked_rows": 1000, "acked_bytes": 5_000_000,
        "target_bps": target, "stage": 0, "partial": False,
    }  # fmt: skip


def _worker(worker_id: int, lines: list[dict], delay_s: float) -> WorkerProc:
    """A process that waits ``delay_s``, prints ``lines`` and exits at once."""
    text = "".join(json.dumps(x) + "\n" for x in lines)
    code = f"import sys, time; time.sleep({delay_s}); sys.stdout.write({text!r})"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    return WorkerProc(worker_id, proc, started_at=time.time())


def test_a_window_counts_the_lines_of_a_worker_that_has_just_exited() -> None:
    # worker 0 reports window 100 and goes on; worker 1 reports it and exits at once, while
    # the loop is still busy with worker 0's line: worker 1's line is on the queue then.
    first = _worker(0, [_line(0, 100.0), _line(0, 101.0), {"type": "summary", "worker_id": 0}],
                    delay_s=0.0)  # fmt: skip
    second = _worker(1, [_line(1, 100.0)], delay_s=0.3)
    busy = {"first": True}

    def slow(record: dict) -> None:
        if busy.pop("first", False):
            time.sleep(1.0)  # worker 1 writes its line and exits meanwhile

    progress = io.StringIO()
    fleet = watch([first, second], progress, time.monotonic() + 30, on_record=slow)
    by_start = {w["window_start"]: w for w in fleet}
    assert by_start[100.0]["workers"] == 2, progress.getvalue()
    assert "  2 workers" in progress.getvalue().splitlines()[0]


def test_the_target_is_the_schedules_for_every_worker_started() -> None:
    alone = aggregate_window([_line(0, 100.0)], fleet_workers=2)
    assert alone["workers"] == 1 and alone["target_bps"] == 10e6  # one died: short, not on target
    assert (
        aggregate_window([_line(0, 100.0), _line(1, 100.0)], fleet_workers=2)["target_bps"] == 10e6
    )
    # a multi-channel worker merging its channels' lines adds their targets up
    assert aggregate_window([_line(0, 100.0), _line(0, 100.0)])["target_bps"] == 10e6
