"""Mergeable latency histograms: what a worker's window line carries and the monitor
merges.

A window's ack latencies (and its behind-schedule delays) are recorded in an
HdrHistogram of microseconds (1 us .. 1 hour, 3 significant digits) and written in
HdrHistogram's standard compressed, base64 encoded form (``HISTF...``), which every
HdrHistogram implementation reads. Adding histograms is exact bucket by bucket, so a
fleet percentile read off the merged histogram is the percentile of all the workers'
latencies together (to the histogram's 3 digits), which the maximum or the mean of the
workers' percentiles is not.

A histogram read from a line is read under caps (:func:`decode`): its text's length, what
its payload inflates to (decompression stops at the cap, so a few hundred kilobytes that
would inflate to gigabytes cost nothing), the settings of its header (this module's: any
other range would not add to the fleet's), and the values it holds (at most an hour).
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Iterable

from hdrh.codec import V2_COMPRESSION_COOKIE_BASE, V2_ENCODING_COOKIE_BASE, get_cookie_base
from hdrh.histogram import HdrHistogram

__all__ = [
    "HIGHEST_US",
    "MAX_ENCODED_CHARS",
    "MAX_INFLATED_BYTES",
    "HistogramError",
    "check_encoded",
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
#: The encoded form's outer header (cookie, length) and its payload's header.
_OUTER = struct.Struct(">II")
_PAYLOAD = struct.Struct(">IIIIqqd")
#: One count per bucket of this module's settings, at most 9 bytes each (LEB128 of a
#: 64-bit count): the most any histogram of these settings inflates to.
MAX_INFLATED_BYTES = _PAYLOAD.size + 9 * HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS).counts_len
#: Its encoded text: compressed data that does not compress at all, in base64.
MAX_ENCODED_CHARS = 4 * (_OUTER.size + MAX_INFLATED_BYTES + 1024) // 3


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
    """A histogram from :func:`encode`'s form, read under the caps; HistogramError if it
    is not one, is larger than one of these settings can be, or holds a value past
    HIGHEST_US."""
    check_encoded(text)
    try:
        h = HdrHistogram.decode(text.encode("ascii"))  # inflates at most the cap now
    except Exception as e:  # hdrh raises zlib, base64, struct and its own errors
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: {e}") from None
    if h is None:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}")
    if h.get_total_count() and h.get_max_value() > h.get_highest_equivalent_value(HIGHEST_US):
        raise HistogramError(f"holds values above {HIGHEST_US:,} us: up to {h.get_max_value():,}")
    return h


def check_encoded(text: str) -> None:
    """HistogramError unless ``text`` is the encoded form of a histogram of this module's
    settings under the caps: its length, its headers, what its payload inflates to (the
    counts themselves are read by :func:`decode`)."""
    if not isinstance(text, str) or not text.startswith("HIST"):
        raise HistogramError(f"not an encoded HdrHistogram: {str(text)[:40]!r}")
    if len(text) > MAX_ENCODED_CHARS:
        raise HistogramError(
            f"an encoded histogram of {len(text):,} characters is over the "
            f"{MAX_ENCODED_CHARS:,}-character cap"
        )
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: {e}") from None
    if len(raw) < _OUTER.size:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: too short")
    cookie, length = _OUTER.unpack_from(raw)
    if get_cookie_base(cookie) != V2_COMPRESSION_COOKIE_BASE or length != len(raw) - 8:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: not a V2 histogram")
    inflater = zlib.decompressobj()
    try:
        payload = inflater.decompress(raw[_OUTER.size :], MAX_INFLATED_BYTES + 1)
    except zlib.error as e:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: {e}") from None
    if len(payload) > MAX_INFLATED_BYTES or inflater.unconsumed_tail:
        raise HistogramError(
            f"its payload inflates to more than {MAX_INFLATED_BYTES:,} bytes (the cap)"
        )
    if not inflater.eof or len(payload) < _PAYLOAD.size:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: its payload is cut short")
    cookie, _, offset, digits, lowest, highest, _ = _PAYLOAD.unpack_from(payload)
    if get_cookie_base(cookie) != V2_ENCODING_COOKIE_BASE or offset != 0:
        raise HistogramError(f"cannot decode histogram {text[:40]!r}: not a V2 payload")
    if (lowest, highest, digits) != (LOWEST_US, HIGHEST_US, DIGITS):
        raise HistogramError(
            f"settings {lowest}..{highest} us, {digits} digits are not the monitor's "
            f"({LOWEST_US}..{HIGHEST_US} us, {DIGITS} digits)"
        )


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
