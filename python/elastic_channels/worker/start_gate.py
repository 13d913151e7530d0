"""One start for the channels of one worker (``--channels N`` without ``--start-at``).

Each channel opens on its own thread, and opening takes its own time (TLS, a token, the
pipe's info). Were each to start its schedule when its channel opened, their stages
would drift apart by those differences, and the worker's windows would add up targets
of different stages. So the channels meet here: each arrives once its channel is open
(or has failed to open), and all start together when the last has arrived.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["StartGate"]


class StartGate:
    def __init__(self, channels: int, clock: Callable[[], float] = time.time) -> None:
        self._left = channels
        self._cond = threading.Condition()
        self._clock = clock
        #: The agreed start (epoch seconds), once every channel has arrived.
        self.origin: float | None = None

    def arrive(self) -> None:
        """A channel is open, or will never be: it waits for no one else."""
        with self._cond:
            self._left -= 1
            if self._left <= 0 and self.origin is None:
                self.origin = self._clock()
                self._cond.notify_all()

    def wait(self, stopping: Callable[[], bool], poll_s: float = 0.2) -> float | None:
        """The agreed start, once every channel has arrived; None if ``stopping()``
        turned true first (the worker is draining: it starts nothing)."""
        with self._cond:
            while self.origin is None and not stopping():
                self._cond.wait(poll_s)
            return self.origin
