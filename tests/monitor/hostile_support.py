"""Shared by the hostile-input tests: clean lines of a few workers, a worker line to
spoil, and histograms a worker never writes (one that inflates far past any real one,
one holding a value outside the monitor's range)."""

from __future__ import annotations

import base64
import random
import struct
import zlib
from typing import Any

from hdrh.codec import get_compression_cookie, get_encoding_cookie
from hdrh.histogram import HdrHistogram
from monitor_support import EPOCH0, FakeWorker

RUN = "hostile"


def clean_lines(n: int = 11, workers: tuple[int, ...] = (1, 2, 3)) -> list[dict[str, Any]]:
    """``n`` good window lines of ``workers``, in time order."""
    rng = random.Random(5)
    out: list[dict[str, Any]] = []
    for wid in workers:
        w = FakeWorker(RUN, wid, EPOCH0 + 0.5, 5.0)
        while w.now < w.start + 5.0 * (n // len(workers) + 1):
            w.step(0.5, rng)
        w.finish()
        out += w.lines
    out.sort(key=lambda x: (x["window_start"], x["worker_id"]))
    return out[:n]


def victim_line(wid: int = 0) -> dict[str, Any]:
    """A good window line of worker ``wid``, to spoil."""
    w = FakeWorker(RUN, wid, EPOCH0 + 0.5, 5.0)
    w.step(0.5, random.Random(9))
    w.finish()
    return w.lines[0]


def inflating_histogram(inflated_bytes: int) -> str:
    """A well-formed encoded HdrHistogram (the monitor's settings) whose compressed
    payload inflates to ``inflated_bytes``: zeros, a few hundred times smaller packed."""
    header = struct.pack(
        ">IIIIqqd", get_encoding_cookie(), inflated_bytes - 40, 0, 3, 1, 3_600_000_000, 1.0
    )
    packer = zlib.compressobj(9)
    parts = [packer.compress(header)]
    zeros = bytes(1 << 20)
    for _ in range(inflated_bytes >> 20):
        parts.append(packer.compress(zeros))
    parts.append(packer.flush())
    payload = b"".join(parts)
    head = struct.pack(">II", get_compression_cookie(), len(payload))
    return base64.b64encode(head + payload).decode("ascii")


def histogram_holding(value_us: int, highest_us: int = 10**13) -> str:
    """An encoded HdrHistogram of range 1 .. ``highest_us`` holding one ``value_us``."""
    h = HdrHistogram(1, highest_us, 3)
    h.record_value(value_us)
    return h.encode().decode("ascii")
