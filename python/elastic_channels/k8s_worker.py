"""The worker: paced rows -> one elastic channel, metered, at-least-once.

One process = one SDK client = one elastic channel. The worker generates NDJSON
batches at a target rate for a fixed time and appends them (preserialized, through
``fast_append``), keeping every batch until its ack arrives. A failed ack means the
channel is dead for good (the SDK retries the retryable errors itself, for at most
``data_retry_total_backoff_seconds``): the worker then opens a new client and appends
every unacked batch again. Every window it prints one JSON line; at the end, a
summary line. It exits 0 only if every row was acked.

    python -m elastic_channels.k8s_worker --profile emulator-info.json \\
        --target-bps 20e6 --duration-seconds 10
"""

from __future__ import annotations

import collections
import json
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, TextIO

from elastic_channels import encoding, resort_sales
from elastic_channels.metrics import RunTotals, Window
from elastic_channels.pacing import Pacer
from elastic_channels.worker_config import ConfigError, WorkerConfig, load_config

log = logging.getLogger("elastic_channels.k8s_worker")


@dataclass(slots=True)
class Batch:
    """One append's worth of rows, tracked until acked.

    It holds no payload: generation is deterministic, so rows ``seq_start ..
    seq_start + n_rows`` stamped ``sale_time_us`` are made again, byte for byte, if
    the batch has to be resent. Unacked data is held once, by the SDK, not twice.
    """

    bid: int
    seq_start: int
    n_rows: int
    sale_time_us: int
    nbytes: int
    appended_at: float = 0.0
    generation: int = -1  # the channel it was last appended on; -1: never appended
    sends: int = 0


def prepare_sdk_environment(cfg: WorkerConfig, environ: Any = None) -> None:
    """SDK settings read at import: quiet logs on stderr, and the emulator's CA if given.

    An emulator info file names the one CA its server's certificate chains to, so it
    replaces any SSL_CERT_FILE (this process talks to that server only).
    """
    env = os.environ if environ is None else environ
    env.setdefault("SS_LOG_LEVEL", "warn")
    env.setdefault("SS_LOG_TARGET", "stderr")  # stdout carries our JSON lines
    if cfg.ssl_cert_file:
        env["SSL_CERT_FILE"] = cfg.ssl_cert_file


def is_back_pressure(error: BaseException) -> bool:
    return "ReceiverSaturated" in str(error)


class ConnectError(RuntimeError):
    """No channel could be opened."""


class Session:
    """One SDK client and its elastic channel."""

    def __init__(self, cfg: WorkerConfig, generation: int, append_mode: str | None) -> None:
        from snowflake.ingest.streaming import StreamingIngestClient

        from elastic_channels.fast_append import ElasticAppender

        self.generation = generation
        self.client = StreamingIngestClient(
            f"{cfg.run_id}-w{cfg.worker_id}-c{generation}",
            cfg.database,
            cfg.schema,
            cfg.pipe,
            properties=cfg.properties,
        )
        self.appender = ElasticAppender(self.client.get_elastic_channel(), append_mode)  # type: ignore[arg-type]

    def close(self, timeout_s: int) -> None:
        try:
            self.client.close(wait_for_flush=timeout_s > 0, timeout_seconds=timeout_s)
        except Exception as e:  # a dead channel's client may refuse to close cleanly
            log.debug("closing client %d: %s", self.generation, e)


