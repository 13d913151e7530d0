"""Scripted failures, per endpoint, by count or by probability.

A fault is checked when a request arrives, once its credentials and body are in, before
it is handled, so a faulted append is never spooled (except by ``lose_ack``): when the
SDK retries it, its rows land exactly once. Faults are kept in
the order they were added; the first one that matches a request and fires is used.

Actions: ``status`` (reply with an HTTP status and a Snowflake-style JSON error body),
``delay`` (sleep, then handle normally), ``drop`` (read the request, then close the
connection without a reply), ``malformed`` (reply 200 with a body the SDK cannot use)
and ``lose_ack`` (handle the request normally, so an append is spooled and lands, then
close the connection without a reply: the client retries, and the rows land twice).
"""

from __future__ import annotations

import random
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ACTIONS", "ENDPOINTS", "Fault", "FaultTable"]

#: Endpoint names a fault can target ("any" matches every request).
ENDPOINTS = (
    "any",
    "hostname",
    "token",
    "telemetry",
    "pipe_info",
    "channel_status",
    "open_channel",
    "drop_channel",
    "rows",
    "filebuffer",  # file mode: registering staged files
    "stage_put",  # file mode: the upload to the stage (S3 PutObject)
)
ACTIONS = ("status", "delay", "drop", "malformed", "lose_ack")
#: HTTP statuses a ``status`` fault may send.
FAULT_STATUSES = (400, 401, 403, 404, 409, 429, 500, 502, 503, 504)


@dataclass
class Fault:
    """One scripted failure. ``count=None`` means unlimited (until cleared)."""

    endpoint: str
    action: str
    status: int = 500
    count: int | None = 1
    probability: float = 1.0
    delay_s: float = 0.0
    fired: int = field(default=0)

    def __post_init__(self) -> None:
        if self.endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {self.endpoint!r}; one of {', '.join(ENDPOINTS)}")
        if self.action not in ACTIONS:
            raise ValueError(f"unknown action {self.action!r}; one of {', '.join(ACTIONS)}")
        if self.action == "status" and self.status not in FAULT_STATUSES:
            raise ValueError(f"status must be one of {FAULT_STATUSES}, got {self.status}")
        if self.count is not None and self.count < 1:
            raise ValueError(f"count must be >= 1 or null, got {self.count}")
        if not 0.0 < self.probability <= 1.0:
            raise ValueError(f"probability must be in (0, 1], got {self.probability}")
        if self.delay_s < 0 or self.delay_s > 600:
            raise ValueError(f"delay_s must be between 0 and 600, got {self.delay_s}")

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> Fault:
        allowed = {"endpoint", "action", "status", "count", "probability", "delay_s"}
        unknown = set(spec) - allowed
        if unknown:
            raise ValueError(f"unknown fault field(s) {sorted(unknown)}; allowed {sorted(allowed)}")
        if "endpoint" not in spec or "action" not in spec:
            raise ValueError("a fault needs 'endpoint' and 'action'")
        return cls(**spec)

    @property
    def remaining(self) -> int | None:
        return None if self.count is None else self.count - self.fired


class FaultTable:
    """The active faults; thread-safe. ``rng`` is seeded so probabilistic runs repeat."""

    def __init__(self, seed: int = 0) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._rng = random.Random(seed)

    def add(
        self,
        endpoint: str,
        action: str,
        *,
        status: int = 500,
        count: int | None = 1,
        probability: float = 1.0,
        delay_s: float = 0.0,
    ) -> Fault:
        """Script a failure, e.g. ``add("rows", "status", status=503, count=3)``."""
        fault = Fault(endpoint, action, status, count, probability, delay_s)
        with self._lock:
            self._faults.append(fault)
        return fault

    def add_spec(self, spec: dict[str, Any]) -> Fault:
        fault = Fault.from_dict(spec)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, endpoint: str) -> Fault | None:
        """The fault that fires for this request, if any (its count is used up)."""
        with self._lock:
            for fault in self._faults:
                if fault.endpoint not in ("any", endpoint):
                    continue
                if fault.probability < 1.0 and self._rng.random() >= fault.probability:
                    continue
                fault.fired += 1
                if fault.remaining == 0:
                    self._faults.remove(fault)
                return fault
        return None

    def pending(self) -> int:
        """How many counted firings are still scripted (unlimited faults count as 1)."""
        with self._lock:
            return sum(1 if f.remaining is None else f.remaining for f in self._faults)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return [asdict(f) | {"remaining": f.remaining} for f in self._faults]
