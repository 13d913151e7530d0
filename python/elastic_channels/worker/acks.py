"""Acks from the SDK's threads, handed to the worker's loop."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator

#: (tokens, error or None, when it came (monotonic), SDK retries). A token is
#: (batch, epoch of the channel it was appended on).
Answer = tuple[tuple, "BaseException | None", float, int]


class AckInbox:
    """A queue the SDK's ack thread fills and the worker's loop empties."""

    def __init__(self) -> None:
        self._answers: collections.deque[Answer] = collections.deque()
        self._event = threading.Event()

    def on_answer(self, tokens: tuple, error: BaseException | None, retries: int) -> None:
        """The SDK calls this on its ack thread: note the answer and wake the loop."""
        self._answers.append((tokens, error, time.monotonic(), retries))
        self._event.set()

    def wake(self) -> None:
        self._event.set()

    def wait(self, timeout: float) -> None:
        """Until an answer comes (or ``wake``), at most ``timeout`` seconds."""
        self._event.wait(timeout)
        self._event.clear()

    def take(self) -> Iterator[Answer]:
        """The answers so far, oldest first, each taken once."""
        while self._answers:
            yield self._answers.popleft()
