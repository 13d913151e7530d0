"""The dashboard answers only requests addressed to itself: an ASGI middleware in front
of Streamlit that refuses a request whose ``Host`` is not the server's own loopback
address and port, and a websocket whose ``Origin`` is not that address.

Why: the server listens on 127.0.0.1, but a page on any site can make the browser talk
to it by DNS rebinding (its own name re-pointed at 127.0.0.1: the browser then sends
``Host: evil.example:8501``) or open a websocket to 127.0.0.1 directly (``Origin:
http://evil.example``). Streamlit's ``server.allowedHosts`` checks websockets only
and ignores the port; this checks every request, port included. ``localhost`` with the
same port is accepted too: only this machine resolves it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["LoopbackOnly", "allowed_hosts"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost",)


def allowed_hosts(server: tuple[str, int] | None) -> frozenset[str]:
    """The ``Host`` values a server listening on ``server`` (address, port) answers."""
    if not server:
        return frozenset()
    address, port = str(server[0]).lower(), int(server[1])
    names = {address, *LOOPBACK_NAMES}
    hosts = {f"{n}:{port}" for n in names}
    if port == 80:
        hosts |= names
    return frozenset(hosts)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1").strip().lower()
    return None


def refusal(scope: Scope) -> str | None:
    """Why ``scope`` (an HTTP or websocket request) is refused, or None."""
    allowed = allowed_hosts(scope.get("server"))
    host = _header(scope, b"host")
    if host not in allowed:
        return f"Host {host!r} is not this dashboard's address"
    if scope["type"] == "websocket":
        origin = _header(scope, b"origin")
        if origin is not None and origin not in {f"http://{h}" for h in allowed}:
            return f"Origin {origin!r} is not this dashboard's address"
    return None


class LoopbackOnly:
    """ASGI middleware: HTTP 403 for a foreign ``Host``; a websocket with a foreign
    ``Host`` or ``Origin`` is closed before it opens (the server answers 403)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        why = refusal(scope)
        if why is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": why[:120]})
            return
        body = f"{why}: this dashboard answers http://{_own(scope)} only.\n".encode()
        await send({
            "type": "http.response.start", "status": 403,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode())],
        })  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def _own(scope: Scope) -> str:
    server = scope.get("server") or ("127.0.0.1", 0)
    return f"{server[0]}:{server[1]}"
