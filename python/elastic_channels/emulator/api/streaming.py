"""The Snowpipe Streaming REST endpoints the SDK calls, as functions of a checked request.

:func:`snowpipe_routes` is their route table (who may call each, which Content-Type it
takes); :class:`SnowpipeApi` answers them. Credentials, body size and Content-Type were
checked by the application before a handler runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ..http.access import Auth
from ..http.bodies import ENCODINGS, MAX_BODY_BYTES, BadBody, BodyTooLarge, inflate
from ..http.errors import ApiError, Reply
from ..http.routes import Request, Route
from ..landing.lander import Lander
from .account import AccountCalls, Target
from .channel_limit import ChannelLimit, client_of
from .drop_sink import DropSink
from .files import FileRegistrations
from .json_body import BadJson, decode_json
from .pipe_keys import PipeKeys
from .stats import Stats

__all__ = ["SnowpipeApi", "StageInfo", "snowpipe_routes"]

_PIPE = r"/v2/streaming/databases/([^/]+)/schemas/([^/]+)/pipes/([^/:]+)"
_DATA = r"/v2/streaming/data/databases/([^/]+)/schemas/([^/]+)/pipes/([^/]+)"
_JSON = ("application/json",)


def _ident(name: str) -> str:
    """Snowflake identifier rules: quoted stays as written, unquoted is upper-cased."""
    if len(name) >= 2 and name[0] == name[-1] == '"':
        return name[1:-1]
    return name.upper()


@dataclass(frozen=True)
class StageInfo:
    """Where file mode uploads to (``pipe-info``'s stage locations) and with what."""

    #: user -> (location "bucket/prefix/<id>/", path style; its own creds: AWS_KEY_ID,
    #: AWS_SECRET_KEY, AWS_TOKEN), a new location for each call (``Stage.grant``)
    grant: Callable[[str], tuple[str, Mapping[str, str]]]
    region: str = "us-west-2"


def snowpipe_routes(api: SnowpipeApi) -> list[Route]:
    return [
        Route("GET", r"/v2/streaming/hostname", "hostname", Auth.KEYPAIR, api.account.hostname),
        Route(
            "POST", r"/oauth/token", "token", Auth.KEYPAIR, api.account.token,
            content_types=("application/x-www-form-urlencoded",),
        ),
        Route("POST", r"/telemetry/.*", "telemetry", Auth.KEYPAIR, api.account.telemetry,
              _JSON),
        Route("POST", _PIPE + r":pipe-info", "pipe_info", Auth.SCOPED, api.pipe_info, _JSON),
        Route(
            "POST", _PIPE + r":bulk-channel-status", "channel_status", Auth.SCOPED,
            api.channel_status, _JSON,
        ),
        Route("PUT", _PIPE + r"/channels/([^/]+)", "open_channel", Auth.SCOPED, api.open_channel,
              _JSON),
        Route("DELETE", _PIPE + r"/channels/([^/]+)", "drop_channel", Auth.SCOPED,
              api.drop_channel, _JSON),
        Route(
            "POST", _DATA + r"/channels/([^/]+)/rows", "rows", Auth.SCOPED, api.rows,
            content_types=("application/x-ndjson",), max_body=MAX_BODY_BYTES,
        ),
        Route("POST", _DATA + r"/channels/([^/]+)/filebuffer", "filebuffer", Auth.SCOPED,
              api.filebuffer, _JSON),
    ]  # fmt: skip


class SnowpipeApi:
    """Answers the endpoints; thread-safe (the state it touches is)."""

    def __init__(
        self,
        target: Target,
        tokens: Any,
        lander: Lander,
        stats: Stats,
        parameter_overrides: Mapping[str, Any],
        sink: DropSink | None = None,
        answer_delay_s: float = 0.0,
        *,
        keys: PipeKeys,
        stage: StageInfo,
        files: FileRegistrations,
        limit: ChannelLimit | None = None,
    ) -> None:
        """``sink``: check and discard rows requests there instead of spooling them;
        ``answer_delay_s``: wait this long before answering a rows request (a real
        account's latency), on the handler's thread; ``limit``: each channel's
        throughput limit (429 over it; ``channel_limit.py``)."""
        self.target = target
        self._lander, self._stats = lander, stats
        self.account = AccountCalls(target, tokens)
        self._sink, self._answer_delay_s = sink, answer_delay_s
        self._overrides = dict(parameter_overrides)
        self._keys, self._stage_info, self._files = keys, stage, files
        self._limit = limit

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

    def _json_body(self, req: Request) -> dict[str, Any]:
        try:
            body = decode_json(req.body) if req.body.strip() else {}
        except BadJson as e:
            raise ApiError(400, "ERR_INVALID_REQUEST", str(e)) from None
        if not isinstance(body, dict):
            raise ApiError(400, "ERR_INVALID_REQUEST", "body must be a JSON object")
        return body

    # --- data calls ---------------------------------------------------------------

    def _stage(self, user: str) -> dict[str, Any]:
        """A location of its own for each client, with credentials for it alone: the SDK
        names its files 0.ndjson, 1.ndjson, ... under it, and no other client may touch
        them (``stage/auth.py``)."""
        s = self._stage_info
        location, creds = s.grant(user)
        return {
            "location_type": "S3", "location": location,
            "region": s.region,
            "use_s3_regional_url": False,
            "expiry_time_ms": int(time.time() * 1000) + 3600_000, "creds": dict(creds),
        }  # fmt: skip

    def pipe_info(self, req: Request) -> Reply:
        self._pipe(*req.groups)
        key_id, key = self._keys.current()
        info = {
            "rowset_stage_location": self._stage(req.user or ""),
            "durable_stage_location": self._stage(req.user or ""),
            "encryption_info": {
                "pipe_key": key,
                "pipe_key_id": int(key_id),
                "diversifier": "emulator",
            },
            "parameter_overrides": self._overrides,
        }
        return Reply(200, msgspec.json.encode(info))

    def channel_status(self, req: Request) -> Reply:
        db, schema, pipe = self._pipe(*req.groups)
        names = self._json_body(req).get("channel_names", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ApiError(400, "ERR_INVALID_REQUEST", "channel_names must be a list of strings")
        statuses = {}
        for name in names:
            channel = _ident(name)
            try:
                # ELASTIC always exists: elastic channels are never opened with a PUT.
                key = (db, schema, pipe, channel)
                state = self._stats.channel(key, create=channel == "ELASTIC")
                statuses[name] = state.status_json()
            except KeyError:
                statuses[name] = {
                    "database_name": db, "schema_name": schema, "pipe_name": pipe,
                    "channel_name": channel, "channel_status_code": "ERR_CHANNEL_DOES_NOT_EXIST",
                }  # fmt: skip
        return Reply(200, msgspec.json.encode({"channel_statuses": statuses}))

    def open_channel(self, req: Request) -> Reply:
        db, schema, pipe = self._pipe(*req.groups[:3])
        self._json_body(req)
        state = self._stats.open_channel((db, schema, pipe, _ident(req.groups[3])))
        reply = {
            "next_continuation_token": state.continuation_token(),
            "channel_status": state.status_json(),
        }
        return Reply(200, msgspec.json.encode(reply))

    def drop_channel(self, req: Request) -> Reply:
        db, schema, pipe = self._pipe(*req.groups[:3])
        channel = _ident(req.groups[3])
        state = self._stats.drop_channel((db, schema, pipe, channel))
        if state is None:
            raise ApiError(404, "ERR_CHANNEL_DOES_NOT_EXIST", f"channel {channel} is not open")
        reply = {"last_committed_offset_token": state.last_committed_offset_token}
        return Reply(200, msgspec.json.encode(reply))

    def rows(self, req: Request) -> Reply:
        started = time.perf_counter()
        db, schema, pipe = self._pipe(*req.groups[:3])
        channel = _ident(req.groups[3])
        key = (db, schema, pipe, channel)
        try:
            self._stats.channel(key, create=channel == "ELASTIC")
        except KeyError:
            raise ApiError(
                404, "ERR_CHANNEL_DOES_NOT_EXIST", f"channel {channel} is not open"
            ) from None
        if channel != "ELASTIC":
            self._stats.check_continuation(key, req.query.get("continuationToken"))
        encoding = req.headers.get("content-encoding", "identity").strip().lower() or "identity"
        if encoding not in ENCODINGS:
            raise ApiError(
                415, "ERR_UNSUPPORTED_ENCODING",
                f"Content-Encoding {encoding!r} is not one of {', '.join(ENCODINGS)}",
            )  # fmt: skip
        t_inflate = time.perf_counter()
        try:
            raw = inflate(req.body, encoding)
        except BodyTooLarge as e:
            raise ApiError(413, "ERR_REQUEST_TOO_LARGE", str(e)) from None
        except BadBody as e:
            raise ApiError(400, "ERR_INVALID_BODY", str(e)) from None
        declared = req.headers.get("x-snowflake-uncompressed-content-length")
        if declared is not None and declared.strip() != str(len(raw)):
            raise ApiError(
                400,
                "ERR_INVALID_BODY",
                f"x-snowflake-uncompressed-content-length is {declared}, body inflates to "
                f"{len(raw)}",
            )
        inflate_s = time.perf_counter() - t_inflate
        self._admit(req, key, len(raw))
        offset = req.query.get("endOffsetToken") or req.query.get("offsetToken")
        if self._sink is not None:
            self._sink.take(
                key, raw, wire_bytes=len(req.body), offset_token=offset, started=started,
                inflate_s=inflate_s,
            )  # fmt: skip
        else:
            self._lander.put(
                key, req.request_id, req.body, encoding, len(raw), raw=raw, offset_token=offset
            )
        self._stats.appended(len(req.body), len(raw))
        token = self._stats.next_continuation(key)
        if self._answer_delay_s > 0:
            time.sleep(self._answer_delay_s)
        return Reply(200, msgspec.json.encode({"next_continuation_token": token}))

    def filebuffer(self, req: Request) -> Reply:
        """File mode: register fragments of files the SDK uploaded to the stage."""
        db, schema, pipe = self._pipe(*req.groups[:3])
        key = (db, schema, pipe, _ident(req.groups[3]))
        try:
            self._stats.channel(key, create=key[3] == "ELASTIC")
        except KeyError:
            raise ApiError(
                404, "ERR_CHANNEL_DOES_NOT_EXIST", f"channel {key[3]} is not open"
            ) from None
        self._files.register(
            key, req.request_id, req.body, admit=lambda n: self._admit(req, key, n),
            user=req.user or "",
        )  # fmt: skip
        token = self._stats.next_continuation(key)
        if self._answer_delay_s > 0:
            time.sleep(self._answer_delay_s)
        return Reply(200, msgspec.json.encode({"next_continuation_token": token}))

    def _admit(self, req: Request, key: tuple[str, str, str, str], nbytes: int) -> None:
        """Take ``nbytes`` (uncompressed) from the channel's throughput allowance, or
        refuse the whole request with a 429 before anything of it is accepted."""
        if self._limit is None:
            return
        # The elastic channel is one per client, told apart by the client's token.
        channel = (*key, client_of(req)) if key[3] == "ELASTIC" else key
        self._limit.take(channel, nbytes, f"channel {key[3]}")