class Worker:
    def __init__(
        self,
        cfg: WorkerConfig,
        *,
        out: TextIO = sys.stdout,
        session_factory: Callable[[WorkerConfig, int, str | None], Any] = Session,
    ) -> None:
        self.cfg = cfg
        self.out = out
        self._session_factory = session_factory
        self.encoder = encoding.select_backend(cfg.encoder)  # type: ignore[arg-type]
        if cfg.append_mode is not None:
            self.append_mode: str | None = cfg.append_mode
        elif not encoding.fast_encode_requested():
            self.append_mode = "rows"
        else:
            self.append_mode = None  # ffi when the SDK allows, else raw
        if self.append_mode == "rows":  # row objects need the Python generator
            self.encoder = "python"
        self.gen = encoding.make_generator(cfg.run_id, cfg.worker_id, backend=self.encoder)
        self.first_seq = self.gen.seq
        self.pending: dict[int, Batch] = {}
        self.in_flight_bytes = 0
        self.totals = RunTotals()
        self.window = Window()
        #: (tokens, error or None, when, SDK retries): one entry per ack from the SDK;
        #: a token is (batch, generation of the channel it was appended on).
        self._acks: collections.deque[tuple[tuple, BaseException | None, float, int]] = (
            collections.deque()
        )
        self._ack_event = threading.Event()
        self._dead: str | None = None
        self._stopping = False
        self._next_bid = 0
        self.session: Any = None
        self.generation = 0
        self.stuck_connect = False
        #: CPU this thread spent generating + encoding rows, in append calls, and in
        #: all of the run from the first batch to the last ack (the last two include
        #: the SDK's append calls: the appender counts those apart).
        self.gen_cpu_s = 0.0
        self.append_cpu_s = 0.0
        self.loop_cpu_s = 0.0
        self._sdk_cpu_s_closed = 0.0  # the SDK append CPU of sessions since replaced
        self._next_overdue_check = 0.0

    # --- signals ------------------------------------------------------------------

    def request_stop(self, signum: int | None = None, _frame: object = None) -> None:
        if not self._stopping and signum is not None:
            print(f"worker {self.cfg.worker_id}: signal {signum}, draining", file=sys.stderr)
        self._stopping = True
        self._ack_event.set()

    # --- batches ------------------------------------------------------------------

    def _rows_per_batch(self) -> int:
        probe = resort_sales.ResortGenerator(self.cfg.run_id, self.cfg.worker_id, start_seq=10**6)
        # Stamped now, like real batches: SALE_TIME then carries its fraction.
        per_row = len(probe.next_batch(1000, time.time_ns() // 1000)) / 1000
        return max(1, int(self.cfg.batch_bytes / per_row))

    def _make_batch(self, n: int) -> tuple[Batch, Any]:
        """The next batch and its payload (NDJSON bytes, or row objects in rows mode)."""
        now_us = time.time_ns() // 1000
        bid, self._next_bid = self._next_bid, self._next_bid + 1
        seq = self.gen.seq
        if self.append_mode == "rows":  # the SDK encodes: meter the exact bytes it will
            nbytes = self.gen.batch_len(n, now_us)  # type: ignore[attr-defined]
            rows = self.gen.next_rows(n, now_us)  # type: ignore[attr-defined]
            return Batch(bid, seq, n, now_us, nbytes), rows
        data = self.gen.next_batch(n, now_us)
        return Batch(bid, seq, n, now_us, len(data)), data

    def _replay(self, batch: Batch) -> Any:
        """The payload of ``batch`` made again, identical to the first time."""
        gen = encoding.make_generator(
            self.cfg.run_id, self.cfg.worker_id, start_seq=batch.seq_start, backend=self.encoder
        )
        if self.append_mode == "rows":
            return gen.next_rows(batch.n_rows, batch.sale_time_us)  # type: ignore[attr-defined]
        return gen.next_batch(batch.n_rows, batch.sale_time_us)

    # --- appends and acks ---------------------------------------------------------

    def _on_answer(self, tokens: tuple, error: BaseException | None, retries: int) -> None:
        """The SDK calls this on its ack thread: note the answer and wake the loop."""
        self._acks.append((tokens, error, time.monotonic(), retries))
        self._ack_event.set()

    def _append(self, batch: Batch, payload: Any = None) -> bool:
        """Append on the current channel; False if the channel is dead. The append
        calls' CPU goes to ``append_cpu_s``, a resent batch's replay to ``gen_cpu_s``."""
        if payload is None:
            t0 = time.thread_time()
            payload = self._replay(batch)
            self.gen_cpu_s += time.thread_time() - t0
        token = (batch, self.generation)
        while True:
            sent_at = time.monotonic()  # before the call: its ack cannot come earlier
            t0 = time.thread_time()
            try:
                if isinstance(payload, bytes):
                    self.session.appender.append(payload, batch.n_rows, token)
                else:
                    self.session.appender.append_rows(payload, token)
            except Exception as e:
                self.append_cpu_s += time.thread_time() - t0
                if is_back_pressure(e) and not self._stopping:
                    self._wait_for_acks(0.05)
                    continue
                self._mark_dead(f"append raised {type(e).__name__}: {e}")
                return False
            self.append_cpu_s += time.thread_time() - t0
            break
        if batch.generation >= 0:
            self.totals.resent_batches += 1
            self.totals.resent_rows += batch.n_rows
            self.window.resent_batches += 1
        batch.generation = self.generation
        batch.appended_at = sent_at
        batch.sends += 1
        return True

    def _mark_dead(self, reason: str) -> None:
        if self._dead is None:
            print(f"worker {self.cfg.worker_id}: channel lost: {reason}", file=sys.stderr)
        self._dead = reason
        self.totals.errors += 1
        self.window.errors += 1

    def _wait_for_acks(self, timeout: float) -> None:
        self._ack_event.wait(timeout)
        self._ack_event.clear()
        self._tend()

    def _sleep_until(self, until: float) -> None:
        """Sleep until ``until`` (monotonic), tending acks and windows at least every
        0.5 s; a signal cuts it short."""
        while not self._stopping and (left := until - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))
            self._tend()

    def _tend(self) -> None:
        """Take the acks in, notice lost ones, and close the window when due (windows
        keep coming while the worker waits)."""
        self._drain_acks()
        self._check_overdue()
        self._maybe_close_window()

    def _check_overdue(self) -> None:
        """Take the channel as dead if a batch on it has waited ``ack_timeout_s`` for its
        ack. The SDK answers every append it does not raise on, but one path loses them:
        an ack naming an id it does not know fails the client before its handlers run.
        Looked at once a second at most; the loop calls this once per batch."""
        now = time.monotonic()
        if now < self._next_overdue_check:
            return
        self._next_overdue_check = now + 1.0
        if self._dead is not None:
            return
        waiting = [b.appended_at for b in self.pending.values() if b.generation == self.generation]
        if waiting and now - min(waiting) > self.cfg.ack_timeout_s:
            self._mark_dead(
                f"no ack for {now - min(waiting):.0f} s (--ack-timeout-seconds "
                f"{self.cfg.ack_timeout_s:g})"
            )

    def _drain_acks(self) -> None:
        while self._acks:
            tokens, error, at, retries = self._acks.popleft()
            self.totals.sdk_retries += retries
            self.window.sdk_retries += retries
            if error is not None:
                # One failure, however many batches it names; and only on the current
                # channel: a replaced one's failures are of batches being resent anyway.
                if any(
                    generation == self.generation == batch.generation
                    and self.pending.get(batch.bid) is batch
                    for batch, generation in tokens
                ):
                    self._mark_dead(f"append failed: {error}")
                continue
            for batch, generation in tokens:
                if self.pending.get(batch.bid) is not batch or batch.generation != generation:
                    continue  # a late answer from a channel already replaced
                del self.pending[batch.bid]
                self.in_flight_bytes -= batch.nbytes
                latency = at - batch.appended_at
                self.totals.rows_acked += batch.n_rows
                self.totals.bytes_acked += batch.nbytes
                self.totals.latencies.append(latency)
                self.window.acked_rows += batch.n_rows
                self.window.latencies.append(latency)

    def _open_session(self, deadline: float | None = None) -> None:
        """A new client + channel. The SDK's constructor retries an unreachable server
        for minutes and cannot be interrupted, so it runs on a thread while this one
        stays responsive to signals and gives up after ``connect_timeout_s`` (or at
        ``deadline``)."""
        self.generation += 1
        box: dict[str, Any] = {}

        def connect() -> None:
            try:
                box["session"] = self._session_factory(self.cfg, self.generation, self.append_mode)
            except BaseException as e:
                box["error"] = e

        thread = threading.Thread(target=connect, name="sdk-connect", daemon=True)
        thread.start()
        started = time.monotonic()
        give_up = started + self.cfg.connect_timeout_s
        if deadline is not None:
            give_up = min(give_up, deadline)
        while thread.is_alive():
            # Before anything was sent a signal just ends the run; once rows are out
            # (a reopen, with a deadline) it goes on, bounded by the deadline.
            stop = self._stopping and deadline is None
            if stop or time.monotonic() > give_up:
                self.stuck_connect = True
                why = "stopped" if stop else f"no answer in {give_up - started:.3g} s"
                raise ConnectError(f"connecting to Snowflake: {why}")
            thread.join(0.1)
        if "error" in box:
            raise ConnectError(f"connecting to Snowflake: {box['error']}") from box["error"]
        self.session = box["session"]
        self.session.appender.set_ack_handler(self._on_answer)
        self.append_mode_used = self.session.appender.mode

    def _recover(self, deadline: float) -> None:
        """Replace a dead channel and append every unacked batch on the new one.

        Reopening backs off (0.5 s doubling to 8 s) when channels keep dying, so a
        server that refuses everything is not hammered; ``deadline`` bounds it all.
        """
        attempt = 0
        while self._dead is not None and time.monotonic() < deadline:
            if attempt:
                time.sleep(
                    min(0.5 * 2 ** (attempt - 1), 8.0, max(0.0, deadline - time.monotonic()))
                )
            attempt += 1
            self.totals.channel_reopens += 1
            old, self.session = self.session, None
            if old is not None:
                self._sdk_cpu_s_closed += old.appender.sdk_cpu_s
                old.close(0)
            try:
                self._open_session(deadline)
            except ConnectError as e:
                print(f"worker {self.cfg.worker_id}: reopening failed: {e}", file=sys.stderr)
                continue
            self._dead = None
            for batch in list(self.pending.values()):
                if self.pending.get(batch.bid) is not batch:
                    continue  # acked by the old channel while this loop waited
                if not self._append(batch):
                    break

    # --- the run ------------------------------------------------------------------

    def _emit(self, record: dict[str, Any]) -> None:
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def _ids(self) -> dict[str, Any]:
        return {"run_id": self.cfg.run_id, "worker_id": self.cfg.worker_id}

    def _maybe_close_window(self, force: bool = False) -> None:
        """Emit the window once it is due; ``force`` emits a partial one at the end,
        unless nothing at all happened in it."""
        w = self.window
        if force and not (w.rows or w.latencies or w.errors or w.resent_batches or w.sdk_retries):
            return
        if force or time.monotonic() - w.start_mono >= self.cfg.window_s:
            self._emit(self.window.close(len(self.pending), self.in_flight_bytes, **self._ids()))
            self.window = Window()

    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        rows_per_batch = self._rows_per_batch()
        try:
            self._open_session()
        except ConnectError as e:
            print(f"worker {cfg.worker_id}: {e}", file=sys.stderr)
            summary = self._summary(0, error=str(e))
            self._emit(summary)
            return summary
        pacer = Pacer(cfg.target_bps, sleep_quantum=cfg.sleep_quantum_s)
        self.totals = RunTotals()
        self.window = Window()
        deadline = self.totals.start_mono + cfg.duration_s
        expected = cfg.batch_bytes
        loop_t0 = time.thread_time()
        while not self._stopping and time.monotonic() < deadline:
            self._tend()
            if self._dead is not None:
                self._recover(deadline)
            while (
                self.in_flight_bytes + expected > cfg.max_inflight_bytes
                and not self._stopping
                and self._dead is None
                and time.monotonic() < deadline
            ):
                self._wait_for_acks(0.05)
            if self._stopping or time.monotonic() >= deadline:
                break  # the wait for room ran into a signal or the end
            # Make a batch and hand it over at once, while its bytes are still in cache
            # for the SDK's copy; then wait out its slot (the long-run rate is the same).
            t0 = time.thread_time()
            batch, payload = self._make_batch(rows_per_batch)
            self.gen_cpu_s += time.thread_time() - t0
            self.pending[batch.bid] = batch
            self.in_flight_bytes += batch.nbytes
            self.totals.rows_sent += batch.n_rows
            self.totals.bytes_sent += batch.nbytes
            self.window.rows += batch.n_rows
            self.window.bytes += batch.nbytes
            if self._dead is None:
                self._append(batch, payload)
            del payload
            expected = batch.nbytes
            # Book this batch's slot and wait it out (only once a quantum ahead, so
            # batches go in short bursts). Acks do not cut the sleep short: they are
            # timestamped as they come, and every wake-up costs CPU (~0.2 ms here,
            # mostly cold caches). A signal is seen within 0.5 s.
            self._sleep_until(time.monotonic() + pacer.delay(batch.nbytes))
            if pacer.booked_until >= deadline:
                # All the bytes due by the deadline are out (the quantum lets the
                # schedule run ahead): wait for the deadline itself, so a run lasts as
                # long as asked and averages the target even when it is short.
                self._sleep_until(deadline)
                break
        self.totals.end_mono = time.monotonic()
        self._drain(time.monotonic() + cfg.drain_timeout_s)
        self._maybe_close_window(force=True)
        self.loop_cpu_s = time.thread_time() - loop_t0
        unacked = sum(b.n_rows for b in self.pending.values())
        summary = self._summary(unacked)
        if self.session is not None:
            self.session.close(0 if unacked else 10)
        self._emit(summary)
        return summary

    def _summary(self, unacked: int, **extra: Any) -> dict[str, Any]:
        return self.totals.summary(
            unacked,
            **self._ids(),
            **extra,
            encoder=self.encoder,
            append_mode=getattr(self, "append_mode_used", self.append_mode),
            first_seq=self.first_seq,
            next_seq=self.gen.seq,
            gen_cpu_s=round(self.gen_cpu_s, 3),
            **self._own_cpu(),
        )

    def _own_cpu(self) -> dict[str, float | None]:
        """This thread's CPU over the run, split into the SDK's append calls and ours:
        ``own_cpu_s`` is everything the worker itself did (generating, encoding, append
        bookkeeping, pacing, acks, windows); ``append_own_cpu_s`` the append bookkeeping
        alone (our side of the append calls). The SDK's own threads are in none of them."""
        sdk = self._sdk_cpu_s_closed + (self.session.appender.sdk_cpu_s if self.session else 0)
        return {
            "loop_cpu_s": round(self.loop_cpu_s, 3),
            "sdk_append_cpu_s": round(sdk, 3),
            "own_cpu_s": round(self.loop_cpu_s - sdk, 3),
            "append_own_cpu_s": round(self.append_cpu_s - sdk, 3),
        }

    def _drain(self, deadline: float) -> None:
        """Wait for every outstanding ack, resending on a new channel if need be."""
        while self.pending and time.monotonic() < deadline:
            if self._dead is not None:
                self._recover(deadline)
                continue
            self._wait_for_acks(min(0.1, max(0.0, deadline - time.monotonic())))
        self._drain_acks()


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        cfg = load_config(argv)
    except ConfigError as e:
        print(f"k8s_worker: error: {e}", file=sys.stderr)
        return 2
    prepare_sdk_environment(cfg)
    worker = Worker(cfg)
    signal.signal(signal.SIGTERM, worker.request_stop)
    signal.signal(signal.SIGINT, worker.request_stop)
    summary = worker.run()
    code = 0 if summary["unacked_rows"] == 0 and "error" not in summary else 1
    if worker.stuck_connect:
        # An SDK thread is still inside its connect retries and would hold up the
        # interpreter's exit; everything worth keeping is already written.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
