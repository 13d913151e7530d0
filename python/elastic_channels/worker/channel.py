"""The worker's elastic channel: opened, appended to, found dead, replaced.

The SDK answers every append it does not raise on, through the ack handler. A failed
answer means the channel is dead for good (the SDK already retried what it can), so
the worker replaces it with a new client and appends every unacked batch again.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from ..sdk.session import ConnectError, Session, open_in_thread
from .config import WorkerConfig
from .ledger import Batch

#: Makes the session of channel number ``epoch``: (cfg, epoch, append_mode) -> session.
SessionFactory = Callable[[WorkerConfig, int, "str | None"], Any]


def open_sdk_session(cfg: WorkerConfig, epoch: int, append_mode: str | None) -> Session:
    return Session(
        f"{cfg.run_id}-w{cfg.worker_id}-ch{cfg.channel_index}-c{epoch}",
        cfg.database,
        cfg.schema,
        cfg.pipe,
        cfg.properties,
        append_mode,
    )


class Channel:
    """One channel at a time, numbered by ``epoch``, with its liveness."""

    def __init__(
        self,
        cfg: WorkerConfig,
        append_mode: str | None,
        on_answer: Callable[..., None],
        factory: SessionFactory = open_sdk_session,
    ) -> None:
        self.cfg = cfg
        self.append_mode = append_mode
        self.mode_used: str | None = None
        self._on_answer = on_answer
        self._factory = factory
        self.epoch = 0
        self.session: Any = None
        #: Why the channel is dead, or None while it lives.
        self.dead: str | None = None
        #: A connect thread was left behind inside the SDK's retries.
        self.stuck_connect = False
        #: CPU this thread spent in the SDK's append calls, of sessions since replaced.
        self._closed_sdk_cpu_s = 0.0

    @property
    def sdk_cpu_s(self) -> float:
        live = self.session.appender.sdk_cpu_s if self.session is not None else 0.0
        return self._closed_sdk_cpu_s + live

    def open(self, should_stop: Callable[[], bool], deadline: float | None = None) -> None:
        """A new client + channel, giving up after ``connect_timeout_s`` or at
        ``deadline``. Before anything was sent (no deadline) a stop request just ends
        the attempt; once rows are out (a reopen) it goes on, bounded by the deadline."""
        self.epoch += 1
        epoch = self.epoch
        give_up = time.monotonic() + self.cfg.connect_timeout_s
        if deadline is not None:
            give_up = min(give_up, deadline)
        try:
            session = open_in_thread(
                lambda: self._factory(self.cfg, epoch, self.append_mode),
                give_up,
                lambda: should_stop() and deadline is None,
            )
        except ConnectError as e:
            self.stuck_connect = self.stuck_connect or getattr(e, "stuck", False)
            raise
        session.appender.set_ack_handler(self._on_answer)
        self.session = session
        self.mode_used = session.appender.mode
        self.dead = None

    def retire(self) -> None:
        """Let go of the current (dead) session."""
        old, self.session = self.session, None
        if old is not None:
            self._closed_sdk_cpu_s += old.appender.sdk_cpu_s
            old.close(0)

    def mark_dead(self, reason: str) -> bool:
        """Take the channel as dead; True the first time (its error is counted once)."""
        first = self.dead is None
        if first:
            print(f"worker {self.cfg.worker_id}: channel lost: {reason}", file=sys.stderr)
        self.dead = reason
        return first

    def append(self, batch: Batch, payload: Any) -> None:
        """Append ``batch`` on the current channel; the SDK's exceptions propagate."""
        token = (batch, self.epoch)
        if isinstance(payload, bytes):
            self.session.appender.append(payload, batch.n_rows, token)
        else:
            self.session.appender.append_rows(payload, token)

    def close(self, flush_timeout_s: int) -> None:
        if self.session is not None:
            self.session.close(flush_timeout_s)
