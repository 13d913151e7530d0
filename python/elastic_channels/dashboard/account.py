"""A Snowflake account as a dashboard target, through snowflake-connector-python.

Credentials are the ones ``run`` and ``setup`` take, resolved the same way
(:func:`..account.account_settings`): ``--profile`` (an SDK profile JSON) and the
``SNOWFLAKE_*`` variables (account, user, key, role, warehouse, database, schema), the
account URL derived from the account. The landing table must have
``ROW_TIMESTAMP = TRUE`` for the ingest-to-visible figures
(``METADATA$ROW_LAST_COMMIT_TIME``).

Values are bound on the server (``paramstyle="qmark"``: the connector sends them as
bindings, as the SQL API's ``bindings`` do), never quoted into the text: Snowflake reads
``\\'`` in a string literal as a quote, so doubling ``'`` alone would let a run id such
as ``a\\' OR 1=1 --`` out of its literal.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from ..account import account_settings
from ..setting import SettingError
from .dialect import SNOWFLAKE
from .source import DataSource, NoData, QueryError, statement
from .statement import Statement

__all__ = ["AccountSource"]


def _params(
    profile: str | None, database: str | None = None, schema: str | None = None
) -> dict[str, Any]:
    """Connector arguments, from the account settings as every command resolves them:
    ``database``/``schema`` (the flags) before SNOWFLAKE_* before the profile."""
    try:
        acct = account_settings({"profile": profile, "database": database, "schema": schema})
        if acct.account is None:
            raise QueryError("no account: give --profile or set SNOWFLAKE_ACCOUNT")
        params = acct.check("account", "user", "private_key", "database").connector_params()
    except SettingError as e:
        raise QueryError(f"account settings: {e}") from None
    params.update(database=acct.database, schema=acct.schema, client_session_keep_alive=True)
    params["paramstyle"] = "qmark"  # ``?`` bound by the server, not formatted in
    return params


class AccountSource(DataSource):
    """One connector session, shared by the app's reruns (queries are serialised)."""

    dialect = SNOWFLAKE

    def __init__(
        self, profile: str | None, database: str | None = None, schema: str | None = None
    ) -> None:
        self._params = _params(profile, database, schema)
        self._lock = threading.Lock()
        self._conn: Any = None
        self._description = (
            f"account {self._params['account']}, "
            f"{self._params['database']}.{self._params['schema']}"
        )

    def _connect(self) -> Any:
        try:
            connector = importlib.import_module("snowflake.connector")
        except ImportError:
            raise QueryError(
                "reading an account needs snowflake-connector-python: pip install '.[setup]'"
            ) from None
        try:
            self._dict_cursor = connector.DictCursor
            return connector.connect(**self._params)
        except Exception as e:
            raise QueryError(f"cannot connect to {self._params['account']}: {e}") from None

    def rows(self, query: Statement | str) -> list[dict[str, Any]]:
        stmt = statement(query)
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            try:
                cur = self._conn.cursor(self._dict_cursor)
                try:
                    cur.execute(stmt.sql, list(stmt.params) or None)
                    return list(cur.fetchall())
                finally:
                    cur.close()
            except Exception as e:
                msg = str(e)
                if "does not exist" in msg:
                    raise NoData(msg) from None
                raise QueryError(f"query on {self.description} failed: {msg}") from None
