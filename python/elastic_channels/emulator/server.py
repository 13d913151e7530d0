"""HTTPS transport: a threading HTTP/1.1 server on loopback, fault injection, control API.

Each connection gets a thread (the SDK keeps one data request in flight per channel);
the TLS handshake runs in that thread, not in the accept loop. Faults are applied
before a request is handled. The control endpoints live under ``/_emulator/``:

    GET    /_emulator/health          {"ok": true}
    GET    /_emulator/stats           counters, channels, active faults, landing backlog
    GET    /_emulator/faults          active faults
    POST   /_emulator/faults          add a fault (or a list): {"endpoint": "rows",
                                      "action": "status", "status": 503, "count": 3}
    DELETE /_emulator/faults          clear all faults
    POST   /_emulator/query           {"sql": "..."} -> result rows as JSON lines
    POST   /_emulator/wait-landed     {"timeout_s": 30} -> {"landed": bool}
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import msgspec

from .api import MAX_BODY_BYTES, ApiError, Reply, route
from .faults import FAULT_STATUSES

if TYPE_CHECKING:
    from .emulator import Emulator

__all__ = ["EmulatorHTTPServer", "check_loopback"]

log = logging.getLogger("elastic_channels.emulator")

#: What a ``malformed`` fault sends with its 200: not the JSON the SDK expects.
MALFORMED_BODY = b"<html><body>502 upstream hiccup</body></html>"
_STATUS_TEXT = {
    400: "ERR_INVALID_REQUEST",
    401: "390303",
    403: "ERR_FORBIDDEN",
    404: "ERR_NOT_FOUND",
    409: "ERR_CONFLICT",
    429: "ReceiverSaturated",
    500: "ERR_INTERNAL",
    502: "ERR_BAD_GATEWAY",
    503: "ERR_SERVICE_UNAVAILABLE",
    504: "ERR_GATEWAY_TIMEOUT",
}


def check_loopback(host: str) -> str:
    """``host`` if it is a loopback address, else ValueError (nothing else is ever bound)."""
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ValueError(f"the emulator binds loopback addresses only, not {host!r}")


class EmulatorHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, host: str, port: int, context: ssl.SSLContext, emulator: Emulator):
        check_loopback(host)
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.emulator = emulator
        self._context = context
        super().__init__((host, port), _Handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, addr = self.socket.accept()
        # The handshake happens on first read, in the connection's own thread.
        return self._context.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False
        ), addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection from %s ended with an error", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the body then waits for
    # the client's delayed ACK (~40 ms per request, half the SDK's request cycle).
    disable_nagle_algorithm = True
    server: EmulatorHTTPServer
    server_version = "elastic-channels-emulator"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.client_address[0], *args)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts, size = [], 0
            while True:
                n = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline().strip():
                        pass
                    return b"".join(parts)
                size += n
                if size > MAX_BODY_BYTES:
                    raise ApiError(413, "ERR_REQUEST_TOO_LARGE", "body over 16 MB")
                parts.append(self.rfile.read(n))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY_BYTES:
            raise ApiError(413, "ERR_REQUEST_TOO_LARGE", f"body of {length} bytes is over 16 MB")
        return self.rfile.read(length) if length else b""

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _serve(self, method: str) -> None:
        emu = self.server.emulator
        url = urlsplit(self.path)
        try:
            body = self._read_body()
        except ApiError as e:
            self.close_connection = True
            self._send(e.reply())
            return
        if url.path.startswith("/_emulator/"):
            self._send(self._control(method, url.path[len("/_emulator/") :], body))
            return
        found = route(method, url.path)
        if found is None:
            err = ApiError(404, "ERR_NOT_FOUND", f"no endpoint {method} {url.path}")
            self._send(err.reply())
            return
        name, groups = found
        emu.stats.request(name)
        fault = emu.faults.take(name)
        if fault is not None:
            emu.stats.fault(name, fault.action)
            if fault.action == "drop":
                self._drop()
                return
            if fault.action == "delay":
                time.sleep(fault.delay_s)
            elif fault.action == "status":
                msg = f"injected fault: HTTP {fault.status} on {name}"
                self._send(ApiError(fault.status, _STATUS_TEXT[fault.status], msg).reply())
                emu.stats.response(name, fault.status)
                return
            elif fault.action == "malformed":
                self._send(Reply(200, MALFORMED_BODY, "text/html"))
                emu.stats.response(name, 200)
                return
        headers = {k.lower(): v for k, v in self.headers.items()}
        t0 = time.perf_counter()
        try:
            reply = emu.api.handle(name, groups, url.query, headers, body)
        except ApiError as e:
            reply = e.reply()
        except Exception as e:
            log.exception("%s %s failed", method, url.path)
            reply = ApiError(500, "ERR_INTERNAL", f"emulator error: {e}").reply()
        emu.stats.response(name, reply.status, time.perf_counter() - t0)
        self._send(reply)

    def _control(self, method: str, path: str, body: bytes) -> Reply:
        emu = self.server.emulator
        try:
            args = msgspec.json.decode(body) if body.strip() else {}
            if (method, path) == ("GET", "health"):
                return Reply(200, b'{"ok":true}')
            if (method, path) == ("GET", "stats"):
                return Reply(200, msgspec.json.encode(emu.stats_snapshot()))
            if path == "faults":
                if method == "POST":
                    for spec in args if isinstance(args, list) else [args]:
                        emu.faults.add_spec(spec)
                elif method == "DELETE":
                    emu.faults.clear()
                return Reply(200, msgspec.json.encode(emu.faults.snapshot()))
            if (method, path) == ("POST", "query"):
                lines = emu.query_json_lines(str(args["sql"]))
                return Reply(200, b"".join(lines), "application/x-ndjson")
            if (method, path) == ("POST", "wait-landed"):
                landed = emu.wait_landed(float(args.get("timeout_s", 30)))
                return Reply(200, msgspec.json.encode({"landed": landed}))
        except (ValueError, TypeError, KeyError, msgspec.DecodeError) as e:
            return ApiError(400, "ERR_CONTROL", f"{type(e).__name__}: {e}").reply()
        except Exception as e:  # StoreError and friends: say what DuckDB said
            return ApiError(400, "ERR_CONTROL", str(e)).reply()
        return ApiError(404, "ERR_NOT_FOUND", f"no control endpoint {method} {path}").reply()


def serve_in_thread(server: EmulatorHTTPServer) -> threading.Thread:
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="emulator-http"
    )
    thread.daemon = True
    thread.start()
    return thread


assert set(_STATUS_TEXT) == set(FAULT_STATUSES)
