"""Where a worker's batches come from: the row backend, the append mode, batch sizing,
and deterministic replay of a batch that must be resent.

The workload (``--workload``) says which generator: resort sales (the default, by its
name) through today's compiled ``ResortGenerator`` on either backend; any other through
the runtime ``WorkloadGenerator`` (``workload_source.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .. import rows
from ..landing_table import DEFAULT_WORKLOAD
from .config import WorkerConfig
from .ledger import Batch, Ledger
from .workload_source import workload_generators


class BatchSource:
    """Makes the worker's batches (NDJSON bytes, or row objects in ``rows`` mode)."""

    def __init__(self, cfg: WorkerConfig) -> None:
        self.cfg = cfg
        self.encoder: rows.Backend = rows.select_backend(cfg.encoder)  # type: ignore[arg-type]
        if cfg.append_mode is not None:
            self.append_mode: str | None = cfg.append_mode
        elif not rows.fast_encode_requested():
            self.append_mode = "rows"
        else:
            self.append_mode = None  # ffi when the SDK allows, else raw
        if self.append_mode == "rows":  # row objects need the Python generator
            self.encoder = "python"
        self._make: Callable[[int], Any] | None = None
        if cfg.workload != DEFAULT_WORKLOAD:
            self._make, self.encoder = workload_generators(cfg, self.encoder)
        self.gen = self._generator(cfg.first_seq)
        self.first_seq = self.gen.seq
        #: CPU this thread spent making rows (first sends and replays).
        self.cpu_s = 0.0

    def _generator(self, start_seq: int) -> Any:
        if self._make is not None:
            return self._make(start_seq)
        return rows.make_generator(
            self.cfg.run_id, self.cfg.worker_id, start_seq=start_seq, backend=self.encoder
        )

    @property
    def next_seq(self) -> int:
        return self.gen.seq

    def rows_per_batch(self) -> int:
        # Stamped now, like real batches: SALE_TIME then carries its fraction.
        return rows.rows_per_batch(self.gen, self.cfg.batch_bytes, time.time_ns() // 1000)

    def next(self, n: int, ledger: Ledger) -> tuple[Batch, Any]:
        """The next batch (entered in ``ledger``) and its payload."""
        t0 = time.thread_time()
        now_us = time.time_ns() // 1000
        seq = self.gen.seq
        if self.append_mode == "rows":  # the SDK encodes: meter the exact bytes it will
            nbytes = self.gen.batch_len(n, now_us)
            payload: Any = self.gen.next_rows(n, now_us)
        else:
            payload = self.gen.next_batch(n, now_us)
            nbytes = len(payload)
        billable = self.gen.last_billable_bytes or 0  # counted as the batch was made
        batch = ledger.new_batch(seq, n, now_us, nbytes, billable)
        self.cpu_s += time.thread_time() - t0
        return batch, payload

    def replay(self, batch: Batch) -> Any:
        """The payload of ``batch`` made again, identical to the first time."""
        t0 = time.thread_time()
        gen = self._generator(batch.seq_start)
        if self.append_mode == "rows":
            payload = gen.next_rows(batch.n_rows, batch.sale_time_us)
        else:
            payload = gen.next_batch(batch.n_rows, batch.sale_time_us)
        self.cpu_s += time.thread_time() - t0
        return payload
