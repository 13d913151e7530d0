"""The worker: paced rows -> one elastic channel, metered, at-least-once.

One process = one SDK client = one elastic channel. The worker generates NDJSON
batches at a target rate for a fixed time and appends them (preserialized, through
``sdk.fast_append``), keeping every batch in its ledger until its ack arrives. A
failed ack means the channel is dead for good: the worker opens a new one and appends
every unacked batch again. Every window it prints one JSON line; at the end, a
summary line.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from ..measures import MB
from ..sdk.session import ConnectError, is_back_pressure
from .acks import AckInbox
from .channel import Channel, SessionFactory, open_sdk_session
from .config import WorkerConfig
from .ledger import Batch, Ledger
from .loop import run_worker
from .meter import Meter
from .sdk_figures import SdkFigures
from .source import BatchSource
from .start_gate import StartGate


class Worker:
    def __init__(
        self,
        cfg: WorkerConfig,
        *,
        out: TextIO = sys.stdout,
        session_factory: SessionFactory = open_sdk_session,
    ) -> None:
        self.cfg = cfg
        self.out = out
        self.source = BatchSource(cfg)
        self.ledger = Ledger()
        #: Replaced when sending starts (``loop.run_worker``), on the run's schedule.
        self.meter = Meter(cfg.window_s, schedule=cfg.schedule())
        self.acks = AckInbox()
        self.channel = Channel(cfg, self.source.append_mode, self.acks.on_answer, session_factory)
        self._stopping = False
        self._next_overdue_check = 0.0
        #: CPU this thread spent in append calls (ours and the SDK's), and in the whole
        #: run from the first batch to the last ack.
        self.append_cpu_s = 0.0
        self.loop_cpu_s = 0.0
        #: Where the channels of a ``--channels N`` worker agree on one start (None: one
        #: channel, it starts when it is open).
        self.start_gate: StartGate | None = None
        #: The SDK's own figures for the window lines (set by ``main`` when on; the
        #: channels of a ``--channels N`` worker leave it to their line merger).
        self.sdk_figures: SdkFigures | None = None

    @property
    def stuck_connect(self) -> bool:
        return self.channel.stuck_connect

    def request_stop(self, signum: int | None = None, _frame: object = None) -> None:
        if not self._stopping and signum is not None:
            print(f"worker {self.cfg.worker_id}: signal {signum}, draining", file=sys.stderr)
        self._stopping = True
        self.acks.wake()

    # --- appends and acks ---------------------------------------------------------

    def _append(self, batch: Batch, payload: Any = None) -> bool:
        """Append on the current channel; False if the channel is dead. The append
        calls' CPU goes to ``append_cpu_s``, a resent batch's replay to the source."""
        if payload is None:
            payload = self.source.replay(batch)
        while True:
            sent_at = time.monotonic()  # before the call: its ack cannot come earlier
            t0 = time.thread_time()
            try:
                self.channel.append(batch, payload)
            except Exception as e:
                self.append_cpu_s += time.thread_time() - t0
                if is_back_pressure(e) and not self._stopping:
                    self._wait_for_acks(0.05)
                    continue
                self._mark_dead(f"append raised {type(e).__name__}: {e}")
                return False
            self.append_cpu_s += time.thread_time() - t0
            break
        if batch.channel_epoch >= 0:
            self.meter.record_resent(batch.n_rows)
        batch.channel_epoch = self.channel.epoch
        batch.appended_at = sent_at
        batch.sends += 1
        return True

    def _mark_dead(self, reason: str) -> None:
        self.channel.mark_dead(reason)
        self.meter.record_error()

    def _wait_for_acks(self, timeout: float) -> None:
        self.acks.wait(timeout)
        self._tend()

    def _sleep_until(self, until: float) -> None:
        """Sleep until ``until`` (monotonic), tending acks and windows at least every
        0.5 s; a signal cuts it short."""
        while not self._stopping and (left := until - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))
            self._tend()

    def _tend(self) -> None:
        """Take the acks in, notice lost ones, and close the window when due."""
        self._take_acks()
        self._check_overdue()
        if self.meter.window_due():
            self._emit_window()

    def _check_overdue(self) -> None:
        """Take the channel as dead if a batch on it has waited ``ack_timeout_s`` for its
        ack. The SDK answers every append it does not raise on, but one path loses them:
        an ack naming an id it does not know fails the client before its handlers run.
        Looked at once a second at most."""
        now = time.monotonic()
        if now < self._next_overdue_check:
            return
        self._next_overdue_check = now + 1.0
        if self.channel.dead is not None:
            return
        oldest = self.ledger.oldest_append(self.channel.epoch)
        if oldest is not None and now - oldest > self.cfg.ack_timeout_s:
            self._mark_dead(
                f"no ack for {now - oldest:.0f} s (--ack-timeout-seconds "
                f"{self.cfg.ack_timeout_s:g})"
            )

    def _take_acks(self) -> None:
        epoch = self.channel.epoch
        for tokens, error, at, retries in self.acks.take():
            self.meter.record_sdk_retries(retries)
            if error is not None:
                # One failure, however many batches it names; and only on the current
                # channel: a replaced one's failures are of batches being resent anyway.
                if any(e == epoch == b.channel_epoch and self.ledger.holds(b) for b, e in tokens):
                    self._mark_dead(f"append failed: {error}")
                continue
            for batch, batch_epoch in tokens:
                if not self.ledger.holds(batch) or batch.channel_epoch != batch_epoch:
                    continue  # a late answer from a channel already replaced
                self.ledger.settle(batch)
                self.meter.record_acked(
                    batch.n_rows, batch.nbytes, at - batch.appended_at, at=at, stage=batch.stage,
                    billable=batch.billable,
                )  # fmt: skip

    def _recover(self, deadline: float) -> None:
        """Replace a dead channel and append every unacked batch on the new one.

        Reopening backs off (0.5 s doubling to 8 s) when channels keep dying, so a
        server that refuses everything is not hammered; ``deadline`` bounds it all.
        """
        attempt = 0
        while self.channel.dead is not None and time.monotonic() < deadline:
            if attempt:
                pause = min(0.5 * 2 ** (attempt - 1), 8.0)
                time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            attempt += 1
            self.meter.record_reopen()
            self.channel.retire()
            try:
                self.channel.open(lambda: self._stopping, deadline)
            except ConnectError as e:
                print(f"worker {self.cfg.worker_id}: reopening failed: {e}", file=sys.stderr)
                continue
            for batch in self.ledger:
                if self.ledger.holds(batch) and not self._append(batch):
                    break

    # --- output -------------------------------------------------------------------

    def _emit(self, record: dict[str, Any]) -> None:
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def _ids(self) -> dict[str, Any]:
        return {
            "run_id": self.cfg.run_id,
            "worker_id": self.cfg.worker_id,
            **self.cfg.scenario_ids(),
        }

    def _emit_window(self) -> None:
        line = self.meter.close_window(len(self.ledger), self.ledger.in_flight_bytes, **self._ids())
        if self.sdk_figures is not None:
            self.sdk_figures.add_to(line)
        self._emit(line)

    # --- the run --------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Send for the configured time, drain, and return the summary (also printed)."""
        return run_worker(self)

    def summary(self, unacked: int, **extra: Any) -> dict[str, Any]:
        """The run's summary line. CPU: ``own_cpu_s`` is everything this thread did
        but the SDK's append calls (generating, encoding, bookkeeping, pacing, acks,
        windows); ``append_own_cpu_s`` our side of the append calls alone. The SDK's
        own threads are in none of them."""
        sdk = self.channel.sdk_cpu_s
        summary = self.meter.summary(
            unacked,
            **self._ids(),
            **extra,
            encoder=self.source.encoder,
            append_mode=self.channel.mode_used or self.source.append_mode,
            first_seq=self.source.first_seq,
            next_seq=self.source.next_seq,
            rows_generated=self.source.next_seq - self.source.first_seq,
            gen_cpu_s=round(self.source.cpu_s, 3),
            loop_cpu_s=round(self.loop_cpu_s, 3),
            sdk_append_cpu_s=round(sdk, 3),
            own_cpu_s=round(self.loop_cpu_s - sdk, 3),
            append_own_cpu_s=round(self.append_cpu_s - sdk, 3),
        )
        summary.update(shortfall(self.cfg, summary))
        if self.sdk_figures is not None:
            summary.update(self.sdk_figures.summary_fields())
        return summary


def shortfall(cfg: WorkerConfig, summary: dict[str, Any]) -> dict[str, Any]:
    """Whether a run sent less than its schedule asked for over its sending window (a
    stall, a dead channel, back-pressure), and by how much: more than two batches or 2%
    short counts. ``target_bps``: the schedule's mean over that window."""
    target = summary.get("target_bps")
    if target is None:
        target = cfg.target_bps
    due = float(target) * float(summary["seconds"])
    short = max(0.0, due - summary["bytes_sent"])
    under = short > max(2 * cfg.batch_bytes, 0.02 * due)
    return {
        "target_bps": target,
        "under_target": under,
        "short_mb": round(short / MB, 3) if under else 0.0,
    }
