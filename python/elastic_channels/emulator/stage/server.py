"""``Stage``: the emulator's S3 stage, served over HTTPS on loopback.

The SDK's file mode uploads each encrypted file with the AWS SDK for Rust to the endpoint in
its ``AWS_ENDPOINT_URL`` (``https://127.0.0.1:PORT``), path style, signed with the
``creds`` pipe-info handed out; the Snowflake side later reads the file back by the name the
registration carries (``Stage.read``).

The server is werkzeug's threaded WSGI server around ``StageApp``, with one change: the TLS
handshake runs in the connection's own thread, under a timeout, instead of in the accept
loop (werkzeug's default wraps the listening socket, so one client that never finishes a
handshake would stall every other connection).
"""

from __future__ import annotations

import socket
import ssl
import threading
from typing import Any

from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

__all__ = ["HANDSHAKE_TIMEOUT_S", "IDLE_TIMEOUT_S", "StageServer"]

#: Seconds a client gets to finish its TLS handshake, and to send each part of a request.
HANDSHAKE_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 120.0


class _QuietHandler(WSGIRequestHandler):
    """werkzeug's handler without a log line per request (errors are still logged)."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class _TlsPerConnectionServer(ThreadedWSGIServer):
    """A threaded WSGI server whose connections do their TLS handshake in their thread."""

    def __init__(self, host: str, port: int, app: Any, context: ssl.SSLContext) -> None:
        super().__init__(host, port, app, handler=_QuietHandler)
        self._context = context
        self.ssl_context = context  # so werkzeug reports wsgi.url_scheme "https"

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(HANDSHAKE_TIMEOUT_S)
        try:
            tls = self._context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return  # a failed or abandoned handshake is the client's loss only
        try:
            tls.settimeout(IDLE_TIMEOUT_S)
            super().finish_request(tls, client_address)
        finally:
            try:
                tls.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            tls.close()


class StageServer:
    """A WSGI app served over HTTPS from a daemon thread; start, stop, url."""

    def __init__(self, app: Any, host: str, port: int, context: ssl.SSLContext) -> None:
        self._server = _TlsPerConnectionServer(host, port, app, context)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.1,), name="emulator-stage", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = str(self._server.server_address[0]), self._server.server_address[1]
        return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, close the listening socket; requests in flight may finish."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
