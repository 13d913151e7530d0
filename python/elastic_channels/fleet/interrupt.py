"""SIGINT and SIGTERM during ``run``: the first asks the workers to stop and drain, the
second stops them at once; either way the run goes on to say what happened and to write
its result, with the outcome ``interrupted`` (results/outcome.py).

While the workers are being watched the signals only reach the workers (the watch loop
ends when they exit). Outside it (opening the target, checking what landed) a second
signal raises :class:`RunAborted`, which ``run`` catches to record what it has.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..results.outcome import Interrupt

__all__ = ["Interruption", "RunAborted"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunAborted(BaseException):
    """A second signal: stop what is running now, record the result with what there is
    (a BaseException, as KeyboardInterrupt: no ``except Exception`` on the way swallows
    it)."""


class Interruption:
    """The signals a run received, and what to do on each."""

    def __init__(self, say: TextIO | None = sys.stderr) -> None:
        self._say = say
        self.received: list[tuple[str, float]] = []  # (signal name, epoch seconds)
        self.processes: list[Any] = []  # subprocess.Popen of the workers, once started
        self.watching = False
        self.on_first: list[Callable[[], Any]] = []

    @property
    def interrupted(self) -> bool:
        return bool(self.received)

    @property
    def hard(self) -> bool:
        """A second signal came: nothing slow is waited for any more."""
        return len(self.received) > 1

    def interrupt(self, start_at: float | None, planned_s: float | None) -> Interrupt | None:
        """The first signal as an outcome's :class:`Interrupt` (None: no signal came)."""
        if not self.received:
            return None
        name, at = self.received[0]
        return Interrupt(name, None if start_at is None else round(at - start_at, 1), planned_s)

    def _handle(self, signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        self.received.append((name, time.time()))
        if len(self.received) == 1:
            self._signal_workers(signal.SIGTERM)
            for fn in self.on_first:
                fn()
            self._print(f"{name}: stopping; the workers drain their acks and the run is "
                        "recorded as interrupted (again to stop at once)")  # fmt: skip
            return
        self._signal_workers(signal.SIGKILL)
        self._print(f"{name} again: stopping at once; recording what there is")
        if not self.watching:
            raise RunAborted(name)

    def _signal_workers(self, sig: int) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                try:
                    proc.send_signal(sig)
                except ProcessLookupError:  # gone since poll
                    pass

    def _print(self, text: str) -> None:
        if self._say is not None:
            print(text, file=self._say, flush=True)

    @contextmanager
    def installed(self) -> Iterator[Interruption]:
        """Handle SIGINT and SIGTERM inside the block; the previous handlers after."""
        previous = {s: signal.signal(s, self._handle) for s in SIGNALS}
        try:
            yield self
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
