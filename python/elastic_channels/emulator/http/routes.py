"""The route table: method + path pattern -> endpoint name, who may call it, what body it
takes, and the function that answers it.

Adding an endpoint is one :class:`Route` in the list the emulator builds
(``Emulator._routes``). An authenticated one, for example Snowflake's SQL API::

    Route("POST", r"/api/v2/statements", "sql_statements", Auth.KEYPAIR,
          sql_api.statements, content_types=("application/json",))

The application checks the route's :class:`~.access.Auth` from the headers, then its
Content-Type and size, and only then reads the body and calls ``handler(request)``
(on a worker thread, so it may block). A handler that is a coroutine function (``async
def``) is awaited on the event loop instead: it must not block, and holds no worker
thread while it waits (the SQL API's statements wait so, on threads of their own).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from .access import Auth
from .errors import ApiError, Reply

__all__ = ["Request", "Route", "Router"]


@dataclass
class Request:
    route: Route
    groups: tuple[str, ...]
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""
    user: str | None = None

    @property
    def request_id(self) -> str:
        return self.query.get("requestId", "")


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # a regular expression matched against the whole URL path
    name: str  # the endpoint's name in stats and faults
    auth: Auth
    handler: Callable[[Request], Reply] | Callable[[Request], Awaitable[Reply]]
    #: Media types accepted for a request body (empty: any, or no body expected).
    content_types: tuple[str, ...] = ()
    #: Largest body accepted, in bytes on the wire.
    max_body: int = 1 << 20
    #: Whether scripted faults may hit this route (not the control endpoints).
    faultable: bool = True
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", re.compile(self.path))


class Router:
    def __init__(self, routes: Sequence[Route]) -> None:
        self.routes = tuple(routes)

    def match(self, method: str, path: str) -> tuple[Route, tuple[str, ...]]:
        """The route and URL-decoded path groups; ApiError 404 or 405 if none."""
        allowed = []
        for route in self.routes:
            m = route.pattern.fullmatch(path)
            if m is None:
                continue
            if route.method == method:
                return route, tuple(unquote(g) for g in m.groups())
            allowed.append(route.method)
        if allowed:
            raise ApiError(
                405, "ERR_METHOD_NOT_ALLOWED", f"{method} {path}: use {', '.join(allowed)}"
            )
        raise ApiError(404, "ERR_NOT_FOUND", f"no endpoint {method} {path}")
