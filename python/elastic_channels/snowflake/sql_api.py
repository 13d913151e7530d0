"""setup's statements through Snowflake's SQL API: no driver, the account URL, a key-pair JWT.

The same client the monitor writes with (:class:`~..monitor.sql_client.SqlApiClient` over
:func:`~..monitor.sql_client.http_transport`, a JWT from
:func:`~..monitor.keypair.token_factory`), on the account settings as every command
resolves them (:func:`..account.account_settings`): ``POST /api/v2/statements`` at
:attr:`~..account.AccountSettings.url`, one statement per request (the SQL API's default
``MULTI_STATEMENT_COUNT`` of 1). A statement still running when the server stops waiting
(HTTP 202) is polled at ``GET /api/v2/statements/{handle}`` until it is done, for at most
``timeout_s`` (also the request's ``timeout``: the server cancels it then) and 30 s more.

The request body carries ``role`` and ``warehouse`` when they are set (the user's
defaults otherwise), never ``database`` or ``schema``: every statement names its objects
in full, and the database may not exist before the first one. Those fields are
case-sensitive, matched against the names ``SHOW`` returns, so a name given plain
(``securityadmin``) is sent as Snowflake resolves an unquoted identifier (upper case),
and one given in double quotes (``"Mixed"``) as it is inside them.

Against an emulator (``--profile`` its info file) the same requests go to its URL, its
CA trusted (``ssl_cert_file``); otherwise the system's CAs (``SSL_CERT_FILE`` honoured).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from contextlib import contextmanager

from ..account import AccountSettings, reach
from ..monitor.keypair import KeyPairError, token_factory
from ..monitor.sql_client import SqlApiClient, SqlError, http_transport
from .ddl import SetupError
from .execute import RunOne, StatementFailed

__all__ = ["DEFAULT_TIMEOUT_S", "context_name", "preflight", "sql_api_session"]

#: How long one statement may run, in seconds: creating a database or a table takes a
#: few; a warehouse that must resume first, a little more.
DEFAULT_TIMEOUT_S = 300
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def context_name(value: str | None) -> str | None:
    """A role or warehouse name as the SQL API's body takes it (case-sensitive): a plain
    name upper-cased, a double-quoted one as written inside the quotes."""
    if value is None:
        return None
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('""', '"')
    return value.upper() if _PLAIN.fullmatch(value) else value


@contextmanager
def sql_api_session(acct: AccountSettings, timeout_s: int = DEFAULT_TIMEOUT_S) -> Iterator[RunOne]:
    """Run statements one per request at the account URL of ``acct`` (checked: account,
    user, key), with a key-pair JWT of its user's key."""
    acct.check("account", "user", "private_key")
    assert acct.account is not None and acct.user is not None and acct.key is not None
    if importlib.util.find_spec("jwt") is None or importlib.util.find_spec("cryptography") is None:
        raise SetupError(
            "setup's key-pair JWT needs PyJWT and cryptography: pip install '.[setup]' in a "
            "checkout (or use --print and run the SQL yourself)"
        )
    try:
        token = token_factory(acct.account.name, acct.user, acct.key.pem(), acct.private_key_pwd)
    except KeyPairError as e:
        raise SetupError(f"{e} ({acct.key.where})") from None
    preflight(acct)
    client = SqlApiClient(
        http_transport(acct.url, token, cafile=acct.ssl_cert_file),
        role=context_name(acct.role),
        warehouse=context_name(acct.warehouse),
        timeout_s=timeout_s,
    )

    def run_one(stmt: str) -> None:
        try:
            client.execute(stmt)
        except SqlError as e:
            raise StatementFailed(_without_statement(str(e), stmt)) from None

    yield run_one


def preflight(acct: AccountSettings) -> None:
    """The account reached and logged in to (:func:`..account.reach.check_reachable`, a
    few seconds at most), else a :class:`SetupError` of one line naming the host and
    what failed: before the first statement, which would otherwise wait minutes."""
    try:
        reach.check_reachable(acct)
    except reach.Unreachable as e:
        raise SetupError(str(e)) from None


def _without_statement(message: str, stmt: str) -> str:
    """The client's message without the statement it quotes at its end (the error
    names the statement already)."""
    quoted = f" [{stmt[:80]}]"
    return message[: -len(quoted)] if message.endswith(quoted) else message
