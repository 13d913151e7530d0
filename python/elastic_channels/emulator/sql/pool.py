"""The SQL API's own threads: statements run apart from ingestion.

A SQL API request is answered by an ``async`` route handler (``http/app.py``) that hands
the statement to a :class:`StatementPool` and awaits it, so a slow statement holds none
of the threads that answer appends. The pool runs at most :data:`SQL_THREADS`
statements at once, at landing priority; up to :data:`MAX_WAITING` more wait their
turn (their time counts against their ``timeout``), and past that a request is refused
at once with 429, as Snowflake answers too many requests. Threads are started when work
comes and end after :data:`IDLE_S` without any, so an emulator that is stopped leaves
none behind.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ..landing.priority import lower_thread_priority
from .errors import SqlApiError

__all__ = ["IDLE_S", "MAX_WAITING", "SQL_THREADS", "StatementPool"]

#: Statements run at once.
SQL_THREADS = 4
#: Statements waiting for a thread; one more is refused (429).
MAX_WAITING = 64
#: A thread with nothing to do for this long ends.
IDLE_S = 30.0


class StatementPool:
    """A few threads of landing priority for SQL statements, and a bounded queue."""

    def __init__(
        self, threads: int = SQL_THREADS, max_waiting: int = MAX_WAITING, idle_s: float = IDLE_S
    ) -> None:
        self._max_threads, self._max_waiting, self._idle_s = threads, max_waiting, idle_s
        self._queue: collections.deque[tuple[Future, Callable[..., Any], tuple]] = (
            collections.deque()
        )
        self._cond = threading.Condition()
        self._threads = 0
        self._idle = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """``fn(*args)`` on a pool thread; :class:`~.errors.SqlApiError` 429 when full."""
        future: Future = Future()
        with self._cond:
            if len(self._queue) >= self._max_waiting:
                raise SqlApiError(
                    429, "000610", "57P03",
                    f"the SQL API is busy: {self._max_threads} statements running and "
                    f"{len(self._queue)} waiting; send this one again later",
                )  # fmt: skip
            self._queue.append((future, fn, args))
            self._cond.notify()
            if len(self._queue) > self._idle and self._threads < self._max_threads:
                self._threads += 1
                threading.Thread(target=self._run, name="emulator-sql", daemon=True).start()
        return future

    def busy(self) -> tuple[int, int]:
        """(threads running statements, statements waiting)."""
        with self._cond:
            return self._threads - self._idle, len(self._queue)

    def _take(self) -> tuple[Future, Callable[..., Any], tuple] | None:
        with self._cond:
            while not self._queue:
                self._idle += 1
                try:
                    woke = self._cond.wait(self._idle_s)
                finally:
                    self._idle -= 1
                if not woke and not self._queue:
                    self._threads -= 1
                    return None
            return self._queue.popleft()

    def _run(self) -> None:
        lower_thread_priority()
        while (job := self._take()) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as e:  # handed to whoever awaits the future
                future.set_exception(e)
