"""Shared by the monitor's tests: a real metrics sink on an in-memory DuckDB database,
reached through the emulator's SQL API handler (the same requests as over HTTP), and
worker window lines made by the worker's own Meter on fake clocks."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import duckdb

from elastic_channels.monitor.sink import SqlMetricsSink
from elastic_channels.monitor.sql_client import SqlApiClient, local_transport
from elastic_channels.worker.meter import Meter

EPOCH0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z, a multiple of every window length used


def duckdb_with_landing_table() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(
        'CREATE TABLE RESORT_SALES ("RUN_ID" VARCHAR, "WORKER_ID" INTEGER, '
        '"SALE_TIME" TIMESTAMPTZ, "_COMMIT_TIME" TIMESTAMPTZ)'
    )
    return con


def make_sink(con: duckdb.DuckDBPyConnection) -> SqlMetricsSink:
    sink = SqlMetricsSink(SqlApiClient(local_transport(con)))
    sink.ensure_table()
    return sink


@dataclass
class FakeWorker:
    """One worker's meter on its own fake clocks; keeps every raw ack latency."""

    run_id: str
    worker_id: int
    start: float  # epoch seconds
    window_s: float
    now: float = 0.0
    lines: list[dict[str, Any]] = field(default_factory=list)
    latencies: list[tuple[float, float]] = field(default_factory=list)  # (time, seconds)
    rows: list[tuple[float, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.now = self.start
        self.meter = Meter(
            self.window_s, clock=lambda: self.now, wall=lambda: self.now, cpu=lambda: 0.0
        )

    def step(self, dt: float, rng: random.Random) -> None:
        """``dt`` seconds on: one batch sent, one ack with a random latency."""
        self.now += dt
        n = rng.randint(1000, 4000)
        self.meter.record_sent(n, n * 292, behind_s=max(0.0, rng.gauss(0.0, 0.01)))
        self.rows.append((self.now, n))
        latency = rng.lognormvariate(-1.0, 0.6)  # ~0.37 s median, a long tail
        self.meter.record_acked(n, n * 292, latency)
        self.latencies.append((self.now, latency))
        self._emit_due()

    def _emit_due(self) -> None:
        while self.meter.window_due():
            self.lines.append(self.meter.close_window(0, 0, **self._ids()))

    def finish(self) -> None:
        self._emit_due()
        self.lines.append(self.meter.close_window(0, 0, **self._ids()))

    def summary(self) -> dict[str, Any]:
        return self.meter.summary(0, **self._ids())

    def _ids(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "worker_id": self.worker_id}
