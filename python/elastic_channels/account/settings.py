"""The account settings, once: where each comes from, and the connection they make.

Every command that reaches an account (the worker, ``run``, the monitor, ``setup``,
the dashboard) resolves the same table the same way: the flag, else the environment
variable (``.env`` fills the environment, the environment wins), else the
``--profile`` file, else the default. An empty value is unset wherever it is. The
account URL's host is derived from the account identifier
(:func:`~elastic_channels.account.identifier.parse_account`); ``host`` and ``port``
only override it.

    settings = account_settings(vars(args))        # flags; environment: os.environ
    settings.check("account", "user", "private_key", "database")   # one error, named
    settings.sdk_properties()      # the SDK client's properties
    settings.connector_params()    # snowflake-connector-python's arguments
    settings.url                   # https://myorg-myacct.snowflakecomputing.com
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import PIPE_NAME
from ..setting import Setting, SettingError
from .identifier import AccountIdentifier, parse_account
from .private_key import PrivateKey
from .profile import Profile, load_profile

__all__ = [
    "ACCOUNT_SETTINGS",
    "DEFAULT_SCHEMA",
    "AccountSettings",
    "account_settings",
]

DEFAULT_SCHEMA = "PUBLIC"
DEFAULT_PORT = 443

_GROUP = "where to send it"
S = Setting
ACCOUNT_SETTINGS: tuple[Setting, ...] = (
    S("profile", "--profile", "SDK profile JSON of connection properties (account, user, "
      "private_key, ...), or the info file an emulator writes; flags and variables win "
      "over what it says", env="SNOWFLAKE_PROFILE", group=_GROUP),
    S("account", "--account", "account identifier: ORGNAME-ACCOUNTNAME, or a legacy "
      "account locator with its region and cloud (xy12345.us-east-2.aws); the account "
      "URL is derived from it", env="SNOWFLAKE_ACCOUNT", group=_GROUP),
    S("user", "--user", "the user, with key-pair authentication", env="SNOWFLAKE_USER",
      group=_GROUP),
    S("role", "--role", "its role", env="SNOWFLAKE_ROLE", group=_GROUP,
      default_text="the user's default role"),
    S("private_key_file", "--private-key-file", "the user's private key, a PKCS#8 PEM "
      "file (or the PEM text in SNOWFLAKE_PRIVATE_KEY)", env="SNOWFLAKE_PRIVATE_KEY_FILE",
      group=_GROUP),
    S("private_key", None, "the user's private key as PEM text",
      env="SNOWFLAKE_PRIVATE_KEY", group=_GROUP),
    S("private_key_pwd", None, "passphrase of an encrypted private key",
      env="SNOWFLAKE_PRIVATE_KEY_PWD", group=_GROUP),
    S("warehouse", "--warehouse", "warehouse for SQL", env="SNOWFLAKE_WAREHOUSE",
      group=_GROUP, default_text="the user's default warehouse"),
    S("database", "--database", "target database", env="SNOWFLAKE_DATABASE", group=_GROUP),
    S("schema", "--schema", "target schema", env="SNOWFLAKE_SCHEMA", group=_GROUP,
      default_text=DEFAULT_SCHEMA),
    S("pipe", "--pipe", "target pipe", env="SNOWFLAKE_PIPE", group=_GROUP,
      default_text=f"{PIPE_NAME}, or the emulator's"),
    S("host", "--host", "the account URL's host, only to override the one derived from "
      "the account", env="SNOWFLAKE_HOST", group=_GROUP,
      default_text="ACCOUNT.snowflakecomputing.com"),
    S("port", "--port", "the account URL's port, only to override 443", int,
      env="SNOWFLAKE_PORT", group=_GROUP, default_text=str(DEFAULT_PORT)),
)  # fmt: skip
BY_NAME = {s.name: s for s in ACCOUNT_SETTINGS}

#: Profile keys this table resolves; the profile's other properties go to the SDK as
#: they are. ``url`` and ``scheme`` are the SDK's spelling of the account URL.
_RESOLVED = frozenset(BY_NAME) | {"url", "scheme"}

#: What ``check`` can ask for, in the order it checks.
NEEDS = ("account", "user", "private_key", "database")


@dataclass(frozen=True)
class AccountSettings:
    """The connection settings, resolved: see :func:`account_settings`."""

    account: AccountIdentifier | None = None
    user: str | None = None
    role: str | None = None
    warehouse: str | None = None
    database: str | None = None
    schema: str = DEFAULT_SCHEMA
    pipe: str = PIPE_NAME
    #: The account URL's host: the override, else the one derived from the account.
    host: str | None = None
    #: Only when overridden (443 otherwise).
    port: int | None = None
    key: PrivateKey | None = None
    private_key_pwd: str | None = None
    profile: Profile | None = None
    #: An emulator info file's CA certificate, to trust instead of the system's.
    ssl_cert_file: str | None = None
    #: The profile's other SDK client properties, passed on untouched.
    extra_properties: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The account URL (``https://HOST[:PORT]``)."""
        if self.host is None:
            raise SettingError(_MISSING["account"])
        port = f":{self.port}" if self.port and self.port != DEFAULT_PORT else ""
        return f"https://{self.host}{port}"

    def check(self, *needs: str) -> AccountSettings:
        """Self, if every setting in ``needs`` (of :data:`NEEDS`) is there and usable;
        else one :class:`SettingError` naming the first that is not, in the order of
        :data:`NEEDS`. A key is read to check it."""
        unknown = set(needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"cannot check {sorted(unknown)}")
        have = {
            "account": self.account,
            "user": self.user,
            "private_key": self.key,
            "database": self.database,
        }
        for need in NEEDS:
            if need in needs and not have[need]:
                raise SettingError(_MISSING[need])
        if "private_key" in needs and self.key is not None:
            self.key.read()
        return self

    def sdk_properties(self) -> dict[str, Any]:
        """The SDK client's properties: the profile's own, then the connection as this
        table resolved it (``account``, ``user``, ``role``, ``private_key`` as PEM text,
        ``host``, ``port`` when overridden, ``scheme``)."""
        self.check("account")
        assert self.account is not None
        props = dict(self.extra_properties)
        props["account"] = self.account.name
        for key in ("user", "role"):
            if getattr(self, key):
                props[key] = getattr(self, key)
        if self.key is not None:
            props["private_key"] = self.key.read()
        props["host"] = self.host
        if self.port is not None:
            props["port"] = self.port
        props["scheme"] = "https"
        return props

    def connector_params(self) -> dict[str, Any]:
        """snowflake-connector-python's ``connect()`` arguments: the account, its host
        (and port), the user with the key as DER, the role and warehouse if set."""
        self.check("account", "user", "private_key")
        assert self.account is not None and self.key is not None
        params: dict[str, Any] = {
            "account": self.account.name,
            "user": self.user,
            "private_key": self.key.der(self.private_key_pwd),
            "host": self.host,
        }
        if self.port is not None:
            params["port"] = self.port
        for key in ("role", "warehouse"):
            if getattr(self, key):
                params[key] = getattr(self, key)
        return params


