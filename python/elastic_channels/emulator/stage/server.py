"""``Stage``: the emulator's S3 stage, served over HTTPS on loopback.

The SDK's file mode uploads each encrypted file with the AWS SDK for Rust to the endpoint in
its ``AWS_ENDPOINT_URL`` (``https://127.0.0.1:PORT``), path style, signed with the
``creds`` pipe-info handed out; the Snowflake side later reads the file back by the name the
registration carries (``Stage.read``).

The server is werkzeug's threaded WSGI server around ``StageApp``, with three changes:

- the TLS handshake runs in the connection's own thread, under a timeout, instead of in the
  accept loop (werkzeug's default wraps the listening socket, so one client that never
  finishes a handshake would stall every other connection);
- at most ``max_connections`` connections are served at once (a thread each); one past that
  is closed as soon as it is accepted, before its handshake (the AWS SDKs retry it);
- a request's line and headers must arrive within ``header_timeout_s`` of the handshake
  (werkzeug serves one request per connection), else the connection is shut down;
- the listening socket is bound here, not by werkzeug (which calls ``sys.exit`` when the
  port is taken), so a taken port is an ``OSError`` the caller can explain.
"""

from __future__ import annotations

import errno
import socket
import ssl
import threading
from typing import Any

from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

from .deadline import cut_off_after

__all__ = [
    "DRAIN_SMALL",
    "HANDSHAKE_TIMEOUT_S",
    "IDLE_TIMEOUT_S",
    "PortTaken",
    "StageServer",
    "listen",
]

#: Seconds a client gets to finish its TLS handshake, and to send each part of a request.
HANDSHAKE_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 120.0


class PortTaken(OSError):
    """The port asked for is held by another socket."""


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host:port`` (0: a free port), with SO_REUSEADDR (so a
    restart after a kill binds the same port while old connections are in TIME_WAIT)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise PortTaken(errno.EADDRINUSE, f"{host}:{port} is in use") from None
            raise
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


#: Environ key of a function that makes the rest of the connection's reads small.
DRAIN_SMALL = "stage.drain_small"
#: The largest read once ``DRAIN_SMALL`` was called.
_DRAIN_READ_BYTES = 64 << 10


class _CappedReader:
    """The connection's reader, whose reads can be capped: werkzeug discards what is left
    of a body after the reply in reads of 10 MB, which a refused body need not cost."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self.cap: int | None = None

    def read(self, size: int | None = -1) -> bytes:
        if self.cap is not None and (size is None or size < 0 or size > self.cap):
            size = self.cap
        return self._raw.read(size)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _QuietHandler(WSGIRequestHandler):
    """werkzeug's handler without a log line per request (errors are still logged), no
    automatic ``100 Continue``, and small reads once the app asks for them."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.rfile = _CappedReader(self.rfile)  # type: ignore[assignment]

    _expect: str | None = None

    def handle_expect_100(self) -> bool:
        """Do not answer ``Expect: 100-continue`` before the app has looked at the request
        (http.server and werkzeug's ``run_wsgi`` both would): the app sends ``100
        Continue`` once the credentials and key have passed (``app.py``), so a refused
        client never sends its body (as S3 answers it)."""
        return True

    def run_wsgi(self) -> None:
        self._expect = self.headers.get("Expect")
        del self.headers["Expect"]  # hidden from werkzeug, handed to the app below
        super().run_wsgi()

    def make_environ(self) -> Any:
        self.server.headers_done(self.connection)  # type: ignore[attr-defined]
        environ = super().make_environ()
        if self._expect is not None:
            environ["HTTP_EXPECT"] = self._expect
        environ[DRAIN_SMALL] = lambda: setattr(self.rfile, "cap", _DRAIN_READ_BYTES)
        return environ


class _TlsPerConnectionServer(ThreadedWSGIServer):
    """A threaded WSGI server whose connections do their TLS handshake in their thread,
    at most ``max_connections`` at a time."""

    def __init__(
        self,
        sock: socket.socket,
        app: Any,
        context: ssl.SSLContext,
        max_connections: int,
        header_timeout_s: float,
    ) -> None:
        host, port = sock.getsockname()[:2]
        super().__init__(host, port, app, handler=_QuietHandler, fd=sock.fileno())
        self._context = context
        self.ssl_context = context  # so werkzeug reports wsgi.url_scheme "https"
        self._slots = threading.BoundedSemaphore(max_connections)
        self.connections_refused = 0
        self._header_timeout_s = header_timeout_s
        self._header_timers: dict[Any, threading.Timer] = {}
        self._timers_lock = threading.Lock()

    def headers_done(self, conn: Any) -> None:
        """The request's headers are in: its header deadline no longer applies."""
        with self._timers_lock:
            timer = self._header_timers.pop(conn, None)
        if timer is not None:
            timer.cancel()

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.connections_refused += 1  # the accept loop's thread only
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(HANDSHAKE_TIMEOUT_S)
        try:
            tls = self._context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return  # a failed or abandoned handshake is the client's loss only
        timer, _ = cut_off_after({"werkzeug.socket": tls}, self._header_timeout_s)
        with self._timers_lock:
            self._header_timers[tls] = timer
        try:
            tls.settimeout(IDLE_TIMEOUT_S)
            super().finish_request(tls, client_address)
        finally:
            self.headers_done(tls)
            try:
                tls.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            tls.close()


class StageServer:
    """A WSGI app served over HTTPS from a daemon thread; start, stop, url."""

    def __init__(
        self,
        app: Any,
        sock: socket.socket,
        context: ssl.SSLContext,
        max_connections: int,
        header_timeout_s: float = 10.0,
    ) -> None:
        """``sock``: a listening socket (``listen``); the server takes a copy of it, and
        the caller may close its own."""
        self._server = _TlsPerConnectionServer(
            sock, app, context, max_connections, header_timeout_s
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.1,), name="emulator-stage", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = str(self._server.server_address[0]), self._server.server_address[1]
        return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def connections_refused(self) -> int:
        """Connections closed unserved because ``max_connections`` were open."""
        return self._server.connections_refused

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, close the listening socket; requests in flight may finish."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
