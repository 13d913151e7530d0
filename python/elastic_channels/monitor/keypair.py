"""Key-pair JWTs for Snowflake's REST APIs (and the emulator, which checks them alike).

``iss`` is ``ACCOUNT.USER.SHA256:<base64 SHA-256 of the public key's DER>``, ``sub``
``ACCOUNT.USER``, signed RS256, valid under an hour (Snowflake's limit). A token is
reused until five minutes before it expires.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import time
from collections.abc import Callable

__all__ = ["KeyPairError", "account_identifier", "token_factory"]

LIFETIME_S = 3540
RENEW_BEFORE_S = 300


class KeyPairError(ValueError):
    """The key or the account could not be used; the message says which."""


def account_identifier(account: str) -> str:
    """The account part of a JWT's claims: upper case, no region or cloud suffix
    (``xy12345.us-east-1`` -> ``XY12345``; ``myorg-acct`` -> ``MYORG-ACCT``)."""
    ident = account.strip().upper()
    if ident.endswith(".SNOWFLAKECOMPUTING.COM"):
        ident = ident[: -len(".SNOWFLAKECOMPUTING.COM")]
    return ident.split(".")[0]


def token_factory(
    account: str, user: str, private_key_pem: bytes, passphrase: str | None = None
) -> Callable[[], str]:
    """A function returning a valid key-pair JWT for ``user`` of ``account``."""
    try:
        import jwt
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError as e:  # pragma: no cover - both come with the monitor's extra
        raise KeyPairError(f"key-pair JWTs need PyJWT and cryptography: {e}") from None
    try:
        key = serialization.load_pem_private_key(
            private_key_pem, password=passphrase.encode() if passphrase else None
        )
    except (ValueError, TypeError) as e:
        raise KeyPairError(f"the private key is not a usable PEM private key: {e}") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise KeyPairError("key-pair authentication needs an RSA private key")
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    fingerprint = "SHA256:" + base64.b64encode(hashlib.sha256(der).digest()).decode()
    qualified = f"{account_identifier(account)}.{user.upper()}"
    lock = threading.Lock()
    cached: list[tuple[str, float]] = []

    def token() -> str:
        now = time.time()
        with lock:
            if cached and cached[0][1] - RENEW_BEFORE_S > now:
                return cached[0][0]
            claims = {
                "iss": f"{qualified}.{fingerprint}",
                "sub": qualified,
                "iat": int(now),
                "exp": int(now) + LIFETIME_S,
            }
            text = jwt.encode(claims, key, algorithm="RS256")
            cached[:] = [(text, now + LIFETIME_S)]
            return text

    return token
