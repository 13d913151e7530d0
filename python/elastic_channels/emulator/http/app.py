"""The ASGI application: route, authenticate, check the body's type and size, read it
under a deadline, apply scripted faults, answer on a worker thread.

Order matters: nothing of a body is read before its route and credentials are known to be
good, a body over the route's cap is refused from its declared length (413) or as soon as
it grows past it, a body that stops arriving is a 408, and a client that disconnects
mid-body gets nothing done. A handler runs on one of the application's worker threads,
unless it is a coroutine function: that one is awaited on the event loop and must hand
any blocking work to threads of its own (the SQL API does: its statements never hold
the threads that answer appends). Replies to a request whose body was not read to the end close
the connection.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qsl

from ..api.stats import Stats
from .access import Authenticator
from .errors import ApiError, Reply
from .faults import FaultTable
from .routes import Request, Router

__all__ = ["MALFORMED_BODY", "EmulatorApp"]

log = logging.getLogger("elastic_channels.emulator")

#: What a ``malformed`` fault sends with its 200: not the JSON the SDK expects.
MALFORMED_BODY = b"<html><body>502 upstream hiccup</body></html>"
_FAULT_CODES = {
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


class _Disconnected(Exception):
    """The client went away before its body was complete."""


def _media_type(headers: dict[str, str]) -> str:
    return headers.get("content-type", "").split(";")[0].strip().lower()


def _has_body(headers: dict[str, str]) -> bool:
    return "transfer-encoding" in headers or headers.get("content-length", "0") != "0"


class EmulatorApp:
    def __init__(
        self,
        router: Router,
        authenticator: Authenticator,
        faults: FaultTable,
        stats: Stats,
        *,
        body_timeout_s: float,
        workers: int = 16,
    ) -> None:
        self.router, self.auth, self.faults, self.stats = router, authenticator, faults, stats
        self.body_timeout_s = body_timeout_s
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="emulator-handler")

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = dict(parse_qsl(scope["query_string"].decode("latin-1")))
        pending = _has_body(headers)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "%s %s content-type=%s content-encoding=%s token-type=%s",
                scope["method"], scope["path"], headers.get("content-type"),
                headers.get("content-encoding"),
                headers.get("x-snowflake-authorization-token-type"),
            )  # fmt: skip
        name = None
        t0 = time.perf_counter()
        try:
            route, groups = self.router.match(scope["method"], scope["path"])
            name = route.name
            self.stats.request(name)
            request = Request(route, groups, query, headers)
            request.user = self.auth.check(route.auth, headers)
            self._check_body_headers(request, pending)
            request.body = await self._read_body(receive, route.max_body) if pending else b""
            pending = False
            reply = await self._answer(request, scope.get("emulator.transport"), receive)
            if reply is None:
                return
        except _Disconnected:
            log.debug("%s %s: client left mid-body; nothing done", scope["method"], scope["path"])
            return
        except ApiError as e:
            reply = e.reply(query.get("requestId", ""))
        if name is not None:
            self.stats.response(name, reply.status, time.perf_counter() - t0)
        await self._send(send, reply, close=pending or reply.close)

    def _check_body_headers(self, request: Request, pending: bool) -> None:
        route = request.route
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > route.max_body:
            raise ApiError(
                413,
                "ERR_REQUEST_TOO_LARGE",
                f"body of {length} bytes is over the {route.max_body}-byte limit",
                close=True,
            )
        if pending and route.content_types:
            media = _media_type(request.headers)
            if media not in route.content_types:
                raise ApiError(
                    415,
                    "ERR_UNSUPPORTED_MEDIA_TYPE",
                    f"Content-Type {media or '(none)'!r} is not accepted here; send "
                    f"{' or '.join(route.content_types)}",
                    close=True,
                )

    async def _read_body(self, receive: Any, limit: int) -> bytes:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout_s
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise ApiError(
                    408,
                    "ERR_REQUEST_TIMEOUT",
                    f"request body not received within {self.body_timeout_s:g} s",
                    close=True,
                ) from None
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise ApiError(
                    413, "ERR_REQUEST_TOO_LARGE", f"body over the {limit}-byte limit", close=True
                )
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    async def _answer(self, request: Request, transport: Any, receive: Any) -> Reply | None:
        """The reply, or None when a fault closed the connection instead."""
        loop = asyncio.get_running_loop()
        name = request.route.name
        fault = self.faults.take(name) if request.route.faultable else None
        if fault is not None:
            self.stats.fault(name, fault.action)
            if fault.action == "drop":
                await _abort(transport, receive)
                return None
            if fault.action == "delay":
                await asyncio.sleep(fault.delay_s)
            elif fault.action == "status":
                msg = f"injected fault: HTTP {fault.status} on {name}"
                return ApiError(fault.status, _FAULT_CODES[fault.status], msg).reply(
                    request.request_id
                )
            elif fault.action == "malformed":
                return Reply(200, MALFORMED_BODY, "text/html")
        handler = request.route.handler
        try:
            if inspect.iscoroutinefunction(handler):  # it waits without a thread (routes.py)
                reply = await handler(request)
            else:
                reply = await loop.run_in_executor(self._pool, handler, request)
        except ApiError as e:
            reply = e.reply(request.request_id)
        except Exception as e:
            log.exception("%s failed", name)
            reply = ApiError(500, "ERR_INTERNAL", f"emulator error: {e}").reply(request.request_id)
        if fault is not None and fault.action == "lose_ack":
            await _abort(transport, receive)  # handled (and landed), never answered
            return None
        return reply

    async def _send(self, send: Any, reply: Reply, *, close: bool) -> None:
        headers = [
            (b"content-type", reply.content_type.encode()),
            (b"content-length", str(len(reply.body)).encode()),
        ]
        if close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        await send({"type": "http.response.body", "body": reply.body})


async def _abort(transport: Any, receive: Any) -> None:
    """Close the connection unanswered and wait until the server has seen it go."""
    if transport is not None:
        transport.abort()
    for _ in range(100):
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        await asyncio.sleep(0.01)
