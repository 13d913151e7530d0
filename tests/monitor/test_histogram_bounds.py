"""An encoded histogram is read under a cap: its text's length, what its payload
inflates to (decompression stops at the cap, so a small text that inflates to
gigabytes costs no memory), the settings of its header, and the values it holds."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from hostile_support import histogram_holding, inflating_histogram

from elastic_channels.monitor import histogram


def test_a_payload_that_inflates_far_past_a_histogram_is_refused_cheaply() -> None:
    bomb = inflating_histogram(256 << 20)  # 256 MB of zeros, ~350 kB of text
    bomb_small = inflating_histogram(64 << 20)  # ~90 kB: under the text cap
    for text in (bomb, bomb_small):
        tracemalloc.start()
        cpu = time.process_time()
        try:
            with pytest.raises(histogram.HistogramError, match=r"bytes|characters"):
                histogram.decode(text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 8 << 20, f"decoding a {len(text)}-character histogram took {peak} bytes"
        assert time.process_time() - cpu < 1.0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (histogram_holding(10**12), "settings"),  # another range: 1 .. 1e13 us
        (histogram_holding(4_000_000_000, 3_600_000_000), "above"),  # past an hour
        ("HISTnot-base64!", "cannot decode histogram"),
        ("HISTFAAAAA==", "cannot decode histogram"),  # too short for its header
        ("x" * 100, "not an encoded HdrHistogram"),
        ("HIST" + "A" * (1 << 20), "characters"),
    ],
)
def test_a_histogram_the_monitor_cannot_merge_is_refused(text: str, words: str) -> None:
    with pytest.raises(histogram.HistogramError, match=words):
        histogram.decode(text)


def test_a_histogram_with_every_bucket_counted_still_reads() -> None:
    """The largest histogram a worker can write (every bucket counted) is under the caps."""
    h = histogram.new_histogram()
    value = 1
    while value <= histogram.HIGHEST_US:
        h.record_value(value, 2**40 - 1)
        value = h.get_highest_equivalent_value(value) + 1
    text = histogram.encode(h)
    back = histogram.decode(text)
    assert back.get_total_count() == h.get_total_count()
    assert histogram.merge([text, text]).get_total_count() == 2 * h.get_total_count()
