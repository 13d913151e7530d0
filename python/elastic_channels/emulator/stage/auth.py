"""Who may use the stage: the access key id (and session token) pipe-info handed out.

Real Snowflake hands a client short-lived credentials scoped to the stage location; the
emulator hands out fixed ones, and the stage refuses a request that names another access
key id, the way S3 refuses an unknown key (403 ``InvalidAccessKeyId``). A request that
carries a session token must carry the stage's (403 ``InvalidToken``).

The SigV4 signature itself is not verified: moto does not check signatures (only its
optional IAM emulation does, against IAM users it would have to be given), and recomputing
the canonical request of an aws-chunked upload here would cost more than it protects on a
loopback stage whose secret is in the same process anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from .errors import S3Error

__all__ = ["StageCredentials"]

_SIGV4 = re.compile(r"Credential=([^/,\s]+)/")
_SIGV2 = re.compile(r"^AWS ([^:\s]+):")


@dataclass(frozen=True)
class StageCredentials:
    """The stage's credentials, and the check a request's must pass."""

    access_key_id: str
    secret_key: str
    session_token: str

    def as_pipe_info(self) -> dict[str, str]:
        """The ``creds`` object of a pipe-info stage location."""
        return {
            "AWS_KEY_ID": self.access_key_id,
            "AWS_SECRET_KEY": self.secret_key,
            "AWS_TOKEN": self.session_token,
        }

    def check(self, environ: dict[str, Any]) -> None:
        """Raise a 403 ``S3Error`` unless the request is signed with this key id."""
        query = parse_qs(environ.get("QUERY_STRING", ""))
        auth = environ.get("HTTP_AUTHORIZATION", "")
        found = _SIGV4.search(auth) or _SIGV2.search(auth)
        if found:
            key_id = found.group(1)
        elif query.get("X-Amz-Credential"):
            key_id = query["X-Amz-Credential"][0].split("/", 1)[0]
        else:
            raise S3Error(403, "AccessDenied", "the stage accepts only signed requests")
        if key_id != self.access_key_id:
            raise S3Error(
                403,
                "InvalidAccessKeyId",
                f"the access key id {key_id!r} is not the stage's",
            )
        token = environ.get("HTTP_X_AMZ_SECURITY_TOKEN")
        if token is None and query.get("X-Amz-Security-Token"):
            token = query["X-Amz-Security-Token"][0]
        if token is not None and token != self.session_token:
            raise S3Error(403, "InvalidToken", "the session token is not the stage's")
