"""HTTPS transport: uvicorn's h11 protocol on a loopback socket, in a thread of its own.

HTTP/1.1 framing is h11's (RFC 9112: a bad Content-Length or chunk size is a 400 and a
close, as is an oversized header block). On top of uvicorn's protocol this adds what a
server facing careless or hostile clients needs and uvicorn leaves to a proxy:

* a header timeout: a request whose header block is not complete within
  ``header_timeout_s`` of its first byte is answered 408 and closed;
* an idle timeout: a connection that sends nothing for ``idle_timeout_s`` is closed;
* a TLS handshake timeout (``handshake_timeout_s``);
* a connection cap: connections still in their TLS handshake count with the open ones
  (the server accepts them itself, then hands each to asyncio's TLS with
  ``connect_accepted_socket``), and past ``max_connections`` a new one is answered 503
  once its handshake is done and closed before anything is read; past that and
  :data:`REFUSING_HANDSHAKES` such refusals still in their handshake, a new connection is
  closed at once, before TLS (no answer is possible then).

Body timeouts, size caps and authentication before the body belong to the application
(``app.py``), which reads the body itself, chunk by chunk.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
import ssl
import threading
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

__all__ = ["HttpLimits", "HttpServer", "check_loopback"]

log = logging.getLogger("elastic_channels.emulator")


@dataclass(frozen=True)
class HttpLimits:
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    idle_timeout_s: float = 60.0
    handshake_timeout_s: float = 10.0
    max_connections: int = 256
    max_header_bytes: int = 16384


#: What an emulator may bind: the names its certificate and the client properties it
#: hands out cover (``localhost`` binds 127.0.0.1). ::1 or 127.0.0.2 are loopback too,
#: but no client that follows the properties would connect there.
SERVED_HOSTS = ("127.0.0.1", "localhost")


def check_served_host(host: str) -> str:
    """``host`` if an emulator may bind it (:data:`SERVED_HOSTS`), else ValueError."""
    if host not in SERVED_HOSTS:
        raise ValueError(
            f"{host!r} is not an address the emulator's certificate and client properties "
            f"cover (it binds loopback only); use {' or '.join(SERVED_HOSTS)}"
        )
    return host


def check_loopback(host: str) -> str:
    """The address to bind for ``host`` if it is loopback (``localhost`` too), else ValueError."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ValueError(f"the emulator binds loopback addresses only, not {host!r}")


def _raw_reply(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"code": str(status), "message": message, "request_id": ""}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


#: Connections over the cap still taken through their TLS handshake for a 503; more are
#: closed before TLS, so a flood of half-open handshakes holds at most
#: ``max_connections + REFUSING_HANDSHAKES`` sockets.
REFUSING_HANDSHAKES = 4

#: After refusing a request whose body is still arriving, read and drop what comes for
#: this long before closing, so that the refusal is not lost to a TCP reset (what nginx
#: calls a lingering close).
LINGER_S = 2.0


