"""setup's statements through snowflake-connector-python (``setup --via connector``).

One connector session, its arguments the account settings'
(:meth:`..account.AccountSettings.connector_params`). The SQL API (:mod:`.sql_api`) is the
default and needs no driver; the connector also runs what the SQL API refuses (``USE``,
``ALTER SESSION``, ``BEGIN``/``COMMIT``, ``PUT``/``GET``), which a ``--sql-file`` may hold.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager

from ..account import AccountSettings
from .ddl import SetupError
from .execute import RunOne, StatementFailed
from .sql_api import preflight

__all__ = ["connector_session"]


@contextmanager
def connector_session(acct: AccountSettings) -> Iterator[RunOne]:
    """Run statements on one cursor of one connection, closed afterwards."""
    params = acct.connector_params()
    try:
        connector = importlib.import_module("snowflake.connector")
    except ImportError as e:
        raise SetupError(
            "--via connector needs snowflake-connector-python: pip install '.[setup]' in a "
            "checkout (or leave out --via: the SQL API needs no driver)"
        ) from e
    preflight(acct)  # seconds, where the connector's login would wait minutes
    errors = getattr(connector, "Error", Exception)
    try:
        conn = connector.connect(**params)
    except errors as e:
        raise SetupError(f"cannot connect to account {params.get('account')!r}: {e}") from e
    try:
        cur = conn.cursor()

        def run_one(stmt: str) -> None:
            try:
                cur.execute(stmt)
            except errors as e:
                raise StatementFailed(str(e)) from e

        try:
            yield run_one
        finally:
            cur.close()
    finally:
        conn.close()
