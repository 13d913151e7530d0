"""The SDK's own figures in a worker's lines: each window line's ``sdk`` object, and the
run's in the summary.

One per worker process (the SDK serves every client of a process on one endpoint): a
one-channel worker's ``Worker`` adds it to its window lines, a ``--channels N`` worker's
line merger to the merged line. The scrape is taken when the window line is written,
so its deltas cover the time since the previous line's (a window's length, give or take
the half second a worker takes to notice a window has ended).
"""

from __future__ import annotations

from typing import Any

from ..sdk.metrics import SdkScraper
from ..sdk.metrics_window import merge_sdk, throttle_counts


class SdkFigures:
    """Adds the ``sdk`` object to window lines and keeps the run's tally."""

    def __init__(self, scraper: SdkScraper) -> None:
        self.scraper = scraper
        self.throttled_windows = 0
        self._total: dict[str, Any] | None = None

    def add_to(self, line: dict[str, Any]) -> None:
        """Put the window's figures in ``line`` (``sdk: null`` when the scrape failed)
        and, when the SDK throttled in it, which counts did (``sdk_throttled``)."""
        sdk = self.scraper.window()
        line["sdk"] = sdk
        throttled = throttle_counts(sdk)
        if throttled:
            line["sdk_throttled"] = throttled
            self.throttled_windows += 1
        if sdk is not None:
            run = {k: v for k, v in sdk.items() if k != "in_flight"}  # gauges: not a sum
            self._total = merge_sdk([self._total, run])

    def summary_fields(self) -> dict[str, Any]:
        """The run's SDK figures: every window's merged (whole run, warmup included, as
        the SDK's retries are), the windows it throttled in, scrapes that failed and the
        CPU seconds scraping took."""
        return {
            "sdk": self._total,
            "sdk_throttled_windows": self.throttled_windows,
            "sdk_failed_scrapes": self.scraper.failures,
            "sdk_scrape_cpu_s": round(self.scraper.cpu_s, 4),
        }
