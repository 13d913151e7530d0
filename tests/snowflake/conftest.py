"""setup's tests share a stand-in for the SQL API's HTTPS (``fake_sql_api``) and an
environment without the developer's ``SNOWFLAKE_*`` variables (``clean_env``)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from elastic_channels.account import reach
from elastic_channels.snowflake import sql_api


class FakeSqlApi:
    """Snowflake's SQL API as setup uses it, in place of HTTPS to the account URL.

    Records every request (method, path, body) and the JWT sent with it, and answers a
    POST with a result (200), an error (422) for a statement containing ``fail_on``, or,
    with ``running`` > 0, "still running" (202 and a handle) until its status URL has
    been asked ``running`` times."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.tokens: list[str] = []
        self.base_url: str | None = None
        self.cafile: str | None = None
        self.fail_on: str | None = None
        self.running = 0
        self._pending: dict[str, int] = {}

    @property
    def statements(self) -> list[str]:
        return [body["statement"] for method, _, body in self.requests if method == "POST"]

    def transport(
        self, base_url: str, token: Callable[[], str], *, cafile: str | None = None, **_: Any
    ) -> Callable[[str, str, Any], tuple[int, Any]]:
        self.base_url, self.cafile = base_url, cafile

        def send(method: str, path: str, body: Any) -> tuple[int, Any]:
            self.tokens.append(token())
            self.requests.append((method, path, body))
            assert len(self.requests) < 1000, "unbounded: the client never gives up"
            if method == "POST":
                return self._submit(body["statement"])
            handle = path.split("?")[0].rsplit("/", 1)[-1]
            self._pending[handle] -= 1
            return self._running(handle) if self._pending[handle] > 0 else _done()

        return send

    def _submit(self, statement: str) -> tuple[int, Any]:
        if self.fail_on and self.fail_on in statement:
            return 422, {
                "code": "002003",
                "sqlState": "02000",
                "message": f"SQL compilation error:\nObject '{self.fail_on}' does not exist "
                "or not authorized.",
                "statementHandle": str(uuid.uuid4()),
            }
        if self.running:
            handle = str(uuid.uuid4())
            self._pending[handle] = self.running
            return self._running(handle)
        return _done()

    @staticmethod
    def _running(handle: str) -> tuple[int, Any]:
        return 202, {
            "code": "333334",
            "message": "Asynchronous execution in progress. Use provided query id to perform "
            "query monitoring and management.",
            "statementHandle": handle,
            "statementStatusUrl": f"/api/v2/statements/{handle}",
        }


def _done() -> tuple[int, Any]:
    return 200, {
        "resultSetMetaData": {
            "numRows": 1,
            "format": "jsonv2",
            "rowType": [{"name": "status", "type": "TEXT", "nullable": True}],
            "partitionInfo": [{"rowCount": 1}],
        },
        "data": [["Statement executed successfully."]],
        "code": "090001",
        "statementHandle": str(uuid.uuid4()),
        "message": "Statement executed successfully.",
    }


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No SNOWFLAKE_* variable of the developer's reaches the command."""
    for name in list(os.environ):
        if name.startswith("SNOWFLAKE_"):
            monkeypatch.delenv(name)
    return monkeypatch


@pytest.fixture
def fake_sql_api(clean_env: pytest.MonkeyPatch) -> FakeSqlApi:
    """setup's SQL API requests go to a :class:`FakeSqlApi` instead of HTTPS."""
    fake = FakeSqlApi()
    clean_env.setattr(sql_api, "http_transport", fake.transport)
    # it stands in for the account too: the preflight's own tests are tests/account/
    clean_env.setattr(reach, "check_reachable", lambda settings, **_: None)
    return fake
