"""Loopback stand-ins for an account that cannot be reached, for the preflight's tests
(``elastic_channels.account.reach``): a closed port, a port whose backlog is full (a
TCP connect that is never answered), a port that accepts and never says a word."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then closed: a connect is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def silent_port() -> Iterator[int]:
    """A listening port that never accepts: the kernel completes the TCP connect, and
    nothing answers the TLS handshake."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield int(s.getsockname()[1])


@contextmanager
def full_port() -> Iterator[int]:
    """A listening port whose accept queue (backlog 0: one connection) is already full:
    Linux drops further SYNs, so a new TCP connect is never answered."""
    with socket.socket() as s, socket.socket() as first:
        s.bind(("127.0.0.1", 0))
        s.listen(0)
        port = int(s.getsockname()[1])
        first.settimeout(5)
        first.connect(("127.0.0.1", port))
        yield port
