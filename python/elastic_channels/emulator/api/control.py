"""The control endpoints (``/_emulator/...``), for the CLI, tests and benchmarks.

All but ``health`` need the control secret (``access.Auth.CONTROL``)::

    GET    /_emulator/health          {"ok": true}
    GET    /_emulator/stats           counters, channels, active faults, landing backlog
    GET    /_emulator/faults          active faults
    POST   /_emulator/faults          add a fault (or a list): {"endpoint": "rows",
                                      "action": "status", "status": 503, "count": 3}
    DELETE /_emulator/faults          clear all faults
    POST   /_emulator/query           {"sql": "SELECT ..."} -> rows as JSON lines
                                      (one read-only statement)
    POST   /_emulator/wait-landed     {"timeout_s": 30} -> {"landed": bool}
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from ..http.access import Auth
from ..http.errors import ApiError, Reply
from ..http.faults import FaultTable
from ..http.routes import Request, Route
from ..storage.store import StoreError
from .json_body import BadJson, decode_json

__all__ = ["control_routes"]

_JSON = ("application/json",)


def _args(req: Request) -> Any:
    try:
        return decode_json(req.body) if req.body.strip() else {}
    except BadJson as e:
        raise ApiError(400, "ERR_CONTROL", str(e)) from None


class Controlled(Protocol):
    """What the control endpoints need of the emulator they control (``Emulator``)."""

    faults: FaultTable

    def stats_snapshot(self) -> dict[str, Any]: ...

    def query_json_lines(self, sql: str) -> list[bytes]: ...

    def wait_landed(self, timeout_s: float = 30.0) -> bool: ...


def control_routes(emu: Controlled) -> list[Route]:
    def health(req: Request) -> Reply:
        return Reply(200, b'{"ok":true}')

    def stats(req: Request) -> Reply:
        return Reply(200, msgspec.json.encode(emu.stats_snapshot()))

    def faults(req: Request) -> Reply:
        try:
            if req.route.method == "POST":
                args = _args(req)
                for spec in args if isinstance(args, list) else [args]:
                    if not isinstance(spec, dict):
                        raise ValueError("a fault is a JSON object")
                    emu.faults.add_spec(spec)
            elif req.route.method == "DELETE":
                emu.faults.clear()
        except (ValueError, TypeError) as e:
            raise ApiError(400, "ERR_CONTROL", str(e)) from None
        return Reply(200, msgspec.json.encode(emu.faults.snapshot()))

    def query(req: Request) -> Reply:
        args = _args(req)
        if not isinstance(args, dict) or not isinstance(args.get("sql"), str):
            raise ApiError(400, "ERR_CONTROL", 'send {"sql": "SELECT ..."}')
        try:
            lines = emu.query_json_lines(args["sql"])
        except StoreError as e:
            raise ApiError(400, "ERR_CONTROL", str(e)) from None
        return Reply(200, b"".join(lines), "application/x-ndjson")

    def wait_landed(req: Request) -> Reply:
        args = _args(req)
        try:
            timeout = float(args.get("timeout_s", 30)) if isinstance(args, dict) else 30.0
        except (TypeError, ValueError):
            raise ApiError(400, "ERR_CONTROL", "timeout_s must be a number") from None
        landed = emu.wait_landed(max(0.0, min(timeout, 600.0)))
        return Reply(200, msgspec.json.encode({"landed": landed}))

    base = r"/_emulator/"
    return [
        Route("GET", base + "health", "control_health", Auth.NONE, health, faultable=False),
        Route("GET", base + "stats", "control_stats", Auth.CONTROL, stats, faultable=False),
        *(
            Route(
                m, base + "faults", "control_faults", Auth.CONTROL, faults, _JSON, faultable=False
            )
            for m in ("GET", "POST", "DELETE")
        ),
        Route("POST", base + "query", "control_query", Auth.CONTROL, query, _JSON, faultable=False),
        Route(
            "POST",
            base + "wait-landed",
            "control_wait_landed",
            Auth.CONTROL,
            wait_landed,
            _JSON,
            faultable=False,
        ),
    ]
