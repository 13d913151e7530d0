"""Which target the monitor writes to, and the SQL API client for it.

- An emulator: its info JSON (``--profile``, what ``elastic-channels run`` and
  ``emulator serve --info-file`` write, and what ``Emulator.info()`` returns to a
  monitor in the emulator's own process: its URL, CA, user and key file). Over HTTPS
  either way: no emulator-only shortcut past the API and its authentication.
- A Snowflake account: an SDK profile JSON, and/or ``SNOWFLAKE_ACCOUNT``, ``SNOWFLAKE_USER``, a key
  (``SNOWFLAKE_PRIVATE_KEY_FILE`` or ``SNOWFLAKE_PRIVATE_KEY``, with
  ``SNOWFLAKE_PRIVATE_KEY_PWD`` if encrypted), and ``SNOWFLAKE_DATABASE``,
  ``SNOWFLAKE_SCHEMA``, ``SNOWFLAKE_ROLE``, ``SNOWFLAKE_WAREHOUSE`` (or the flags).

Either way the requests are the SQL API's, with a key-pair JWT.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


def account_sink(settings: Mapping[str, Any]) -> SqlMetricsSink:
    """A Snowflake account, from settings named like the SNOWFLAKE_* variables
    (lower case, without the prefix: account, user, private_key_file, ...)."""
    account, user = settings.get("account"), settings.get("user")
    if not account or not user:
        raise TargetError(
            "no target: give --profile (an emulator's info JSON), or an account with "
            "SNOWFLAKE_ACCOUNT and SNOWFLAKE_USER (or --account/--user)"
        )
    pem: bytes | None = None
    if settings.get("private_key_file"):
        try:
            pem = Path(settings["private_key_file"]).read_bytes()
        except OSError as e:
            raise TargetError(f"SNOWFLAKE_PRIVATE_KEY_FILE: {e}") from None
    elif settings.get("private_key"):
        text = str(settings["private_key"])
        if "-----BEGIN" not in text:  # an SDK profile holds the bare base64 body
            text = f"-----BEGIN PRIVATE KEY-----\n{text}\n-----END PRIVATE KEY-----\n"
        pem = text.encode()
    if pem is None:
        raise TargetError("no key: set SNOWFLAKE_PRIVATE_KEY_FILE (or SNOWFLAKE_PRIVATE_KEY)")
    if not settings.get("database") or not settings.get("schema"):
        raise TargetError("set SNOWFLAKE_DATABASE and SNOWFLAKE_SCHEMA (or the flags)")
    try:
        token = token_factory(account, user, pem, settings.get("private_key_pwd"))
    except KeyPairError as e:
        raise TargetError(str(e)) from None
    host = settings.get("host") or f"{account}.snowflakecomputing.com"
    client = SqlApiClient(
        http_transport(f"https://{host}", token),
        database=settings["database"],
        schema=settings["schema"],
        warehouse=settings.get("warehouse"),
        role=settings.get("role"),
    )
    return SqlMetricsSink(client)


ENV_SETTINGS = (
    "account", "user", "role", "warehouse", "database", "schema", "host",
    "private_key_file", "private_key", "private_key_pwd",
)  # fmt: skip


def sink_from(
    profile: str | None, flags: Mapping[str, Any], environ: Mapping[str, str] = os.environ
) -> SqlMetricsSink:
    """The sink the command line and environment describe: ``profile`` is an emulator's
    info JSON, or an SDK profile (account, user, private_key, role, host) completed by
    flags and SNOWFLAKE_* variables; flags win over the profile, the profile over the
    variables."""
    from_profile: dict[str, Any] = {}
    if profile:
        try:
            from_profile = json.loads(Path(profile).read_text())
        except (OSError, ValueError) as e:
            raise TargetError(f"--profile {profile}: cannot read it as JSON: {e}") from None
        if not isinstance(from_profile, dict):
            raise TargetError(f"--profile {profile}: expected a JSON object")
        if "url" in from_profile and "properties" in from_profile:
            return profile_sink(Path(profile))
    settings = {
        k: flags.get(k) or from_profile.get(k) or environ.get(f"SNOWFLAKE_{k.upper()}")
        for k in ENV_SETTINGS
    }
    return account_sink(settings)
