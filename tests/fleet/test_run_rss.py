"""The RSS ``run`` prints for each worker is that worker's own (issue #22): checked
against what /proc says of each worker process while it runs, with ``run`` itself made
big (400 MiB touched), so a figure inherited from the parent (``ru_maxrss`` survives
exec) would read 400 or more."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc/PID/status: Linux"
)

RUN = """
import sys
ballast = bytearray(400 * 2**20)  # `run` itself holds 400 MiB, every page touched
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
from elastic_channels.cli import main
sys.exit(main(sys.argv[1:]))
"""


def worker_hwm_mib(parent: int) -> dict[int, float]:
    """VmHWM (MiB) of each worker process below ``parent``, by its --worker-id."""
    out: dict[int, float] = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
            cmd = (status.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # it ended meanwhile
        if int(fields.get("PPid", "0")) != parent or b"elastic_channels.worker" not in cmd:
            continue
        wid = int(cmd[cmd.index(b"--worker-id") + 1])
        out[wid] = int(fields["VmHWM"].split()[0]) / 1024
    return out


def test_each_workers_printed_rss_is_what_proc_says_of_it(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, "run", "--workers", "2", "--target-bps", "2e6",
         "--duration-seconds", "4", "--window-seconds", "1", "--run-id", "rss-own",
         "--no-visible", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    seen: dict[int, float] = {}
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            seen.update(worker_hwm_mib(proc.pid))  # VmHWM only grows: the last is the peak
            time.sleep(0.1)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    printed = {s["worker_id"]: s["peak_rss_mib"] for s in json.loads(out)["worker_summaries"]}
    assert sorted(seen) == sorted(printed) == [0, 1], (seen, printed)
    for wid, mib in printed.items():
        assert mib < 300, printed  # not the 400 MiB of `run`
        assert mib == pytest.approx(seen[wid], rel=0.1), (wid, mib, seen[wid])
