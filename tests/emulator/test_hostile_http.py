"""Hostile HTTP against a real emulator process over HTTPS: framing, timeouts, the
connection cap, authentication before the body, Content-Type (issue #12 items 1, 6, 7).

Every exchange is bounded by socket timeouts; the emulator stops by itself.
"""

from __future__ import annotations

import json
import os
import socket
import time

import pytest
import zstandard
from emulator_support import ROWS_PATH, EmulatorProcess, read_reply, tls_socket

from elastic_channels.emulator.http.server import REFUSING_HANDSHAKES
from elastic_channels.rows import ResortGenerator

HEADER_TIMEOUT_S = 1
BODY_TIMEOUT_S = 2
MAX_CONNECTIONS = 12


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(
        tmp_path_factory.mktemp("hostile-http") / "emu",
        "--header-timeout-seconds", str(HEADER_TIMEOUT_S),
        "--body-timeout-seconds", str(BODY_TIMEOUT_S),
        "--idle-timeout-seconds", "5",
        "--max-connections", str(MAX_CONNECTIONS),
    ).start()  # fmt: skip
    proc.token = proc.scoped_token()
    yield proc
    assert proc.stop() == 0, proc.stderr()


def _rows_head(emu, length: int, *, rid: str, extra: str = "", token: str | None = None) -> bytes:
    token = emu.token if token is None else token
    return (
        f"POST {ROWS_PATH.format(rid=rid)} HTTP/1.1\r\nHost: localhost\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/x-ndjson\r\n"
        f"Content-Encoding: identity\r\nContent-Length: {length}\r\n{extra}\r\n"
    ).encode()


def _landed(emu, run_id: str) -> int:
    assert emu.wait_landed(30)
    return emu.query(f"SELECT count(*) AS n FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")[0]["n"]


def _sock(emu):
    return tls_socket(emu.port, emu.info["ssl_cert_file"])


def test_negative_content_length_is_400_and_closes(emu):
    s = _sock(emu)
    s.sendall(_rows_head(emu, -5, rid="neg").replace(b"Content-Length: -5", b"Content-Length: -5"))
    status, body = read_reply(s)
    assert status == 400, body
    assert s.recv(1) == b"", "the connection is closed after a framing error"


@pytest.mark.parametrize("size_line", [b"-5", b"zz", b"ffffffffffffffffffffff"])
def test_bad_chunk_size_is_400_and_lands_nothing(emu, size_line):
    s = _sock(emu)
    head = _rows_head(emu, 0, rid="chunk").replace(
        b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n"
    )
    row = ResortGenerator("badchunk", 0).next_batch(1, 1_700_000_000_000_000)
    s.sendall(head + b"%x\r\n" % len(row) + row + b"\r\n" + size_line + b"\r\n" + row)
    status, body = read_reply(s)
    assert status == 400, body
    assert s.recv(1) == b"", "the connection is closed after a framing error"
    assert _landed(emu, "badchunk") == 0


def test_unauthenticated_body_is_refused_before_it_is_read(emu):
    s = _sock(emu)
    t0 = time.monotonic()
    s.sendall(_rows_head(emu, 10_000_000, rid="noauth", token="forged"))
    status, body = read_reply(s)  # answered without our sending one byte of the body
    assert status == 401 and b"scoped token is invalid" in body
    assert time.monotonic() - t0 < BODY_TIMEOUT_S
    assert json.loads(body).keys() == {"code", "message", "request_id"}


def test_declared_body_over_the_cap_is_413_at_once(emu):
    s = _sock(emu)
    s.sendall(_rows_head(emu, 17 << 20, rid="huge"))
    status, body = read_reply(s)
    assert status == 413 and b"limit" in body


def test_chunked_body_growing_past_the_cap_is_413(emu):
    s = _sock(emu)
    head = _rows_head(emu, 0, rid="grow").replace(
        b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n"
    )
    s.sendall(head)
    chunk = b"x" * (1 << 20)
    status = 0
    try:
        for _ in range(20):
            s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
    except OSError:
        pass  # the server answered and closed while we were still sending
    status, body = read_reply(s)
    assert status == 413, body


