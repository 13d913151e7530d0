"""A key-pair user's private key file for tests of the account paths."""

from __future__ import annotations

from pathlib import Path

import pytest


def pem_key(tmp_path: Path) -> Path:
    """A fresh 2048-bit RSA key as unencrypted PKCS#8 PEM in ``tmp_path/rsa_key.p8``."""
    rsa = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.rsa")
    from cryptography.hazmat.primitives import serialization

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path / "rsa_key.p8"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path
