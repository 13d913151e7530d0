"""Keys, certificates and tokens: the emulator's security, done the way Snowflake does it.

* TLS: a private CA plus a separate CA:FALSE server leaf (SAN ``localhost`` and
  ``127.0.0.1``, EKU serverAuth), served as the leaf+CA chain. The SDK's rustls refuses
  a self-signed certificate used directly as the server certificate.
* Users: RSA public keys registered per user (``users/<USER>.pub.pem`` in the data dir,
  or added at start). A key-pair JWT is checked for its RS256 signature, its ``iss``
  public-key fingerprint (``ACCOUNT.USER.SHA256:<b64 sha256 of the key's DER>``), its
  ``sub``, its ``exp`` and its lifetime (``exp - iat``, at most an hour, as Snowflake);
  ``exp`` and ``iat`` must be whole numbers (NaN would never expire, nor bound a
  lifetime).
* Scoped tokens: data calls need a token this emulator issued (HS256, random secret per
  process, ``exp`` in seconds).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import ipaddress
import json
import math
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "AuthError",
    "ScopedTokens",
    "TlsFiles",
    "UserKeys",
    "ensure_tls",
    "ensure_user_key",
    "public_key_fingerprint",
]

T = TypeVar("T")

#: How far clocks may disagree when checking ``exp``/``iat`` (seconds).
CLOCK_LEEWAY_S = 60
#: A JWT time claim above this is in milliseconds (1e11 s is the year 5138).
MS_EPOCH_THRESHOLD = 100_000_000_000
#: Snowflake refuses a key-pair JWT that lives longer than an hour.
MAX_JWT_LIFETIME_S = 3600


class AuthError(Exception):
    """A request's credentials were refused; the message says why (sent as the 401 body)."""


@dataclass(frozen=True)
class TlsFiles:
    ca_cert: Path  # what clients trust (SSL_CERT_FILE)
    chain: Path  # leaf + CA, what the server presents
    key: Path  # the leaf's private key


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _pem_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def ensure_tls(tls_dir: Path, names: Sequence[str] = ()) -> TlsFiles:
    """The CA and server leaf in ``tls_dir``, made on first use and reused afterwards.

    The leaf covers ``localhost``, ``127.0.0.1`` and ``names`` (DNS names such as an
    account's host pointed at 127.0.0.1); asked for other names than it has, the leaf is
    issued again by the same CA, so clients that trust the CA keep trusting it."""
    files = TlsFiles(tls_dir / "ca.pem", tls_dir / "server-chain.pem", tls_dir / "server.key")
    wanted = sorted({"localhost", *(n.lower() for n in names)})
    names_file = tls_dir / "server-names.json"
    have = files.ca_cert.exists() and files.chain.exists() and files.key.exists()
    if have and (tls_dir / "ca.key").exists():
        current = _names_in(names_file)
        if current == wanted:
            return files
        ca_key = _pem(tls_dir / "ca.key", lambda d: serialization.load_pem_private_key(d, None))
        ca = _pem(files.ca_cert, x509.load_pem_x509_certificate)
    elif have and not names:
        return files
    else:
        tls_dir.mkdir(parents=True, exist_ok=True)
        ca_key, ca = _new_ca()
        _write_private(tls_dir / "ca.key", _pem_key(ca_key))  # type: ignore[arg-type]
        files.ca_cert.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    _issue_leaf(files, ca, ca_key, wanted)  # type: ignore[arg-type]
    names_file.write_text(json.dumps(wanted))
    return files


def _names_in(names_file: Path) -> list[str] | None:
    """The names the leaf was issued for (None if the file is damaged: issue it again)."""
    if not names_file.exists():
        return ["localhost"]
    try:
        names = json.loads(names_file.read_text())
    except (OSError, ValueError):
        return None
    return names if isinstance(names, list) else None


def _pem(path: Path, load: Callable[[bytes], T]) -> T:
    """``load(path's bytes)``; ValueError naming the file if it is not what it should be."""
    try:
        return load(path.read_bytes())
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path} is damaged: {e}") from None


def _new_ca() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    now = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("elastic-channels emulator CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    return ca_key, ca


def _issue_leaf(
    files: TlsFiles, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, names: list[str]
) -> None:
    now = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName(
        [*(x509.DNSName(n) for n in names), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=825))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(san, critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    _write_private(files.key, _pem_key(leaf_key))
    files.chain.write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))


