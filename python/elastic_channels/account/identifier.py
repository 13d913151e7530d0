"""An account identifier, and the account URL Snowflake derives from it.

As Snowflake documents it ("Account identifiers", "Connecting to your accounts"), the
URL is ``https://<account identifier>.snowflakecomputing.com``, where the identifier is

- the account's name prefixed by its organization, ``orgname-account_name`` (the
  preferred form): ``myorg-myacct`` -> ``myorg-myacct.snowflakecomputing.com``;
  ``orgname.account_name``, the form SQL commands take, names the same account;
- or a legacy account locator, with its region and cloud unless the account is in
  AWS US West (Oregon): ``xy12345.us-east-2.aws`` ->
  ``xy12345.us-east-2.aws.snowflakecomputing.com``;
- followed by ``.privatelink`` for the account's private connectivity URL.

An account name may hold underscores, which a host name cannot (the letter-digit-hyphen
rule of RFC 952, which Snowflake asks names to follow): the host has a hyphen for each,
as Snowflake's JDBC driver writes it by default (``allowUnderscoresInHost=false``) and
as its Okta URLs are written. A ``.privatelink`` host keeps them, as the JDBC driver's
documentation says PrivateLink accounts need.

Key-pair JWTs and the SDK's ``account`` property take the account without region or
cloud (``xy12345``, ``myorg-account_name``): :attr:`AccountIdentifier.name`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..setting import SettingError

__all__ = ["DOMAIN", "AccountIdentifier", "parse_account"]

DOMAIN = "snowflakecomputing.com"
_LABEL = re.compile(r"[A-Za-z0-9_-]+")
_CLOUDS = frozenset({"aws", "azure", "gcp"})
_PRIVATELINK = "privatelink"


@dataclass(frozen=True)
class AccountIdentifier:
    """An account identifier as given, and what it names."""

    #: As the setting gave it.
    given: str
    #: The account without region or cloud: ``myorg-myacct``, or the locator ``xy12345``.
    #: What a key-pair JWT's claims (upper-cased) and the SDK's ``account`` carry.
    name: str
    #: The account URL's host: ``myorg-myacct.snowflakecomputing.com``.
    host: str

    @property
    def url(self) -> str:
        return f"https://{self.host}"


def parse_account(text: str, setting: str = "SNOWFLAKE_ACCOUNT") -> AccountIdentifier:
    """The account ``text`` identifies, its name and its URL's host.

    ``text`` may also be the account URL or host (what a browser shows): the scheme and
    the ``.snowflakecomputing.com`` domain are dropped first. Anything else that is not
    an identifier is a :class:`~elastic_channels.setting.SettingError` naming ``setting``.
    """
    given = text.strip()
    ident = re.sub(r"^https?://", "", given, flags=re.IGNORECASE).rstrip("/")
    if ident.lower().endswith(f".{DOMAIN}"):
        ident = ident[: -len(DOMAIN) - 1]
    labels = ident.split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise SettingError(
            f"{setting} {given!r} is not an account identifier: give ORGNAME-ACCOUNTNAME "
            "(e.g. myorg-myacct), or a legacy account locator with its region and cloud "
            "(e.g. xy12345.us-east-2.aws)"
        )
    privatelink = len(labels) > 1 and labels[-1].lower() == _PRIVATELINK
    if privatelink:
        labels = labels[:-1]
    if _is_org_dot_account(labels):
        labels = [f"{labels[0]}-{labels[1]}"]
    name = labels[0]
    first = name if privatelink else name.replace("_", "-")
    host = ".".join([first, *labels[1:], *([_PRIVATELINK] if privatelink else [])])
    return AccountIdentifier(given, name, f"{host.lower()}.{DOMAIN}")


def _is_org_dot_account(labels: list[str]) -> bool:
    """``orgname.account_name``: organization and account names hold no hyphen, while
    every region id does (``us-east-2``, ``west-europe``, ``us-central1``)."""
    return (
        len(labels) == 2
        and "-" not in labels[0]
        and "-" not in labels[1]
        and labels[1].lower() not in _CLOUDS
    )
