"""glibc keeps the emulator's big freed buffers for reuse (``malloc_tuning.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# One child per check: the thresholds are process-wide. Each round takes three 12 MB
# blocks and frees them, as a landing batch does with its buffers: by default glibc maps
# them afresh or trims the freed heap back to the kernel (a page fault per 4 KiB page on
# first touch, every round); kept, the next round reuses the pages already touched.
CHILD = r"""
import resource, sys
from elastic_channels.emulator.malloc_tuning import keep_big_buffers
if sys.argv[1] == "tuned":
    assert keep_big_buffers()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def touch():
    blocks = [bytearray(12 << 20) for _ in range(3)]  # zeroed: every page written
    del blocks
touch()
before = faults()
for _ in range(10):
    touch()
print(faults() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_freed_big_buffers_are_reused_instead_of_mapped_afresh():
    def faults(mode: str) -> int:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=60,
            check=True,
        )  # fmt: skip
        return int(out.stdout.strip())

    default, tuned = faults("default"), faults("tuned")
    # 10 rounds of 3 x 3,072 pages: ~92,000 faults when mapped afresh, ~none when reused
    assert default > 30_000, default
    assert tuned < 3_000, tuned