def test_headers_that_never_finish_get_408(emu):
    s = _sock(emu)
    s.sendall(b"POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
    t0 = time.monotonic()
    status, body = read_reply(s, timeout=HEADER_TIMEOUT_S + 5)
    assert status == 408 and b"header" in body
    assert time.monotonic() - t0 < HEADER_TIMEOUT_S + 4


def test_a_body_that_stops_arriving_gets_408_and_lands_nothing(emu):
    body = ResortGenerator("stalled", 0).next_batch(20, 1_700_000_000_000_000)
    s = _sock(emu)
    s.sendall(_rows_head(emu, len(body), rid="stalled") + body[: len(body) // 2])
    status, reply = read_reply(s, timeout=BODY_TIMEOUT_S + 5)
    assert status == 408 and b"body not received" in reply
    assert _landed(emu, "stalled") == 0


def test_a_body_cut_off_by_a_closed_connection_lands_nothing(emu):
    body = ResortGenerator("cutoff", 0).next_batch(20, 1_700_000_000_000_000)
    s = _sock(emu)
    s.sendall(_rows_head(emu, len(body), rid="cutoff") + body[: len(body) - 100])
    s.close()  # whole rows so far, but not the whole request
    time.sleep(0.5)
    assert _landed(emu, "cutoff") == 0


def test_an_oversized_header_block_is_refused(emu):
    s = _sock(emu)
    s.sendall(b"GET /v2/streaming/hostname HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000)
    status, _ = read_reply(s)
    assert status in (400, 431, 0)
    assert s.recv(1) == b""


def test_wrong_content_type_is_415(emu):
    z = zstandard.ZstdCompressor().compress(b"{}\n")
    headers = {"Authorization": f"Bearer {emu.token}", "Content-Type": "text/plain",
               "Content-Encoding": "zstd"}  # fmt: skip
    status, _, body = emu.request("POST", ROWS_PATH.format(rid="ct"), z, headers)
    assert status == 415 and b"application/x-ndjson" in body


def test_connections_past_the_cap_get_503_and_the_cap_frees_up(emu):
    held = [_sock(emu) for _ in range(MAX_CONNECTIONS)]
    try:
        extra = _sock(emu)
        status, body = read_reply(extra)
        assert status == 503 and b"too many connections" in body
    finally:
        for s in held:
            s.close()
    time.sleep(0.5)
    status, _, _ = emu.request("GET", "/_emulator/health")
    assert status == 200


def test_idle_connections_are_closed(emu):
    s = _sock(emu)
    t0 = time.monotonic()
    s.settimeout(15)
    assert s.recv(1) == b"", "an idle connection is closed"
    assert 4 <= time.monotonic() - t0 < 12


def _tcp(emu) -> socket.socket:
    """A TCP connection that never starts TLS."""
    return socket.create_connection(("127.0.0.1", emu.port), 5)


def _open_fds(emu) -> int:
    return len(os.listdir(f"/proc/{emu.proc.pid}/fd"))


def test_connections_in_their_tls_handshake_count_against_the_cap(emu):
    """TCP connections that never start TLS fill the cap like open ones: the next client
    is answered 503, and the cap frees up when they go."""
    half_open = [
        socket.create_connection(("127.0.0.1", emu.port), 5) for _ in range(MAX_CONNECTIONS)
    ]
    try:
        time.sleep(0.5)  # all accepted
        status, body = read_reply(_sock(emu), timeout=5)
        assert status == 503 and b"too many connections" in body
    finally:
        for s in half_open:
            s.close()
    time.sleep(0.5)
    assert emu.request("GET", "/_emulator/health")[0] == 200


def test_a_flood_of_half_open_handshakes_holds_few_sockets(emu):
    before = _open_fds(emu)
    flood = [
        socket.create_connection(("127.0.0.1", emu.port), 5) for _ in range(5 * MAX_CONNECTIONS)
    ]
    try:
        time.sleep(1.0)  # all accepted, the ones past the cap closed
        held = _open_fds(emu) - before
        assert held <= MAX_CONNECTIONS + REFUSING_HANDSHAKES + 2, f"{held} sockets held"
    finally:
        for s in flood:
            s.close()
    time.sleep(0.5)
    assert emu.request("GET", "/_emulator/health")[0] == 200
