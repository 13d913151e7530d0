"""The Snowpipe Streaming REST endpoints the SDK calls, as plain functions of a request.

:func:`route` names the endpoint of a request (faults and stats are keyed by that
name); :class:`SnowpipeApi` answers it. Transport, TLS and fault injection live in
``server.py``.
"""

from __future__ import annotations

import base64
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

import msgspec
import zstandard

from .auth import AuthError, ScopedTokens, UserKeys
from .lander import Lander
from .stats import Stats

__all__ = ["ApiError", "Reply", "SnowpipeApi", "route"]

_PIPE = r"/v2/streaming/databases/([^/]+)/schemas/([^/]+)/pipes/([^/:]+)"
_ROUTES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("GET", re.compile(r"/v2/streaming/hostname"), "hostname"),
    ("POST", re.compile(r"/oauth/token"), "token"),
    ("POST", re.compile(r"/telemetry/.*"), "telemetry"),
    ("POST", re.compile(_PIPE + r":pipe-info"), "pipe_info"),
    ("POST", re.compile(_PIPE + r":bulk-channel-status"), "channel_status"),
    ("PUT", re.compile(_PIPE + r"/channels/([^/]+)"), "open_channel"),
    ("DELETE", re.compile(_PIPE + r"/channels/([^/]+)"), "drop_channel"),
    (
        "POST",
        re.compile(
            r"/v2/streaming/data/databases/([^/]+)/schemas/([^/]+)/pipes/([^/]+)"
            r"/channels/([^/]+)/rows"
        ),
        "rows",
    ),
)

#: Largest body accepted, compressed or not (Snowflake documents 16 MB per request).
MAX_BODY_BYTES = 16 << 20
#: The decompressed body may be larger than the wire body, up to this.
MAX_RAW_BYTES = 64 << 20


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"


class ApiError(Exception):
    """A refused request: HTTP status + Snowflake-style error code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def reply(self) -> Reply:
        body = {"error_code": self.code, "code": self.code, "message": self.message}
        return Reply(self.status, msgspec.json.encode(body))


def route(method: str, path: str) -> tuple[str, tuple[str, ...]] | None:
    """``(endpoint name, URL-decoded path groups)`` for a Snowpipe request, or None."""
    for m, pattern, name in _ROUTES:
        if m == method:
            match = pattern.fullmatch(path)
            if match:
                return name, tuple(unquote(g) for g in match.groups())
    return None


def _ident(name: str) -> str:
    """Snowflake identifier rules: quoted stays as written, unquoted is upper-cased."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return name[1:-1]
    return name.upper()


@dataclass(frozen=True)
class Target:
    account: str
    database: str
    schema: str
    pipe: str
    hostname: str


