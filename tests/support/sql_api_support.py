"""The SQL API (``POST /api/v2/statements``) of a real emulator process, as a client
sends it: shared by the tests that drive it."""

from __future__ import annotations

import json
from typing import Any

from emulator_support import EmulatorProcess

from elastic_channels.snowflake import ddl as setup


def sql_statement(
    emu: EmulatorProcess,
    statement: str,
    token: str | None = None,
    *,
    timeout: float = 30,
    query: str = "",
    request_timeout: float = 20,
    **fields: Any,
) -> tuple[int, dict]:
    """(status, JSON reply) of one statement sent with a key-pair JWT (``token``, or a
    fresh one for the emulator's user); ``timeout`` and ``fields`` go in the body,
    ``query`` after the path."""
    headers = {
        "Authorization": f"Bearer {token or emu.keypair_jwt()}",
        "X-Snowflake-Authorization-Token-Type": "KEYPAIR_JWT",
        "Content-Type": "application/json",
    }
    body = json.dumps({"statement": statement, "timeout": timeout, **fields}).encode()
    status, _, reply = emu.request(
        "POST", "/api/v2/statements" + query, body, headers, timeout=request_timeout
    )
    return status, json.loads(reply)


def run_setup_sql(emu: EmulatorProcess) -> None:
    """``setup``'s statements through the SQL API: each must answer 200."""
    for stmt in setup.statements("EMULATOR_DB", "PUBLIC"):
        status, reply = sql_statement(emu, stmt)
        assert status == 200, (stmt.splitlines()[0], reply)