class _LingeringTransport:
    """The transport as uvicorn's request cycle sees it: ``close()`` while the client is
    still sending becomes a lingering close (see :data:`LINGER_S`)."""

    def __init__(self, transport: asyncio.Transport, protocol: GuardedH11Protocol) -> None:
        self._transport, self._protocol = transport, protocol
        self.lingering = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self) -> None:
        if self.lingering or self._transport.is_closing():
            return
        if self._protocol.conn.their_state is h11.SEND_BODY:
            self.lingering = True
            self._transport.resume_reading()
            self._protocol.loop.call_later(LINGER_S, self._transport.close)
            return
        self._transport.close()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus header/idle timeouts, a connection cap, and the
    transport handed to the application (``scope["emulator.transport"]``)."""

    limits: HttpLimits = HttpLimits()

    def __init__(self, *args: Any, refused: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused = refused  # over the connection cap when accepted: answered 503
        app = self.app

        async def with_transport(scope: Any, receive: Any, send: Any) -> None:
            scope["emulator.transport"] = self.transport
            await app(scope, receive, send)

        self.app = with_transport
        self._idle_since = 0.0
        self._first_byte_at: float | None = None
        self._watch: asyncio.TimerHandle | None = None

    def _busy(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._lingering = _LingeringTransport(transport, self)
        super().connection_made(self._lingering)  # type: ignore[arg-type]
        if self.refused:
            log.warning("connection cap of %d reached: refusing one", self.limits.max_connections)
            transport.write(_raw_reply(503, "Service Unavailable", "too many connections"))
            transport.close()
            return
        # Headers and body go out as separate TLS records; with Nagle on, the second waits
        # for the client's delayed ACK (~40 ms a request, most of the SDK's cycle).
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        self._idle_since = self.loop.time()
        self._watch = self.loop.call_later(1.0, self._check)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._watch is not None:
            self._watch.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._lingering.lingering:
            return  # the rest of a refused body: dropped
        if self._first_byte_at is None and not self._busy():
            self._first_byte_at = self.loop.time()
        super().data_received(data)
        if self._busy():
            self._first_byte_at = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._idle_since = self.loop.time()
        self._first_byte_at = self._idle_since if self.conn.trailing_data[0] else None

    def _check(self) -> None:
        self._watch = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        if not self._busy():
            lim = self.limits
            if self._first_byte_at is not None and now - self._first_byte_at > lim.header_timeout_s:
                msg = f"request header not complete within {lim.header_timeout_s:g} s"
                if self.conn.our_state is h11.IDLE:
                    self.transport.write(_raw_reply(408, "Request Timeout", msg))
                self.transport.close()
                return
            if self._first_byte_at is None and now - self._idle_since > lim.idle_timeout_s:
                self.transport.close()
                return
        self._watch = self.loop.call_later(1.0, self._check)


class HttpServer:
    """Serves an ASGI app over TLS on a loopback address, on a background thread."""

    def __init__(
        self, app: Any, host: str, port: int, context: ssl.SSLContext, limits: HttpLimits
    ) -> None:
        bind = check_loopback(host)
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((bind, port))
        self._sock.listen(128)
        self._sock.setblocking(False)
        self.port: int = self._sock.getsockname()[1]
        protocol = type("EmulatorH11Protocol", (GuardedH11Protocol,), {"limits": limits})
        self._config = Config(
            app,
            http=protocol,
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            date_header=False,
            access_log=False,
            log_config=None,
            timeout_keep_alive=int(limits.idle_timeout_s),
            h11_max_incomplete_event_size=limits.max_header_bytes,
        )
        self._config.load()
        self._context = context
        self._limits = limits
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        self._ready = threading.Event()
        self._handshaking = 0  # accepted, TLS handshake not done
        self._refusing = 0  # of those, over the cap (to be answered 503)
        self._thread = threading.Thread(target=self._run, name="emulator-http", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(30)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        state = ServerState()
        accepting = self._loop.create_task(self._accept(state))
        self._ready.set()
        await self._stop.wait()
        accepting.cancel()
        for conn in list(state.connections):
            conn.shutdown()
        for _ in range(100):  # requests in progress finish (up to 10 s)
            if not state.tasks:
                break
            await asyncio.sleep(0.1)
        for conn in list(state.connections):
            conn.transport.abort()
        await asyncio.sleep(0)

    async def _accept(self, state: ServerState) -> None:
        """Accept connections, counting those in their TLS handshake against the cap."""
        handshakes: set[asyncio.Task] = set()
        try:
            while True:
                try:
                    conn, _ = await self._loop.sock_accept(self._sock)
                except OSError as e:  # out of file descriptors, say: as asyncio's server does
                    log.warning("accept failed: %s; retrying in 1 s", e)
                    await asyncio.sleep(1.0)
                    continue
                over = len(state.connections) + self._handshaking >= self._limits.max_connections
                if over and self._refusing >= REFUSING_HANDSHAKES:
                    conn.close()  # before TLS: nothing can be answered
                    continue
                if over:
                    log.warning(
                        "connection cap of %d reached: refusing one", self._limits.max_connections
                    )
                self._handshaking += 1  # counted now: the next accept may come first
                self._refusing += over
                task = self._loop.create_task(self._handshake(conn, state, over))
                handshakes.add(task)
                task.add_done_callback(handshakes.discard)
        finally:
            for task in list(handshakes):
                task.cancel()
            if handshakes:
                await asyncio.wait(handshakes, timeout=5)

    async def _handshake(self, conn: socket.socket, state: ServerState, refused: bool) -> None:
        """TLS on an accepted connection, then uvicorn's protocol on it (counted by the
        caller in ``_handshaking`` until this ends)."""
        config = self._config

        def protocol() -> asyncio.Protocol:
            return config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=state, app_state={}, _loop=self._loop,
                refused=refused,
            )  # fmt: skip

        try:
            await self._loop.connect_accepted_socket(
                protocol, conn, ssl=self._context,
                ssl_handshake_timeout=self._limits.handshake_timeout_s,
            )  # fmt: skip
        except Exception as e:  # refused, timed out, reset: the connection alone ends
            log.debug("TLS handshake failed: %s", e)
            conn.close()
        finally:
            self._handshaking -= 1
            self._refusing -= refused

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(30)
        self._sock.close()

    def run_coroutine(self, coro: Any) -> Any:
        """Run ``coro`` on the server's loop (from another thread) and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()
