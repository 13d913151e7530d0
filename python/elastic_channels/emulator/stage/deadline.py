"""Deadlines on a connection: shut it down at a time unless cancelled first.

A thread blocked reading a socket does not notice a deadline; shutting the socket down
ends its read at once (EOF or an error), which is how the stage cuts off a request whose
headers or body do not arrive in time, or a refused body werkzeug would go on reading.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

__all__ = ["cut_off_after"]


def cut_off_after(
    environ: dict[str, Any], seconds: float
) -> tuple[threading.Timer, threading.Event]:
    """Shut the request's connection down in ``seconds`` unless the timer returned is
    cancelled first (the event tells whether it fired): a read blocked on the connection
    then ends at once."""
    expired = threading.Event()
    watchdog = threading.Timer(seconds, _cut_off, (environ.get("werkzeug.socket"), expired))
    watchdog.daemon = True
    watchdog.start()
    return watchdog, expired


def _cut_off(sock: socket.socket | None, expired: threading.Event) -> None:
    expired.set()
    if sock is not None:
        try:  # the plain socket's shutdown, not SSLSocket's (that one unwraps TLS state)
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass
