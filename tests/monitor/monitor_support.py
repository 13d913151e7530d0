"""Shared by the monitor's tests: a real metrics sink on an in-memory DuckDB database,
reached through the emulator's SQL API handler (the same requests as over HTTP), and
worker window lines made by the worker's own Meter on fake clocks."""

from __future__ import annotations

import contextlib
import json
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import duckdb
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from elastic_channels.emulator.http.auth import AuthError, UserKeys
from elastic_channels.emulator.sql.api import handle_statement
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


@contextlib.contextmanager
def sql_api_server(
    con: duckdb.DuckDBPyConnection, max_body: int | None = None
) -> Iterator[tuple[str, bytes]]:
    """``POST /api/v2/statements`` over HTTP on 127.0.0.1: the emulator's key-pair JWT
    check (account EMU, user MONITOR) and its SQL API handler on ``con``; a body over
    ``max_body`` bytes is answered 413 as the emulator does. Yields the base URL and the
    user's private key (PEM); stops when the block ends."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )  # fmt: skip
    users = UserKeys("EMU")
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    users.add("MONITOR", public)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            auth = self.headers.get("Authorization", "")
            kind = self.headers.get("X-Snowflake-Authorization-Token-Type")
            try:
                if kind != "KEYPAIR_JWT" or not auth.startswith("Bearer "):
                    raise AuthError("no key-pair JWT")
                users.verify(auth[len("Bearer ") :])
            except AuthError as e:
                return self._reply(401, {"code": "390144", "message": str(e)})
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            if max_body is not None and len(raw) > max_body:
                return self._reply(
                    413,
                    {
                        "code": "ERR_REQUEST_TOO_LARGE",
                        "message": f"body over the {max_body}-byte limit",
                    },
                )
            body = json.loads(raw)
            return self._reply(*handle_statement(body, con))

        def _reply(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", pem
    finally:
        httpd.shutdown()
        httpd.server_close()
