"""The user's private key, wherever a setting named it: a PEM file, PEM text, or the
bare base64 body an SDK profile holds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bounded_read import FileRefused, read_text
from ..setting import SettingError

__all__ = ["MAX_KEY_BYTES", "PrivateKey"]

#: The largest key file read: a PEM RSA key of 16,384 bits, encrypted, is under 13 KB.
MAX_KEY_BYTES = 64 << 10


@dataclass(frozen=True)
class PrivateKey:
    #: The setting that named it, for messages: ``SNOWFLAKE_PRIVATE_KEY_FILE``, ...
    where: str
    path: str | None = None
    text: str | None = None

    def read(self) -> str:
        """The key as its setting gives it (a file's text, or the text itself)."""
        if self.text is not None:
            return self.text
        try:
            return read_text(Path(str(self.path)), MAX_KEY_BYTES)
        except FileRefused as e:
            why = str(e).removeprefix("cannot read it: ")
            if why.startswith(("not UTF-8", "holds a NUL")):
                why = f"not PEM text: {why}"
            raise SettingError(f"private key file {self.path} ({self.where}): {why}") from None

    def pem(self) -> bytes:
        """PEM bytes, a ``BEGIN PRIVATE KEY`` frame put around a bare base64 body."""
        text = self.read().strip()
        if "-----BEGIN" not in text:  # an SDK profile holds the bare base64 body
            text = f"-----BEGIN PRIVATE KEY-----\n{text}\n-----END PRIVATE KEY-----"
        return (text + "\n").encode()

    def der(self, passphrase: str | None = None) -> bytes:
        """Unencrypted PKCS#8 DER, as snowflake-connector-python takes a key."""
        from cryptography.hazmat.primitives import serialization

        try:
            key = serialization.load_pem_private_key(
                self.pem(), password=passphrase.encode() if passphrase else None
            )
        except (ValueError, TypeError) as e:
            raise SettingError(
                f"the private key ({self.where}) is not a usable PEM private key: {e}"
            ) from None
        return key.private_bytes(
            serialization.Encoding.DER,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
