"""What a scripted fault does to one stage upload.

The stage asks its ``faults`` callable (``faults("stage_put")``) once per PutObject, after the
credentials are checked and the body is in, and before the object is stored. The callable
belongs to whoever scripts the failures (the emulator's fault table); the stage only needs
the decision, so it takes this small value instead of importing that table.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACTIONS", "FaultDecision"]

#: ``status``: reply ``status`` with an S3 XML error, store nothing. ``delay``: sleep
#: ``delay_s``, then handle normally. ``drop``: store nothing and close the connection
#: without a reply. ``lose_ack``: store durably, then close the connection without a reply.
ACTIONS = ("status", "delay", "drop", "lose_ack")


@dataclass(frozen=True)
class FaultDecision:
    """One fault to apply to one request."""

    action: str
    status: int = 503
    delay_s: float = 0.0

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"action {self.action!r} is not one of {', '.join(ACTIONS)}")
        if not 400 <= self.status <= 599:
            raise ValueError(f"status must be an HTTP error status (400-599), got {self.status}")
        if not 0.0 <= self.delay_s <= 600.0:
            raise ValueError(f"delay_s must be between 0 and 600, got {self.delay_s}")
