"""Background work (landing, merging) runs at a lower priority than acking."""

from __future__ import annotations

import os
import threading

__all__ = ["LANDING_NICENESS", "lower_thread_priority"]

#: Landing runs this much nicer than acking: when the box is busy, acks stay quick and
#: the backlog absorbs the difference (it lands once the box has room).
LANDING_NICENESS = 5


def lower_thread_priority(by: int = LANDING_NICENESS) -> None:
    """Make the calling thread (and threads it starts afterwards) ``by`` nicer (Linux)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + by))
    except (AttributeError, OSError):
        pass  # not Linux, or not allowed: landing keeps the normal priority