class SnowpipeApi:
    """Answers the endpoints; thread-safe (the state it touches is)."""

    def __init__(
        self,
        target: Target,
        users: UserKeys,
        tokens: ScopedTokens,
        lander: Lander,
        stats: Stats,
        parameter_overrides: Mapping[str, Any],
    ) -> None:
        self.target = target
        self._users, self._tokens, self._lander, self._stats = users, tokens, lander, stats
        self._overrides = dict(parameter_overrides)
        self._pipe_key = base64.b64encode(b"emulator-pipekey").decode()  # 16 bytes

    # --- auth ---------------------------------------------------------------------

    def _bearer(self, headers: Mapping[str, str]) -> tuple[str, str]:
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise ApiError(401, "390101", "missing Authorization: Bearer <token> header")
        kind = headers.get("x-snowflake-authorization-token-type", "").upper()
        return kind, token.strip()

    def _account_user(self, headers: Mapping[str, str]) -> str:
        kind, token = self._bearer(headers)
        if kind not in ("KEYPAIR_JWT", ""):
            raise ApiError(401, "390101", f"token type {kind!r} not accepted here; use KEYPAIR_JWT")
        try:
            return self._users.verify(token)
        except AuthError as e:
            raise ApiError(401, "390144", f"JWT token is invalid: {e}") from None

    def _scoped_user(self, headers: Mapping[str, str]) -> str:
        kind, token = self._bearer(headers)
        try:
            return self._tokens.verify(token)
        except AuthError as e:
            if kind == "KEYPAIR_JWT":  # Snowflake also accepts the key-pair JWT here
                return self._account_user(headers)
            raise ApiError(401, "390303", f"scoped token is invalid: {e}") from None

    def _pipe(self, db: str, schema: str, pipe: str) -> tuple[str, str, str]:
        t = self.target
        key = (_ident(db), _ident(schema), _ident(pipe))
        if key != (t.database, t.schema, t.pipe):
            raise ApiError(
                404,
                "ERR_PIPE_DOES_NOT_EXIST_OR_NOT_AUTHORIZED",
                f"pipe {'.'.join(key)} does not exist; this emulator serves "
                f"{t.database}.{t.schema}.{t.pipe}",
            )
        return key

    # --- endpoints ----------------------------------------------------------------

    def handle(
        self,
        name: str,
        groups: tuple[str, ...],
        query: str,
        headers: Mapping[str, str],
        body: bytes,
    ) -> Reply:
        return getattr(self, f"_{name}")(groups, query, headers, body)

    def _hostname(self, groups, query, headers, body) -> Reply:
        self._account_user(headers)
        return Reply(200, self.target.hostname.encode(), "text/plain")

    def _token(self, groups, query, headers, body) -> Reply:
        user = self._account_user(headers)
        form = parse_qs(body.decode("utf-8", "replace"))
        scope = (form.get("scope") or [""])[0]
        return Reply(200, self._tokens.issue(user, scope).encode(), "text/plain")

    def _telemetry(self, groups, query, headers, body) -> Reply:
        # The SDK's telemetry client requires "data" (a string), as Snowflake sends it.
        return Reply(200, b'{"data":"Log Received","success":true}')

    def _stage(self) -> dict[str, Any]:
        return {
            "location_type": "S3",
            "location": "emulator-stage/streaming/",
            "region": "us-west-2",
            "use_s3_regional_url": False,
            "expiry_time_ms": int(time.time() * 1000) + 3600_000,
            "creds": {"AWS_KEY_ID": "emulator", "AWS_SECRET_KEY": "emulator", "AWS_TOKEN": "x"},
        }

    def _pipe_info(self, groups, query, headers, body) -> Reply:
        self._scoped_user(headers)
        self._pipe(*groups)
        info = {
            "rowset_stage_location": self._stage(),
            "durable_stage_location": self._stage(),
            "encryption_info": {
                "pipe_key": self._pipe_key,
                "pipe_key_id": 1,
                "diversifier": "emulator",
            },
            "parameter_overrides": self._overrides,
        }
        return Reply(200, msgspec.json.encode(info))

    def _channel_status(self, groups, query, headers, body) -> Reply:
        self._scoped_user(headers)
        db, schema, pipe = self._pipe(*groups)
        try:
            names = msgspec.json.decode(body or b"{}").get("channel_names", [])
        except (msgspec.DecodeError, AttributeError):
            raise ApiError(
                400, "ERR_INVALID_REQUEST", "body must be {channel_names: [...]}"
            ) from None
        statuses = {}
        for name in names:
            # ELASTIC always exists: elastic channels are never opened with a PUT.
            key = (db, schema, pipe, str(name))
            try:
                state = self._stats.channel(key, create=name == "ELASTIC")
            except KeyError:
                continue
            statuses[name] = state.status_json()
        return Reply(200, msgspec.json.encode({"channel_statuses": statuses}))

    def _open_channel(self, groups, query, headers, body) -> Reply:
        self._scoped_user(headers)
        db, schema, pipe = self._pipe(*groups[:3])
        state = self._stats.channel((db, schema, pipe, groups[3]))
        reply = {
            "next_continuation_token": str(state.continuation),
            "channel_status": state.status_json(),
        }
        return Reply(200, msgspec.json.encode(reply))

    def _drop_channel(self, groups, query, headers, body) -> Reply:
        self._scoped_user(headers)
        db, schema, pipe = self._pipe(*groups[:3])
        if not self._stats.drop_channel((db, schema, pipe, groups[3])):
            raise ApiError(404, "ERR_CHANNEL_DOES_NOT_EXIST", f"channel {groups[3]} is not open")
        return Reply(200, b'{"last_committed_offset_token":null}')

    def _rows(self, groups, query, headers, body) -> Reply:
        self._scoped_user(headers)
        db, schema, pipe = self._pipe(*groups[:3])
        key = (db, schema, pipe, groups[3])
        try:
            self._stats.channel(key, create=groups[3] == "ELASTIC")
        except KeyError:
            raise ApiError(
                404, "ERR_CHANNEL_DOES_NOT_EXIST", f"channel {groups[3]} is not open"
            ) from None
        encoding = headers.get("content-encoding", "identity").lower() or "identity"
        raw_len = self._check_body(body, encoding, headers)
        request_id = (parse_qs(query).get("requestId") or [str(uuid.uuid4())])[0]
        self._lander.put(key, request_id, body, encoding, raw_len)
        self._stats.appended(len(body), raw_len)
        token = self._stats.next_continuation(key)
        return Reply(200, msgspec.json.encode({"next_continuation_token": token}))

    def _check_body(self, body: bytes, encoding: str, headers: Mapping[str, str]) -> int:
        """Decompress to prove the body is whole; its raw length. ApiError(400) if not."""
        if encoding == "zstd":
            try:
                raw = _zstd_length(body)
            except zstandard.ZstdError as e:
                raise ApiError(400, "ERR_INVALID_BODY", f"zstd body: {e}") from None
        elif encoding == "gzip":
            import gzip

            try:
                raw = len(gzip.decompress(body))
            except (OSError, EOFError) as e:
                raise ApiError(400, "ERR_INVALID_BODY", f"gzip body: {e}") from None
        elif encoding == "identity":
            raw = len(body)
        else:
            raise ApiError(415, "ERR_UNSUPPORTED_ENCODING", f"content-encoding {encoding!r}")
        declared = headers.get("x-snowflake-uncompressed-content-length")
        if declared is not None and declared.isdigit() and int(declared) != raw:
            raise ApiError(
                400,
                "ERR_INVALID_BODY",
                f"x-snowflake-uncompressed-content-length is {declared}, body inflates to {raw}",
            )
        return raw


def _zstd_length(body: bytes) -> int:
    """The decompressed size of a (possibly multi-frame) zstd body; ZstdError if damaged."""
    dctx = zstandard.ZstdDecompressor()
    size = zstandard.frame_content_size(body) if len(body) >= 18 else -1
    if 0 <= size <= MAX_RAW_BYTES:  # one frame with its size: one-shot is ~30% cheaper
        try:
            out = dctx.decompress(body, max_output_size=size, allow_extra_data=False)
        except zstandard.ZstdError:
            pass  # several frames, or damage: the careful loop below decides
        else:
            if len(out) == size:
                return size
    raw, rest, step = 0, memoryview(body), 1 << 20
    while len(rest):
        obj = dctx.decompressobj()
        pos = 0
        while pos < len(rest) and not obj.eof:
            raw += len(obj.decompress(rest[pos : pos + step]))
            pos += step
            if raw > MAX_RAW_BYTES:
                raise ApiError(413, "ERR_REQUEST_TOO_LARGE", f"body inflates past {MAX_RAW_BYTES}")
        if not obj.eof:
            raise zstandard.ZstdError("truncated zstd frame")
        rest = memoryview(obj.unused_data + bytes(rest[pos:]))
    return raw
