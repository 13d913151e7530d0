"""Who may call what: every route names one :class:`Auth` kind, checked from its headers
before any of its body is read.

* ``KEYPAIR``: a key-pair JWT of a registered user (account calls: hostname, token).
* ``SCOPED``: a scoped token this emulator issued from ``/oauth/token`` (every other
  Snowpipe call; a key-pair JWT is refused there, as the documented API requires).
* ``CONTROL``: the emulator's control secret (``DATA_DIR/control.secret``, mode 0600),
  sent as ``Authorization: Bearer <secret>``: only the user who can read the data dir
  can drive the control endpoints.
* ``NONE``: no credentials (only the control health check).
"""

from __future__ import annotations

import enum
import hmac
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from .auth import AuthError, ScopedTokens, UserKeys
from .errors import ApiError

__all__ = ["CONTROL_SECRET_FILE", "Auth", "Authenticator", "ensure_control_secret"]

CONTROL_SECRET_FILE = "control.secret"


class Auth(enum.Enum):
    NONE = "none"
    KEYPAIR = "keypair"
    SCOPED = "scoped"
    CONTROL = "control"


def ensure_control_secret(data_dir: Path) -> str:
    """The control secret of ``data_dir`` (made on first use, mode 0600)."""
    path = Path(data_dir) / CONTROL_SECRET_FILE
    if path.exists():
        os.chmod(path, 0o600)
        return path.read_text().strip()
    secret = secrets.token_urlsafe(32)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    os.replace(tmp, path)
    return secret


def _bearer(headers: Mapping[str, str]) -> str:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "390101", "missing Authorization: Bearer <token> header")
    return token.strip()


class Authenticator:
    """Checks a request's credentials for one :class:`Auth` kind; the user, or ApiError 401."""

    def __init__(self, users: UserKeys, tokens: ScopedTokens, control_secret: str) -> None:
        self.users, self.tokens = users, tokens
        self._control = control_secret.encode()

    def check(self, kind: Auth, headers: Mapping[str, str]) -> str | None:
        if kind is Auth.NONE:
            return None
        token = _bearer(headers)
        if kind is Auth.CONTROL:
            if not hmac.compare_digest(token.encode(), self._control):
                raise ApiError(
                    401, "390101", "control calls need the secret in DATA_DIR/control.secret"
                )
            return "control"
        token_type = headers.get("x-snowflake-authorization-token-type", "").upper()
        if kind is Auth.KEYPAIR:
            if token_type not in ("KEYPAIR_JWT", ""):
                raise ApiError(
                    401, "390101", f"token type {token_type!r} not accepted here; use KEYPAIR_JWT"
                )
            try:
                return self.users.verify(token)
            except AuthError as e:
                raise ApiError(401, "390144", f"JWT token is invalid: {e}") from None
        try:
            return self.tokens.verify(token)
        except AuthError as e:
            hint = (
                "; data calls need the scoped token from POST /oauth/token"
                if token_type == "KEYPAIR_JWT"
                else ""
            )
            raise ApiError(401, "390303", f"scoped token is invalid: {e}{hint}") from None
