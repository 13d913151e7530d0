"""Mergeable latency histograms: what a worker's window line carries and the monitor
merges.

A window's ack latencies (and its behind-schedule delays) are recorded in an
HdrHistogram of microseconds (1 us .. 1 hour, 3 significant digits) and written in
HdrHistogram's standard compressed, base64 encoded form (``HISTF...``), which every
HdrHistogram implementation reads. Adding histograms is exact bucket by bucket, so a
fleet percentile read off the merged histogram is the percentile of all the workers'
latencies together (to the histogram's 3 digits), which the maximum or the mean of the
workers' percentiles is not.
"""

from __future__ import annotations

from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

__all__ = [
    "HIGHEST_US",
    "HistogramError",
    "decode",
    "encode",
    "merge",
    "new_histogram",
    "percentile_ms",
    "record_seconds",
]

LOWEST_US = 1
#: Latencies above an hour are recorded as an hour.
HIGHEST_US = 3_600_000_000
DIGITS = 3


class HistogramError(ValueError):
    """An encoded histogram could not be read; the message says why."""


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)


def record_seconds(h: HdrHistogram, seconds: float) -> None:
    """Record one latency given in seconds (clamped to 0 .. an hour)."""
    us = round(seconds * 1e6)
    h.record_value(min(max(us, 0), HIGHEST_US))


def encode(h: HdrHistogram) -> str:
    """The standard compressed, base64 encoded form, as text."""
    return h.encode().decode("ascii")


def decode(text: str) -> HdrHistogram:
    """A histogram from :func:`encode`'s form; HistogramError if it is not one."""
    if not isinstance(text, str) or not text.startswith("HIST"):
        raise HistogramError(f"not an encoded HdrHistogram: {str(text)[:40]!r}")
    try:
        h = HdrHistogram.decode(text.encode("ascii"))
    except Exception as e:  # hdrh raises zlib, base64, struct and its own errors
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: {e}") from None
    if h is None:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}")
    return h


def merge(encoded: Iterable[str]) -> HdrHistogram:
    """The sum of encoded histograms (an empty histogram for none)."""
    total = new_histogram()
    for text in encoded:
        total.add(decode(text))
    return total


def percentile_ms(h: HdrHistogram, q: float) -> float | None:
    """The ``q``-th percentile in milliseconds (0.001 ms steps), None when empty."""
    if h.get_total_count() == 0:
        return None
    return round(h.get_value_at_percentile(q) / 1e3, 3)
