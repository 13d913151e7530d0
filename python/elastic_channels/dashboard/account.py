"""A Snowflake account as a dashboard target, through Snowflake's SQL API.

The same client ``setup`` and the monitor use (:class:`~..monitor.sql_client.SqlApiClient`,
``POST /api/v2/statements`` at the account URL with a key-pair JWT): no driver. The
credentials are the ones ``run`` and ``setup`` take, resolved the same way
(:func:`..account.account_settings`): ``--profile`` (an SDK profile JSON, or an
emulator's info file: its URL and CA) and the ``SNOWFLAKE_*`` variables (account, user,
key, role, warehouse, database, schema). Each request names the database and schema
(as the SQL API's body takes them: case-sensitive, a plain name upper-cased), so the
pages' unqualified table names resolve there. The landing table must have
``ROW_TIMESTAMP = TRUE`` for the ingest-to-visible figures
(``METADATA$ROW_LAST_COMMIT_TIME``; ``setup`` creates it so). The account is reached and
logged in to first (:func:`..account.reach.check_reachable`): a page that cannot reach it
says so in seconds, naming the host and what failed.

Values travel as the SQL API's ``bindings`` (``{"1": {"type": "TEXT", "value": ...}}``),
never in the statement's text, which holds a ``?`` for each: Snowflake reads ``\\'``
in a string literal as a quote, so quoting by doubling ``'`` alone would let a run id
such as ``a\\' OR 1=1 --`` out of its literal.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ..account import account_settings, reach
from ..monitor import sql_client
from ..monitor.keypair import KeyPairError, token_factory
from ..setting import SettingError
from ..snowflake.sql_api import context_name
from .dialect import SNOWFLAKE
from .source import DataSource, NoData, QueryError, statement
from .statement import Statement

__all__ = ["TIMEOUT_S", "AccountSource"]

#: How long one of the pages' statements may run on the account, in seconds.
TIMEOUT_S = 120


def _client(
    profile: str | None, database: str | None, schema: str | None
) -> tuple[sql_client.SqlApiClient, str]:
    """The SQL API client for the account the settings name (``database``/``schema``:
    the flags, before SNOWFLAKE_* before the profile), and what it reads."""
    try:
        acct = account_settings({"profile": profile, "database": database, "schema": schema})
        if acct.account is None:
            raise QueryError("no account: give --profile or set SNOWFLAKE_ACCOUNT")
        acct.check("account", "user", "private_key", "database")
        url = acct.url
    except SettingError as e:
        raise QueryError(f"account settings: {e}") from None
    assert acct.account is not None and acct.user is not None and acct.key is not None
    if importlib.util.find_spec("jwt") is None or importlib.util.find_spec("cryptography") is None:
        raise QueryError(
            "reading an account needs PyJWT and cryptography (its key-pair JWT): "
            "pip install '.[setup]' in a checkout"
        )
    try:
        token = token_factory(acct.account.name, acct.user, acct.key.pem(), acct.private_key_pwd)
    except (KeyPairError, SettingError) as e:
        raise QueryError(f"{e} ({acct.key.where})") from None
    try:  # seconds, where the first query would wait minutes on a cut network
        reach.check_reachable(acct)
    except reach.Unreachable as e:
        raise QueryError(str(e)) from None
    client = sql_client.SqlApiClient(
        sql_client.http_transport(url, token, cafile=acct.ssl_cert_file),
        database=context_name(acct.database),
        schema=context_name(acct.schema),
        warehouse=context_name(acct.warehouse),
        role=context_name(acct.role),
        timeout_s=TIMEOUT_S,
    )
    return client, f"account {acct.account.name}, {acct.database}.{acct.schema}"


class AccountSource(DataSource):
    """The account's SQL API; requests are independent (a page's queries may overlap)."""

    dialect = SNOWFLAKE

    def __init__(
        self, profile: str | None, database: str | None = None, schema: str | None = None
    ) -> None:
        self._client, self._description = _client(profile, database, schema)

    def rows(self, query: Statement | str) -> list[dict[str, Any]]:
        stmt = statement(query)
        try:
            return self._client.execute(stmt.sql, stmt.params).dicts()
        except (sql_client.SqlError, TypeError) as e:
            msg = str(e)
            if "does not exist" in msg:
                raise NoData(msg) from None
            raise QueryError(f"query on {self.description} failed: {msg}") from None
