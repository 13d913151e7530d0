"""Which target the monitor writes to, and the SQL API client for it.

- An emulator: its info JSON (``--profile``, what ``elastic-channels run`` and
  ``emulator serve --info-file`` write, and what ``Emulator.info()`` returns to a
  monitor in the emulator's own process: its URL, CA, user and key file). Over HTTPS
  either way: no emulator-only shortcut past the API and its authentication.
- A Snowflake account: the account settings as every command resolves them
  (:func:`..account.account_settings`: flags, then ``SNOWFLAKE_*`` variables and
  ``.env``, then an SDK profile JSON): ``SNOWFLAKE_ACCOUNT``, ``SNOWFLAKE_USER``, a key
  (``SNOWFLAKE_PRIVATE_KEY_FILE`` or ``SNOWFLAKE_PRIVATE_KEY``, with
  ``SNOWFLAKE_PRIVATE_KEY_PWD`` if encrypted), ``SNOWFLAKE_DATABASE``, and optionally
  ``SNOWFLAKE_SCHEMA`` (PUBLIC), ``SNOWFLAKE_ROLE``, ``SNOWFLAKE_WAREHOUSE``. The SQL API
  is at the account URL derived from the account (``SNOWFLAKE_HOST``/``_PORT`` only
  override it).

Either way the requests are the SQL API's, with a key-pair JWT.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..account import AccountSettings, account_settings, reach
from ..setting import SettingError
from .keypair import KeyPairError, token_factory
from .sink import SqlMetricsSink
from .sql_client import SqlApiClient, http_transport

__all__ = ["TargetError", "account_sink", "emulator_sink", "profile_sink", "sink_from"]


class TargetError(ValueError):
    """The target is not configured well enough to connect; the message says what to set."""


def profile_sink(path: Path) -> SqlMetricsSink:
    """A running emulator, from its info JSON."""
    try:
        info = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise TargetError(f"--profile {path}: cannot read it as JSON: {e}") from None
    return emulator_sink(info, f"--profile {path}")


def emulator_sink(info: Mapping[str, Any], what: str = "the emulator") -> SqlMetricsSink:
    """A running emulator, from its info (``Emulator.info()``, or its info file read):
    the SQL API at its URL, its CA trusted, a key-pair JWT of its user's key."""
    if not isinstance(info, Mapping):
        raise TargetError(f"{what}: expected a JSON object")
    props = info.get("properties") or {}
    missing = [k for k in ("url", "private_key_file") if not info.get(k)]
    missing += [k for k in ("account", "user") if not props.get(k)]
    if missing:
        raise TargetError(f"{what} is not an emulator info file: no {missing}")
    try:
        pem = Path(info["private_key_file"]).read_bytes()
        token = token_factory(props["account"], props["user"], pem)
    except (OSError, KeyPairError) as e:
        raise TargetError(f"{what}: the user's key: {e}") from None
    transport = http_transport(info["url"], token, cafile=info.get("ssl_cert_file"))
    client = SqlApiClient(transport, database=info.get("database"), schema=info.get("schema"))
    return SqlMetricsSink(client)


def account_sink(
    settings: AccountSettings | Mapping[str, Any], *, preflight: bool = False
) -> SqlMetricsSink:
    """A Snowflake account: the SQL API at its account URL, a key-pair JWT of its user's
    key. ``settings`` are resolved account settings, or values named like the
    SNOWFLAKE_* variables (lower case, without the prefix: account, user,
    private_key_file, ...) taken as flags, with no environment. With ``preflight``, the
    account is first reached and logged in to (:func:`..account.reach.check_reachable`,
    seconds at most): a :class:`TargetError` of one line naming the host and what failed."""
    try:
        if not isinstance(settings, AccountSettings):
            settings = account_settings(settings, {})
        if settings.account is None:
            raise TargetError(
                "no target: give --profile (an emulator's info JSON), or an account with "
                "SNOWFLAKE_ACCOUNT and SNOWFLAKE_USER (or --account/--user)"
            )
        settings.check("account", "user", "private_key", "database")
        assert settings.key is not None and settings.user is not None
        pem = settings.key.pem()
    except SettingError as e:
        raise TargetError(str(e)) from None
    try:
        token = token_factory(settings.account.name, settings.user, pem, settings.private_key_pwd)
    except KeyPairError as e:
        raise TargetError(str(e)) from None
    if preflight:
        try:
            reach.check_reachable(settings)
        except (reach.Unreachable, SettingError) as e:
            raise TargetError(str(e)) from None
    client = SqlApiClient(
        http_transport(settings.url, token),
        database=settings.database,
        schema=settings.schema,
        warehouse=settings.warehouse,
        role=settings.role,
    )
    return SqlMetricsSink(client)


def sink_from(
    profile: str | None,
    flags: Mapping[str, Any],
    environ: Mapping[str, str] = os.environ,
    *,
    preflight: bool = False,
) -> SqlMetricsSink:
    """The sink the command line and environment describe: ``profile`` is an emulator's
    info JSON, or an SDK profile (account, user, private_key, role, host) completed by
    flags and SNOWFLAKE_* variables; flags win over the variables, the variables over
    the profile. ``preflight``: an account is reached first (see :func:`account_sink`)."""
    try:
        settings = account_settings({**flags, "profile": profile}, environ)
    except SettingError as e:
        raise TargetError(str(e)) from None
    info = settings.profile.emulator_info if settings.profile else None
    if info is not None and "url" in info:
        return emulator_sink(info, f"--profile {settings.profile.path}")  # type: ignore[union-attr]
    return account_sink(settings, preflight=preflight)
