"""The worker's run: open the channel, send batches paced along the schedule (warmup,
then its stages) until its end, drain."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sdk.session import ConnectError
from .meter import Meter
from .pacing import Pacer
from .start_barrier import BarrierError, fleet_start, signal_ready

if TYPE_CHECKING:
    from .worker import Worker


def run_worker(w: Worker) -> dict[str, Any]:
    cfg = w.cfg
    rows_per_batch = w.source.rows_per_batch()
    barrier = cfg.start_configmap is not None
    gate = w.start_gate if cfg.start_at is None and not barrier else None
    try:
        w.channel.open(lambda: w._stopping)
    except ConnectError as e:
        if gate is not None:
            gate.arrive()  # the other channels wait for no one that will never open
        print(f"worker {cfg.worker_id}: {e}", file=sys.stderr)
        summary = w.summary(0, error=str(e))
        w._emit(summary)
        return summary
    signal_ready(Path(cfg.ready_file) if cfg.ready_file else None)  # the pod is ready
    start_at = cfg.start_at
    if barrier:  # the fleet's one start, written once every pod is ready
        try:
            start_at = fleet_start(cfg, lambda: w._stopping)
        except BarrierError as e:
            print(f"worker {cfg.worker_id}: {e}", file=sys.stderr)
            summary = w.summary(0, error=str(e))
            w._emit(summary)
            return summary
    while start_at is not None and not w._stopping and time.time() < start_at:
        # the run's agreed start: every worker sends together (nothing to meter before)
        time.sleep(min(0.2, max(0.0, start_at - time.time())))
    # The schedule runs on the wall clock from the run's agreed start (a worker that is
    # late joins it where it stands), else from when the worker's channels are all open
    # (one channel: its own); its warmup ends on a window boundary.
    origin = start_at
    if gate is not None:
        gate.arrive()
        origin = gate.wait(lambda: w._stopping)
    if origin is None:
        origin = time.time()
    schedule = cfg.schedule().aligned(origin, cfg.window_s)
    w.meter = Meter(cfg.window_s, schedule=schedule, origin=origin)
    pacer = Pacer(
        schedule,
        origin=w.meter.origin_mono,
        sleep_quantum=cfg.sleep_quantum_s,
        window_s=cfg.window_s,
        window_phase=w.meter.window.due,  # a window boundary: what each window sends is its own
    )
    deadline = w.meter.origin_mono + schedule.end
    expected = cfg.batch_bytes
    loop_t0 = time.thread_time()
    while not w._stopping and time.monotonic() < deadline:
        w._tend()
        if w.channel.dead is not None:
            w._recover(deadline)
        while (
            w.ledger.in_flight_bytes + expected > cfg.max_inflight_bytes
            and not w._stopping
            and w.channel.dead is None
            and time.monotonic() < deadline
        ):
            w._wait_for_acks(0.05)
        if w._stopping or time.monotonic() >= deadline:
            break  # the wait for room ran into a signal or the end
        # Make a batch and hand it over at once, while its bytes are still in cache
        # for the SDK's copy; then wait out its slot (the long-run rate is the same).
        batch, payload = w.source.next(rows_per_batch, w.ledger)
        batch.stage = w.meter.stage_now()
        w.meter.record_sent(batch.n_rows, batch.nbytes, pacer.behind(), batch.stage)
        if w.channel.dead is None:
            w._append(batch, payload)
        del payload
        expected = batch.nbytes
        # Book this batch's slot and wait it out (only once a quantum ahead, so
        # batches go in short bursts). Acks do not cut the sleep short: they are
        # timestamped as they come, and every wake-up costs CPU. A signal is seen
        # within 0.5 s.
        w._sleep_until(time.monotonic() + pacer.delay(batch.nbytes))
        if pacer.booked_until >= deadline:
            # All the bytes due by the deadline are out (the quantum lets the
            # schedule run ahead): wait for the deadline itself, so a run lasts as
            # long as asked and averages the target even when it is short.
            w._sleep_until(deadline)
            break
    w.meter.end_mono = time.monotonic()
    drain(w, time.monotonic() + cfg.drain_timeout_s)
    while w.meter.window_due():  # windows that ended while draining
        w._emit_window()
    if not w.meter.nothing_left():
        w._emit_window()  # the last one, cut short at the end: partial
    w.loop_cpu_s = time.thread_time() - loop_t0
    unacked = w.ledger.unacked_rows()
    summary = w.summary(unacked)
    w.channel.close(0 if unacked else 10)
    w._emit(summary)
    return summary


def drain(w: Worker, deadline: float) -> None:
    """Wait for every outstanding ack, resending on a new channel if need be."""
    while len(w.ledger) and time.monotonic() < deadline:
        if w.channel.dead is not None:
            w._recover(deadline)
            continue
        w._wait_for_acks(min(0.1, max(0.0, deadline - time.monotonic())))
    w._take_acks()
