"""The stage's counters, updated together under one lock."""

from __future__ import annotations

import threading

__all__ = ["StageStats"]


class StageStats:
    """Uploads stored durably, their bytes, requests refused, faults applied."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uploads = 0
        self._bytes = 0
        self._refused = 0
        self._faults = 0

    def record_upload(self, size: int) -> None:
        with self._lock:
            self._uploads += 1
            self._bytes += size

    def record_refused(self) -> None:
        with self._lock:
            self._refused += 1

    def record_fault(self) -> None:
        with self._lock:
            self._faults += 1

    def snapshot(self) -> dict[str, int]:
        """``uploads`` (objects stored durably), ``bytes`` (their decoded size),
        ``refused`` (requests the stage answered with its own 4xx/5xx: credentials,
        names, unsupported operations, checksums), ``faults`` (fault decisions applied)."""
        with self._lock:
            return {
                "uploads": self._uploads,
                "bytes": self._bytes,
                "refused": self._refused,
                "faults": self._faults,
            }
