"""Certificates, key-pair JWT verification and scoped tokens."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from elastic_channels.emulator.http.auth import (
    AuthError,
    ScopedTokens,
    UserKeys,
    ensure_tls,
    ensure_user_key,
    public_key_fingerprint,
)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    users_dir = tmp_path_factory.mktemp("users")
    private = serialization.load_pem_private_key(
        ensure_user_key(users_dir, "alice").read_bytes(), None
    )
    registry = UserKeys("acct")
    registry.load_dir(users_dir)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return registry, private, other


def _token(key, *, account="ACCT", user="ALICE", fp_key=None, exp_in=3600, ms=True):
    now = time.time()
    scale = 1000 if ms else 1  # SDK 1.9.1 writes iat/exp in milliseconds
    fp = public_key_fingerprint((fp_key or key).public_key())
    claims = {
        "iss": f"{account}.{user}.{fp}",
        "sub": f"{account}.{user}",
        "iat": int(now * scale),
        "exp": int((now + exp_in) * scale),
    }
    return jwt.encode(claims, key, algorithm="RS256")


@pytest.mark.parametrize("ms", [True, False], ids=["ms-claims", "s-claims"])
def test_good_token_names_the_user(keys, ms):
    registry, private, _ = keys
    assert registry.verify(_token(private, ms=ms)) == "ALICE"


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"exp_in": -3600}, "expired"),
        ({"account": "OTHER"}, "is for account 'OTHER'"),
        ({"user": "BOB"}, "user 'BOB' is not registered"),
        ({"use_other": True}, "fingerprint .* is not registered"),
        ({"use_other": True, "fp_of_registered": True}, "signature refused"),
    ],
    ids=["expired", "account", "user", "wrong-key", "forged-fingerprint"],
)
def test_bad_tokens_are_refused_with_a_reason(keys, kwargs, why):
    registry, private, other = keys
    signer = other if kwargs.pop("use_other", False) else private
    fp_key = private if kwargs.pop("fp_of_registered", False) else None
    with pytest.raises(AuthError, match=why):
        registry.verify(_token(signer, fp_key=fp_key, **kwargs))


def test_garbage_is_refused(keys):
    with pytest.raises(AuthError, match="malformed JWT"):
        keys[0].verify("not-a-jwt")


def test_scoped_tokens_verify_and_expire():
    tokens = ScopedTokens(ttl_s=3600)
    assert tokens.verify(tokens.issue("ALICE", "localhost")) == "ALICE"
    with pytest.raises(AuthError, match="refused"):
        ScopedTokens(ttl_s=3600).verify(tokens.issue("ALICE", "x"))  # another secret
    with pytest.raises(AuthError, match="expired"):
        short = ScopedTokens(ttl_s=-1)
        short.verify(short.issue("ALICE", "x"))


def test_tls_is_a_ca_plus_a_server_leaf_and_is_reused(tmp_path):
    files = ensure_tls(tmp_path)
    ca = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
    leaf, ca_again = x509.load_pem_x509_certificates(files.chain.read_bytes())
    assert ca_again == ca
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert leaf.issuer == ca.subject
    assert (files.key.stat().st_mode & 0o777) == 0o600
    before = files.chain.read_bytes()
    assert ensure_tls(tmp_path).chain.read_bytes() == before
