"""The dashboard answers only requests addressed to itself (DNS rebinding): a ``Host``
other than 127.0.0.1:PORT or localhost:PORT is refused, and so is a websocket whose
``Origin`` is another site. Checked on the running ``elastic-channels dashboard``."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import free_port, wait_port

from elastic_channels.dashboard.loopback import allowed_hosts, refusal


def _scope(kind: str, host: str | None, origin: str | None = None) -> dict:
    headers = [(b"host", host.encode())] if host is not None else []
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return {"type": kind, "server": ("127.0.0.1", 8501), "headers": headers}


def test_allowed_hosts_are_the_servers_own_address_and_port() -> None:
    assert allowed_hosts(("127.0.0.1", 8501)) == {"127.0.0.1:8501", "localhost:8501"}
    assert allowed_hosts(("127.0.0.1", 80)) >= {"127.0.0.1", "localhost"}
    assert refusal(_scope("http", "127.0.0.1:8501")) is None
    assert refusal(_scope("http", "LOCALHOST:8501")) is None
    for host in ("evil.example", "evil.example:8501", "127.0.0.1:8502", "127.0.0.1", None):
        assert refusal(_scope("http", host)), host
    ok = "127.0.0.1:8501"
    assert refusal(_scope("websocket", ok, "http://127.0.0.1:8501")) is None
    assert refusal(_scope("websocket", ok)) is None  # no Origin: not a browser
    for origin in ("http://evil.example", "http://127.0.0.1:8502", "null"):
        assert refusal(_scope("websocket", ok, origin)), origin


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """``elastic-channels dashboard`` on a free port (over an empty data dir)."""
    port = free_port()
    log = (tmp_path_factory.mktemp("loopback") / "dashboard.log").open("wb")
    data_dir = tmp_path_factory.mktemp("emu")
    proc = subprocess.Popen(
        [sys.executable, "-m", "elastic_channels.dashboard.cli", "--port", str(port),
         "--data-dir", str(data_dir)],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ},
    )  # fmt: skip
    try:
        wait_port(port, 60)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def _status(
    port: int, host: str | None, path: str = "/", headers: dict[str, str] | None = None
) -> int:
    """The HTTP status the server on 127.0.0.1:``port`` answers a GET carrying ``host``
    (None: an HTTP/1.0 request without a Host header)."""
    if host is None:
        lines = [f"GET {path} HTTP/1.0"]
    else:
        lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        first = s.recv(4096).split(b"\r\n", 1)[0]
    return int(first.split()[1])


def _websocket(port: int, host: str, origin: str) -> int:
    key = base64.b64encode(os.urandom(16)).decode()
    return _status(port, host, "/_stcore/stream", {
        "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13", "Origin": origin,
    })  # fmt: skip


def test_a_foreign_host_is_refused(dashboard: int) -> None:
    port = dashboard
    assert _status(port, f"127.0.0.1:{port}") == 200
    assert _status(port, f"localhost:{port}") == 200
    assert _status(port, f"127.0.0.1:{port}", "/_stcore/health") == 200
    foreign = (
        "evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", f"localhost.:{port}",
        f"127.0.0.2:{port}", "127.0.0.1", f"[::1]:{port}", None,
    )  # fmt: skip
    for host in foreign:
        assert _status(port, host) == 403, host
        assert _status(port, host, "/_stcore/health") == 403, host


def test_a_websocket_from_another_origin_is_refused(dashboard: int) -> None:
    port = dashboard
    own = f"127.0.0.1:{port}"
    assert _websocket(port, own, f"http://{own}") == 101
    assert _websocket(port, f"localhost:{port}", f"http://localhost:{port}") == 101
    assert _websocket(port, own, f"http://localhost:{port}") == 101  # either own name
    for origin in ("http://evil.example", f"http://evil.example:{port}", "null",
                   f"http://127.0.0.1:{port + 1}", f"https://127.0.0.1:{port}",
                   f"http://127.0.0.1:{port}.evil.example"):  # fmt: skip
        assert _websocket(port, own, origin) == 403, origin
    # a foreign Host is refused whatever the Origin (DNS rebinding: both are the attacker's)
    assert _websocket(port, f"evil.example:{port}", f"http://evil.example:{port}") == 403
    assert _websocket(port, f"evil.example:{port}", f"http://{own}") == 403


def test_the_app_served_is_the_guarded_one() -> None:
    from elastic_channels.dashboard import cli

    assert cli.APP == Path(cli.__file__).resolve().parent / "asgi.py"
