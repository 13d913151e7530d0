"""Who may use the stage, and where: credentials of one stage location each.

An account hands each client, in pipe-info, a stage ``location`` and short-lived ``creds``
that reach that location only. The emulator does the same: every ``grant(user)`` (each
pipe-info location) mints a location id and the credentials for it, all derived from one
secret kept in the stage directory (``SECRET``, mode 0600), so nothing is kept per grant
and they stay valid across restarts on the same directory (a client keeps its pipe-info
for an hour and goes on uploading after the emulator restarts).

- location id: ``<nonce><tag>``, 32 + 16 hex digits; the tag is an HMAC of the user and the
  nonce, so registration can tell which user a location was issued to (``owner_check``);
- access key id ``EMU<location id>``, secret key and session token: HMACs of the location id.

A stage request must name an access key id the stage issued and carry its session token
(403 ``InvalidAccessKeyId`` / ``InvalidToken`` otherwise), and an object key under that
location (403 ``AccessDenied``). Refusals name nothing of the stage or of other clients.
The session token is the bearer secret; the SigV4 signature itself is not verified (moto
checks signatures only in its IAM emulation, against users it would have to be given).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from .errors import S3Error, StageError
from .names import StageNames

__all__ = ["StageAccess", "StageGrant"]

_SIGV4 = re.compile(r"Credential=([^/,\s]+)/")
_SIGV2 = re.compile(r"^AWS ([^:\s]+):")
_NONCE_HEX = 32
_TAG_HEX = 16
_LOCATION_ID = re.compile(f"[0-9a-f]{{{_NONCE_HEX + _TAG_HEX}}}")
_KEY_ID = re.compile(f"EMU([0-9a-f]{{{_NONCE_HEX + _TAG_HEX}}})")
SECRET_FILE = "SECRET"


@dataclass(frozen=True)
class StageGrant:
    """One pipe-info stage location: where a client may upload, and with what."""

    location: str  # <bucket>/<prefix><location id>/
    creds: dict[str, str]  # AWS_KEY_ID, AWS_SECRET_KEY, AWS_TOKEN


def load_secret(directory: Path) -> bytes:
    """The stage's secret, made once per directory (mode 0600) and kept."""
    path = Path(directory) / SECRET_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    text = path.read_text().strip()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise ValueError(f"{path} does not hold a stage secret (64 hex digits); delete it")
    return bytes.fromhex(text)


class StageAccess:
    """Mints per-location credentials and checks requests and registrations against them."""

    def __init__(self, secret: bytes, names: StageNames) -> None:
        self._secret = secret
        self._names = names

    def _mac(self, *parts: str) -> str:
        msg = json.dumps(parts).encode()
        return hmac.new(self._secret, msg, hashlib.sha256).hexdigest()

    def grant(self, user: str) -> StageGrant:
        """A new location for a client of ``user``, and credentials for it alone."""
        nonce = secrets.token_hex(_NONCE_HEX // 2)
        location_id = nonce + self._mac("location", user, nonce)[:_TAG_HEX]
        creds = {
            "AWS_KEY_ID": f"EMU{location_id}",
            "AWS_SECRET_KEY": self._mac("secret", location_id),
            "AWS_TOKEN": self._mac("token", location_id),
        }
        return StageGrant(f"{self._names.location}{location_id}/", creds)

    def check_request(self, environ: dict[str, Any], key: str) -> None:
        """Raise a 403 ``S3Error`` unless the request carries credentials this stage
        issued and ``key`` ("" for the bucket itself) lies in their location."""
        query = parse_qs(environ.get("QUERY_STRING", ""))
        auth = environ.get("HTTP_AUTHORIZATION", "")
        found = _SIGV4.search(auth) or _SIGV2.search(auth)
        if found:
            key_id = found.group(1)
        elif query.get("X-Amz-Credential"):
            key_id = query["X-Amz-Credential"][0].split("/", 1)[0]
        else:
            raise S3Error(403, "AccessDenied", "the stage accepts only signed requests")
        match = _KEY_ID.fullmatch(key_id)
        if match is None:
            raise S3Error(
                403, "InvalidAccessKeyId", "the access key id is not one this stage issued"
            )
        location_id = match.group(1)
        token = environ.get("HTTP_X_AMZ_SECURITY_TOKEN")
        if token is None and query.get("X-Amz-Security-Token"):
            token = query["X-Amz-Security-Token"][0]
        expected = self._mac("token", location_id)
        if token is None or not hmac.compare_digest(token.encode(), expected.encode()):
            raise S3Error(403, "InvalidToken", "the session token does not go with the key id")
        if key and not key.startswith(f"{self._names.prefix}{location_id}/"):
            raise S3Error(403, "AccessDenied", "the key is outside your stage location")

    def owner_check(self, file_path: str, user: str) -> None:
        """Raise ``StageError`` unless ``file_path`` (either form, see ``names.py``) lies
        in a stage location this stage issued to ``user``."""
        key = self._names.key_for(file_path)
        location_id = key[len(self._names.prefix) :].partition("/")[0]
        nonce, tag = location_id[:_NONCE_HEX], location_id[_NONCE_HEX:]
        if not _LOCATION_ID.fullmatch(location_id) or not hmac.compare_digest(
            tag.encode(), self._mac("location", user, nonce)[:_TAG_HEX].encode()
        ):
            raise StageError(
                f"stage file {file_path!r} is not in a stage location issued to this client"
            )
