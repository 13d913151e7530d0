"""The stage's WSGI app: its own checks and durability around moto's S3 app.

moto does the S3 protocol (routing, PutObject with its aws-chunked decoding, GET/HEAD with
ranges and conditionals, ETag, the XML replies); this app decides what reaches moto and
what happens to an object once moto has accepted it:

1. from the headers alone, before any of the body is read: the operation (object
   PUT/GET/HEAD/DELETE and HEAD of the stage's bucket only, else 501 ``NotImplemented``),
   keys that map to plain files (else 400), then the credentials and that the key lies in
   their own location (``StageAccess``, else 403);
2. PUT: a bound on the body's size is reserved from the memory budget for bodies
   (``budget.py``, else 503 ``SlowDown``), the body is read whole within the body
   deadline, its aws-chunked framing and
   CRC32 checked, the fault hook asked, then moto stores it; the object is taken back out
   of moto, written and fsynced to disk, and only then is moto's 200 (with its ETag) sent;
3. GET/HEAD: the durable copy is put into moto for the span of the request; DELETE removes
   the durable copy, then moto answers.

Requests through moto are serialised by one lock (moto's in-memory state is not built for
concurrent writers); the disk write and its fsyncs run outside it.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..landing.crashpoints import crash_point
from .auth import StageAccess
from .budget import BODY_BUDGET_BYTES, BodyBudget, body_bound
from .deadline import cut_off_after
from .durable import DurableDir
from .errors import S3Error, StageError, code_for_status
from .faults import FaultDecision
from .moto_bucket import MotoBucket
from .names import StageNames
from .put_body import MAX_OBJECT_BYTES, object_bytes, read_body
from .server import DRAIN_SMALL
from .stats import StageStats

__all__ = ["StageApp"]

#: Query parameters an object request may carry (the SDKs' operation hint, presigning).
_PLAIN_QUERY = ("x-id", "x-amz-")

#: Seconds werkzeug may go on reading a refused PUT's body after the reply (see __call__).
REFUSED_BODY_GRACE_S = 1.0

Reply = tuple[str, list[tuple[str, str]], bytes]


class _InjectedError(S3Error):
    """The reply of a ``status`` fault (counted as a fault, not as a refusal)."""


class StageApp:
    """WSGI app serving one stage bucket through moto, with durable PUTs."""

    def __init__(
        self,
        moto: MotoBucket,
        names: StageNames,
        durable: DurableDir,
        access: StageAccess,
        stats: StageStats,
        faults: Callable[[str], FaultDecision | None] | None = None,
        *,
        body_timeout_s: float,
        body_budget_bytes: int = BODY_BUDGET_BYTES,
    ) -> None:
        self._moto = moto
        self._names = names
        self._durable = durable
        self._access = access
        self._body_timeout_s = body_timeout_s
        self._budget = BodyBudget(body_budget_bytes)
        self._stats = stats
        self._faults = faults
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8", "replace")
        try:
            key = self._route(method, path, environ)  # headers only: nothing read yet
            self._access.check_request(environ, key)
            environ["HTTP_X_MOTO_ACCOUNT_ID"] = self._moto.account_id
            if method == "PUT":
                bound = body_bound(environ, MAX_OBJECT_BYTES)
                with self._budget.reserve(bound):
                    _continue(environ)
                    body = read_body(environ, self._body_timeout_s, bound)
                    status, headers, content = self._put(key, body, environ)
                    del body
            elif method == "DELETE":
                self._durable.remove(key)
                status, headers, content = self._through_moto(key, environ)
            else:
                status, headers, content = self._through_moto(key, environ)
        except S3Error as error:
            if not isinstance(error, _InjectedError):
                self._stats.record_refused()
            status, headers, content = error.reply(path, with_body=method != "HEAD")
            if method == "PUT":
                # werkzeug closes every connection after its reply, but first reads and
                # discards what is left of the body (up to 10 GB, 10 MB at a time): a
                # refused body gets one second for that, in small reads, then the
                # connection is shut down.
                environ.get(DRAIN_SMALL, lambda: None)()
                cut_off_after(environ, REFUSED_BODY_GRACE_S)
        start_response(status, headers)
        return [content]

    def _route(self, method: str, path: str, environ: dict[str, Any]) -> str:
        """The object key of an allowed request ("" for HEAD bucket); S3Error if not."""
        bucket, _, key = path.lstrip("/").partition("/")
        if bucket != self._names.bucket:
            raise S3Error(404, "NoSuchBucket", "the specified bucket does not exist")
        if not key:
            if method == "HEAD":
                return ""
            raise S3Error(501, "NotImplemented", "the stage supports HEAD bucket only")
        plain = all(
            name.lower().startswith(_PLAIN_QUERY)
            for name, _, _ in (p.partition("=") for p in environ.get("QUERY_STRING", "").split("&"))
            if name
        )
        if method not in ("PUT", "GET", "HEAD", "DELETE") or not plain:
            raise S3Error(501, "NotImplemented", "the stage supports object PUT/GET/HEAD/DELETE")
        if "HTTP_X_AMZ_COPY_SOURCE" in environ:
            raise S3Error(501, "NotImplemented", "the stage does not copy objects")
        try:
            self._names.check_key(key)
        except StageError as error:
            raise S3Error(400, "InvalidArgument", str(error)) from None
        if not self._names.in_stage(key):
            raise S3Error(403, "AccessDenied", "the key is outside your stage location")
        return key

    def _put(self, key: str, raw: bytes, environ: dict[str, Any]) -> Reply:
        data = object_bytes(raw, environ)
        decision = self._faults("stage_put") if self._faults is not None else None
        if decision is not None:
            self._stats.record_fault()
            if decision.action == "status":
                code = code_for_status(decision.status)
                raise _InjectedError(decision.status, code, "stage fault (injected)")
            if decision.action == "delay":
                time.sleep(decision.delay_s)
            elif decision.action == "drop":
                _drop(environ)
        environ["wsgi.input"] = io.BytesIO(raw)
        environ["CONTENT_LENGTH"] = str(len(raw))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        with self._lock:
            reply = self._call_moto(environ)
            stored = self._moto.take(key) if reply[0].startswith("200") else None
        if stored is None:
            return reply
        if stored != data:
            raise S3Error(500, "InternalError", "moto stored other bytes than were sent")
        try:
            self._durable.write(key, stored)
        except OSError as error:
            raise S3Error(
                500, "InternalError", f"the stage could not store {key!r}: {error}"
            ) from error
        self._stats.record_upload(len(stored))
        crash_point("stage:after-store")
        if decision is not None and decision.action == "lose_ack":
            _drop(environ)
        return reply

    def _through_moto(self, key: str, environ: dict[str, Any]) -> Reply:
        """moto's reply, with the durable copy of ``key`` (if any) in moto meanwhile."""
        data = self._durable.read(key) if key else None
        with self._lock:
            if data is not None:
                self._moto.load(key, data)
            try:
                return self._call_moto(environ)
            finally:
                if data is not None:
                    self._moto.take(key)

    def _call_moto(self, environ: dict[str, Any]) -> Reply:
        started: list[Any] = []

        def start_response(status: str, headers: list, exc_info: Any = None) -> Callable:
            started[:] = [status, headers]
            return lambda data: None

        chunks = self._moto.app(environ, start_response)
        try:
            content = b"".join(chunks)
        finally:
            getattr(chunks, "close", lambda: None)()
        return started[0], list(started[1]), content


def _continue(environ: dict[str, Any]) -> None:
    """Answer ``Expect: 100-continue`` (the server leaves it to the app): the request has
    passed, the client may send its body."""
    sock = environ.get("werkzeug.socket")
    if sock is not None and environ.get("HTTP_EXPECT", "").lower() == "100-continue":
        sock.sendall(f"{environ['SERVER_PROTOCOL']} 100 Continue\r\n\r\n".encode("latin-1"))


def _drop(environ: dict[str, Any]) -> None:
    """Close the client's connection with no reply (a fault): shut the socket down, then
    raise ``ConnectionAbortedError``, which werkzeug treats as a dropped connection."""
    sock = environ.get("werkzeug.socket")
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    raise ConnectionAbortedError("stage fault: connection closed without a reply")
