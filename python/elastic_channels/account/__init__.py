"""A Snowflake account's connection settings, for every command that reaches one.

- ``identifier``: an account identifier and the account URL's host derived from it,
  as Snowflake documents them;
- ``settings``: the table of account settings and their one resolution (flags, the
  environment and ``.env``, the ``--profile`` file, defaults; empty means unset), and
  the connection they make for the SDK, the SQL API and snowflake-connector-python;
- ``profile``: a ``--profile`` file read (an SDK profile or an emulator's info file);
- ``private_key``: the user's key, from whichever setting named it.
"""

from .identifier import DOMAIN, AccountIdentifier, parse_account
from .settings import ACCOUNT_SETTINGS, DEFAULT_SCHEMA, AccountSettings, account_settings

__all__ = [
    "ACCOUNT_SETTINGS",
    "DEFAULT_SCHEMA",
    "DOMAIN",
    "AccountIdentifier",
    "AccountSettings",
    "account_settings",
    "parse_account",
]