_MISSING = {
    "account": "no account: give --account or SNOWFLAKE_ACCOUNT (e.g. myorg-myacct), or "
    "--profile (an SDK profile JSON)",
    "user": "no user: give --user or SNOWFLAKE_USER, or 'user' in the --profile",
    "private_key": "no private key: give --private-key-file or SNOWFLAKE_PRIVATE_KEY_FILE "
    "(or the PEM text in SNOWFLAKE_PRIVATE_KEY), or 'private_key' in the --profile",
    "database": "no database: give --database or SNOWFLAKE_DATABASE",
}


def account_settings(
    flags: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> AccountSettings:
    """The account settings: for each, the flag in ``flags`` (by name; None or empty is
    not given), else its variable in ``environ`` (default ``os.environ``), else the
    ``--profile`` file's, else the default. Bad values are a :class:`SettingError`
    naming where they came from; missing ones are for :meth:`AccountSettings.check`."""
    source = _Sources(flags or {}, os.environ if environ is None else environ)
    account, where = source.pick("account")
    ident = parse_account(str(account), where) if account is not None else None
    host, host_where = source.pick("host")
    port, where = source.pick("port")
    return AccountSettings(
        account=ident,
        user=_text(source.pick("user")[0]),
        role=_text(source.pick("role")[0]),
        warehouse=_text(source.pick("warehouse")[0]),
        database=_text(source.pick("database")[0]),
        schema=_text(source.pick("schema")[0]) or DEFAULT_SCHEMA,
        pipe=_text(source.pick("pipe")[0]) or PIPE_NAME,
        host=_host(host, host_where) if host is not None else (ident.host if ident else None),
        port=_port(port, where) if port is not None else None,
        key=source.private_key(),
        private_key_pwd=_text(source.pick("private_key_pwd")[0]),
        profile=source.profile,
        ssl_cert_file=_text(source.profile.get("ssl_cert_file")) if source.profile else None,
        extra_properties=source.extra_properties(),
    )


class _Sources:
    """Flags, then environment, then the profile, for one setting at a time."""

    def __init__(self, flags: Mapping[str, Any], environ: Mapping[str, str]) -> None:
        self.flags, self.environ = flags, environ
        path, where = self.given("profile")
        self.profile = load_profile(str(path), where) if path is not None else None
        self.url = _url_parts(self.profile) if self.profile else {}

    def given(self, name: str) -> tuple[Any, str]:
        """The flag's value, else the variable's: (value or None, where it came from)."""
        s = BY_NAME[name]
        value = self.flags.get(name)
        if value is not None and str(value).strip():
            return value, str(s.flag)
        return s.from_env(self.environ), str(s.env)

    def pick(self, name: str) -> tuple[Any, str]:
        value, where = self.given(name)
        if value is not None or self.profile is None:
            return value, where
        found = self.profile.get(name)
        if found is None:
            found = self.url.get(name)
        return found, f"'{name}' in {self.profile.path}"

    def private_key(self) -> PrivateKey | None:
        """A key file's flag, else its variable, else PEM text in SNOWFLAKE_PRIVATE_KEY,
        else the profile's key file, else its key."""
        path, where = self.given("private_key_file")
        if path is not None:
            return PrivateKey(where, path=str(path))
        text, where = self.given("private_key")
        if text is not None:
            return PrivateKey(where, text=str(text))
        if self.profile is not None:
            if self.profile.get("private_key_file") is not None:
                path = self.profile.get("private_key_file")
                return PrivateKey(f"'private_key_file' in {self.profile.path}", path=path)
            if self.profile.get("private_key") is not None:
                text = self.profile.get("private_key")
                return PrivateKey(f"'private_key' in {self.profile.path}", text=str(text))
        return None

    def extra_properties(self) -> dict[str, Any]:
        if self.profile is None:
            return {}
        return {k: v for k, v in self.profile.properties.items() if k not in _RESOLVED}


def _url_parts(profile: Profile) -> dict[str, Any]:
    """``host`` and ``port`` of an SDK profile's ``url`` (the SDK's account URL), as the
    profile's host and port when it names none itself."""
    url = profile.get("url")
    if not url:
        return {}
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(str(url) if "://" in str(url) else f"https://{url}")
        port = parts.port
    except ValueError:
        raise SettingError(f"'url' in {profile.path} is not a URL: {url!r}") from None
    found: dict[str, Any] = {"host": parts.hostname} if parts.hostname else {}
    if port is not None:
        found["port"] = port
    return found


def _text(value: Any) -> str | None:
    return None if value is None or not str(value).strip() else str(value).strip()


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")


def _host(value: Any, where: str) -> str:
    """A host name or IP address, and nothing else: a scheme, user, path, query or port
    in it would make another URL than the one meant (the port is its own setting)."""
    text = str(value).strip()
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        address = None
    if address is not None:
        return f"[{address}]" if address.version == 6 else str(address)
    name = text.removesuffix(".")
    if 0 < len(name) <= 253 and all(_HOST_LABEL.fullmatch(x) for x in name.split(".")):
        return text
    raise SettingError(
        f"{where} must be a host name or IP address alone (no scheme, path, query or port: "
        f"the port is {BY_NAME['port'].where}), got {text!r}"
    )


def _port(value: Any, where: str) -> int:
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise SettingError(f"{where} must be a port number, got {value!r}") from None
    if not 0 < port < 65536:
        raise SettingError(f"{where} must be a port number (1-65535), got {port}")
    return port