def public_key_fingerprint(public_key: rsa.RSAPublicKey) -> str:
    """``SHA256:<base64>`` of the key's DER SubjectPublicKeyInfo, as in a JWT ``iss``."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "SHA256:" + base64.b64encode(hashlib.sha256(der).digest()).decode()


def ensure_user_key(users_dir: Path, user: str) -> Path:
    """A PKCS#8 private key for ``user`` (made on first use); its public half is registered."""
    users_dir.mkdir(parents=True, exist_ok=True)
    private = users_dir / f"{user.upper()}.p8"
    public = users_dir / f"{user.upper()}.pub.pem"
    if not private.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        _write_private(private, _pem_key(key))
        public.write_bytes(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
    return private


class UserKeys:
    """Registered users and their RSA public keys; verifies key-pair JWTs."""

    def __init__(self, account: str) -> None:
        self.account = account.upper()
        self._keys: dict[str, dict[str, rsa.RSAPublicKey]] = {}

    def add(self, user: str, public_pem: bytes) -> None:
        key = serialization.load_pem_public_key(public_pem)
        if not isinstance(key, rsa.RSAPublicKey):
            raise ValueError(f"public key for user {user!r} is not an RSA key")
        self._keys.setdefault(user.upper(), {})[public_key_fingerprint(key)] = key

    def load_dir(self, users_dir: Path) -> None:
        for path in sorted(users_dir.glob("*.pub.pem")):
            try:
                self.add(path.name[: -len(".pub.pem")], path.read_bytes())
            except (ValueError, TypeError) as e:
                raise ValueError(f"{path} is damaged: {e}") from None

    def users(self) -> list[str]:
        return sorted(self._keys)

    def verify(self, token: str) -> str:
        """The user a key-pair JWT authenticates, or :class:`AuthError` saying why not."""
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError as e:
            raise AuthError(f"malformed JWT: {e}") from None
        iss, sub = str(claims.get("iss", "")), str(claims.get("sub", ""))
        account_user, sep, fingerprint = iss.rpartition(".SHA256:")
        if not sep:
            raise AuthError(f"JWT iss {iss!r} is not ACCOUNT.USER.SHA256:<fingerprint>")
        account, _, user = account_user.upper().partition(".")
        if account != self.account:
            raise AuthError(f"JWT is for account {account!r}, this is {self.account!r}")
        if sub.upper() != account_user.upper():
            raise AuthError(f"JWT sub {sub!r} does not match iss {account_user!r}")
        keys = self._keys.get(user)
        if not keys:
            raise AuthError(f"user {user!r} is not registered")
        key = keys.get("SHA256:" + fingerprint)
        if key is None:
            raise AuthError(
                f"JWT public key fingerprint SHA256:{fingerprint} is not registered "
                f"for user {user!r}"
            )
        try:
            # Signature only: SDK 1.9.1 writes iat/exp in MILLISECONDS, which PyJWT would
            # read as far-future seconds, so the times are checked below, unit-aware.
            jwt.decode(
                token,
                key,
                algorithms=["RS256"],
                options={"verify_exp": False, "verify_iat": False, "verify_aud": False},
            )
        except jwt.PyJWTError as e:
            raise AuthError(f"JWT signature refused: {e}") from None
        exp_s = _seconds_claim(claims, "exp")
        if exp_s is None:
            raise AuthError("JWT has no exp claim")
        now = time.time()
        if exp_s + CLOCK_LEEWAY_S < now:
            raise AuthError(f"JWT expired at {exp_s:.0f} (now {now:.0f})")
        iat_s = _seconds_claim(claims, "iat")
        start = now if iat_s is None else iat_s
        if start > now + CLOCK_LEEWAY_S:
            raise AuthError(f"JWT iat {start:.0f} is in the future (now {now:.0f})")
        if exp_s - start > MAX_JWT_LIFETIME_S + CLOCK_LEEWAY_S:
            raise AuthError(
                f"JWT lifetime of {exp_s - start:.0f} s is over the {MAX_JWT_LIFETIME_S} s limit"
            )
        return user


def _seconds_claim(claims: dict, name: str) -> int | None:
    """A time claim (``exp``, ``iat``) in seconds, or None when it is absent; AuthError
    unless it is a whole number (RFC 7519's NumericDate, as Snowflake's clients write
    it): NaN, infinities, text and fractions are refused. One above
    :data:`MS_EPOCH_THRESHOLD` is in milliseconds (SDK 1.9.1 writes them so)."""
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise AuthError(f"JWT {name} must be a whole number of seconds, not {value!r}")
    return value // 1000 if value > MS_EPOCH_THRESHOLD else value


class ScopedTokens:
    """Short-lived tokens for data calls, issued by ``POST /oauth/token``."""

    def __init__(self, ttl_s: int) -> None:
        self.ttl_s = ttl_s
        self._secret = secrets.token_bytes(32)

    def issue(self, user: str, scope: str) -> str:
        now = int(time.time())
        # jti: every token distinct, even two issued in the same second: the channel
        # limit tells elastic channels (one per client) apart by their token.
        claims = {
            "sub": user, "scope": scope, "iat": now, "exp": now + self.ttl_s,
            "jti": secrets.token_hex(8),
        }  # fmt: skip
        return jwt.encode(claims, self._secret, algorithm="HS256")

    def verify(self, token: str) -> str:
        try:
            claims = jwt.decode(token, self._secret, algorithms=["HS256"], leeway=0)
        except jwt.ExpiredSignatureError:
            raise AuthError("scoped token has expired") from None
        except jwt.PyJWTError as e:
            raise AuthError(f"scoped token refused: {e}") from None
        return str(claims["sub"])
