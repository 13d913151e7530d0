"""A worker's peak RSS is its own (issue #22 item 2): ``ru_maxrss`` carries the parent's
peak across fork and exec, so a worker started by a big parent (``run``, a bench) printed
the parent's memory as its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHILD = """
from elastic_channels.measures import peak_rss_mib
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))
print(peak_rss_mib(), hwm)
"""

PARENT = f"""
import subprocess, sys
ballast = bytearray(400 * 2**20)  # 400 MiB, every page touched
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
print(subprocess.run([sys.executable, "-c", {CHILD!r}], capture_output=True, text=True,
                     check=True).stdout)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status: Linux")
def test_a_child_of_a_big_parent_reports_its_own_peak():
    out = subprocess.run(
        [sys.executable, "-c", PARENT], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    reported, hwm = (float(x) for x in out.split())
    assert abs(reported - hwm) < 1, (reported, hwm)  # what /proc says of the child itself
    assert reported < 200, reported  # not the parent's 400 MiB
