"""The account calls of a Snowpipe Streaming client: the account's hostname, a scoped
token for it, and telemetry (key-pair JWT; answered as SDK 1.9.1 wants them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from ..http.errors import ApiError, Reply
from ..http.routes import Request

__all__ = ["AccountCalls", "Target"]


@dataclass(frozen=True)
class Target:
    account: str
    database: str
    schema: str
    pipe: str
    #: Names this server answers to; the first is the default. An account's hostname
    #: reply names the host the client asked for: the Host header, when it is one of these.
    hostnames: tuple[str, ...] = ("localhost",)

    def hostname_for(self, host_header: str | None) -> str:
        host = (host_header or "").strip().lower()
        if host.startswith("["):
            host = host[1:].partition("]")[0]
        else:
            host = host.rpartition(":")[0] if host.count(":") == 1 else host
        return host if host in self.hostnames else self.hostnames[0]


class AccountCalls:
    def __init__(self, target: Target, tokens: Any) -> None:
        self.target, self._tokens = target, tokens

    def hostname(self, req: Request) -> Reply:
        # SDK 1.9.1 wants the bare hostname as text (the docs show {"hostname": ...}).
        host = self.target.hostname_for(req.headers.get("host"))
        return Reply(200, host.encode(), "text/plain")

    def token(self, req: Request) -> Reply:
        form = parse_qs(req.body.decode("utf-8", "replace"))
        grant = (form.get("grant_type") or [""])[0]
        scope = (form.get("scope") or [""])[0]
        if grant != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            raise ApiError(400, "ERR_INVALID_GRANT", f"grant_type {grant!r} is not jwt-bearer")
        if scope.lower() not in self.target.hostnames:
            raise ApiError(
                400,
                "ERR_INVALID_SCOPE",
                f"scope {scope!r} is not one of this account's hostnames "
                f"{', '.join(self.target.hostnames)}",
            )
        # SDK 1.9.1 wants the token as text (the docs show {"token": ...}).
        return Reply(200, self._tokens.issue(req.user, scope).encode(), "text/plain")

    def telemetry(self, req: Request) -> Reply:
        # The SDK's telemetry client requires "data" (a string), as Snowflake sends it.
        return Reply(200, b'{"data":"Log Received","success":true}')
