"""One background thread that does a store's housekeeping (merging small files) in steps,
at landing priority, when poked or every ``period_s``; both table formats' compactors are
one."""

from __future__ import annotations

import logging
import threading

from ..landing.priority import lower_thread_priority

__all__ = ["BackgroundSteps"]

log = logging.getLogger("elastic_channels.emulator")


class BackgroundSteps:
    """Runs :meth:`step` until it returns False, each time it is poked (or every
    ``period_s``), then :meth:`idle`; a failing step is logged, never raised: the
    emulator goes on with its files as they are."""

    #: What the log says when a step fails.
    failure = "background work failed; the files stay as they are"

    def __init__(self, period_s: float | None = None) -> None:
        self._period_s = period_s
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="emulator-compactor", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Something changed: look again."""
        self._wake.set()

    def join(self, timeout: float) -> bool:
        """Ask the thread to stop and wait for it (a step under way finishes); whether
        it has stopped."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return False
        return True

    def step(self) -> bool:
        """One piece of work; whether there may be more."""
        raise NotImplementedError

    def idle(self) -> None:
        """After the steps of a wake-up (and on every period)."""

    def _run(self) -> None:
        lower_thread_priority()
        while not self._stopping:
            self._wake.wait(self._period_s)
            self._wake.clear()
            if self._stopping:
                return
            try:
                while not self._stopping and self.step():
                    pass
                self.idle()
            except Exception:  # never take the emulator down
                log.exception(self.failure)
