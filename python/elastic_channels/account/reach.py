"""Can the account be reached and logged in to? Asked once, before anything starts.

``run``, ``setup``, ``monitor`` and the dashboard on an account call
:func:`check_reachable` first: one bounded pass (a few seconds in all) through what a
request to the account URL needs, each step timed against one deadline, so a wrong
host or a cut network is one line naming the host and what failed, instead of the
SDK's and the SQL API client's retries (minutes, with nothing said):

1. DNS: the account URL's host resolves;
2. TCP: a connection to one of its addresses opens (refused, timed out, no route);
3. TLS: the handshake completes and the certificate is trusted (the CAs every client
   here trusts: ``SSL_CERT_FILE``/the system's, or an emulator profile's CA);
4. login: ``GET /v2/streaming/hostname`` with the user's key-pair JWT (the SDK's first
   request, an authenticated read with no side effect) answers 200; a 401/403 is the
   account refusing the user or key. The request goes through the SQL API client's
   transport (:func:`~..monitor.sql_client.http_transport`), with the JWT of
   :func:`~..monitor.keypair.token_factory`.

When ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` is set, the SDK's file mode uploads
to that endpoint (its S3 client honours them): steps 1-3 are checked for it too (its CA:
``AWS_CA_BUNDLE``, else as above).
Without them the stage's endpoint is only known from the pipe's ``pipe-info`` reply
(bucket and region), which the SDK asks for with a scoped token once its client exists:
not before.

With an HTTPS proxy configured for the host (``HTTPS_PROXY``), steps 1-3 are left to the
login request, which goes through the proxy as every request will.
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
import time
import urllib.request
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..setting import SettingError
from .settings import DEFAULT_PORT, AccountSettings

__all__ = ["DEFAULT_TIMEOUT_S", "LOGIN_PATH", "Unreachable", "check_reachable"]

#: The whole check's bound, in seconds.
DEFAULT_TIMEOUT_S = 5.0
#: The login request: the SDK's first, key-pair JWT, no side effect.
LOGIN_PATH = "/v2/streaming/hostname"
#: The SDK's S3 client's endpoint overrides, the more specific first.
STAGE_ENDPOINT_VARS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")


class Unreachable(Exception):
    """The target could not be reached or logged in to. ``str()`` is one line naming
    the host and port and what failed; ``step`` is ``dns``, ``tcp``, ``tls``, ``login``
    or ``http``."""

    def __init__(self, what: str, host: str, port: int, step: str, detail: str) -> None:
        self.what, self.host, self.port, self.step = what, host, port, step
        self.detail = " ".join(detail.split())  # one line, whatever a server said
        super().__init__(f"cannot reach {what} at {host}:{port}: {self.detail}")


def check_reachable(
    settings: AccountSettings,
    timeout: float = DEFAULT_TIMEOUT_S,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Return when the account URL of ``settings`` answers a key-pair login (and the
    stage endpoint an ``AWS_ENDPOINT_URL*`` in ``environ`` names, default
    ``os.environ``, accepts a TLS connection), all within ``timeout`` seconds; else
    raise :class:`Unreachable`. Settings that cannot make a login (no account, user or
    key, an unusable key) are a :class:`~..setting.SettingError`, before any request."""
    from ..monitor.keypair import KeyPairError, token_factory
    from ..monitor.sql_client import SqlUnreachable, http_transport

    environ = os.environ if environ is None else environ
    settings.check("account", "user", "private_key")
    assert settings.account is not None and settings.user is not None
    assert settings.key is not None and settings.host is not None
    try:
        token = token_factory(
            settings.account.name, settings.user, settings.key.pem(), settings.private_key_pwd
        )
    except KeyPairError as e:
        raise SettingError(f"{e} ({settings.key.where})") from None
    stage = _stage_endpoint(environ)
    deadline = time.monotonic() + timeout
    host, port, what = settings.host, settings.port or DEFAULT_PORT, "the account"
    if not _proxied(host):
        _connect(what, host, port, deadline, cafile=settings.ssl_cert_file)
    send = http_transport(
        settings.url, token, cafile=settings.ssl_cert_file, timeout_s=_left(deadline)
    )
    try:
        status, reply = send("GET", f"{LOGIN_PATH}?requestId={uuid.uuid4()}", None)
    except SqlUnreachable as e:
        raise Unreachable(what, host, port, "http", f"no answer to GET {LOGIN_PATH}: {e}") from None
    if status in (401, 403):
        who = f"user {settings.user} of account {settings.account.name}, key {settings.key.where}"
        raise Unreachable(
            what, host, port, "login",
            f"login refused: HTTP {status} from GET {LOGIN_PATH} ({_said(reply)}) for {who}",
        )  # fmt: skip
    if status != 200:
        raise Unreachable(what, host, port, "http", f"HTTP {status} from GET {LOGIN_PATH}: "
                          f"{_said(reply)}")  # fmt: skip
    if stage is not None:
        name, s_host, s_port, tls = stage
        if not _proxied(s_host):
            _connect(f"the stage endpoint ({name})", s_host, s_port, deadline, tls=tls,
                     cafile=environ.get("AWS_CA_BUNDLE"))  # fmt: skip


def _connect(
    what: str, host: str, port: int, deadline: float, *, tls: bool = True,
    cafile: str | None = None,
) -> None:  # fmt: skip
    """DNS, TCP and (with ``tls``) TLS to ``host:port`` before ``deadline``; ``cafile``:
    the CA to trust (None: ``SSL_CERT_FILE`` or the system's)."""
    addrs = _resolve(what, host, port, deadline)
    sock = _open(what, host, port, addrs, deadline)
    try:
        if tls:
            _handshake(what, host, port, sock, cafile or None, deadline)
    finally:
        sock.close()


def _resolve(what: str, host: str, port: int, deadline: float) -> list[Any]:
    """``getaddrinfo`` in a thread, as it takes no timeout (a resolver that never answers
    would hold it for the resolver's own retries)."""
    found: dict[str, Any] = {}

    def lookup() -> None:
        try:
            found["addrs"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            found["error"] = e

    thread = threading.Thread(target=lookup, name=f"dns {host}", daemon=True)
    thread.start()
    thread.join(_left(deadline))
    if thread.is_alive():
        raise Unreachable(what, host, port, "dns", "DNS lookup timed out (no answer)")
    if "error" in found:
        e = found["error"]
        raise Unreachable(what, host, port, "dns", f"DNS lookup failed: {e.strerror or e}")
    return list(found["addrs"])


def _open(what: str, host: str, port: int, addrs: list[Any], deadline: float) -> socket.socket:
    """A TCP connection to the first address that takes one; else the last failure."""
    failure = "no address"
    for family, kind, proto, _, sockaddr in addrs:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_left(deadline))
            sock.connect(sockaddr)
            return sock
        except ConnectionRefusedError:
            failure = f"TCP connect to {sockaddr[0]} refused"
        except TimeoutError:
            failure = f"TCP connect to {sockaddr[0]} timed out (no answer)"
        except OSError as e:
            failure = f"TCP connect to {sockaddr[0]} failed: {e.strerror or e}"
        sock.close()
        if time.monotonic() >= deadline:
            break
    raise Unreachable(what, host, port, "tcp", failure)


def _handshake(
    what: str, host: str, port: int, sock: socket.socket, cafile: str | None, deadline: float
) -> None:
    """The TLS handshake and certificate check, with the CAs the clients trust."""
    ctx = ssl.create_default_context(cafile=cafile)
    trusted = cafile or os.environ.get("SSL_CERT_FILE") or "the system's CAs"
    try:
        sock.settimeout(_left(deadline))
        with ctx.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False) as tls:
            tls.do_handshake()
    except ssl.SSLCertVerificationError as e:
        raise Unreachable(what, host, port, "tls", f"TLS certificate not trusted: "
                          f"{e.verify_message} (trusting {trusted})") from None  # fmt: skip
    except TimeoutError:
        raise Unreachable(
            what, host, port, "tls", "TLS handshake timed out (connected, no answer)"
        ) from None
    except ssl.SSLError as e:
        raise Unreachable(
            what, host, port, "tls", f"TLS handshake failed: {e.reason or e}"
        ) from None
    except OSError as e:  # reset or closed mid-handshake
        raise Unreachable(
            what, host, port, "tls", f"TLS handshake failed: {e.strerror or e}"
        ) from None


def _stage_endpoint(environ: Mapping[str, str]) -> tuple[str, str, int, bool] | None:
    """(variable, host, port, https) of the SDK's S3 endpoint override, if one is set."""
    for name in STAGE_ENDPOINT_VARS:
        url = environ.get(name, "").strip()
        if not url:
            continue
        try:
            parts = urlsplit(url if "://" in url else f"https://{url}")
            port = parts.port
        except ValueError:
            raise SettingError(f"{name} {url!r} is not a URL") from None
        if not parts.hostname:
            raise SettingError(f"{name} {url!r} is not a URL")
        https = parts.scheme.lower() != "http"
        return name, parts.hostname, port or (443 if https else 80), https
    return None


def _proxied(host: str) -> bool:
    return bool(urllib.request.getproxies().get("https")) and not urllib.request.proxy_bypass(host)


def _left(deadline: float) -> float:
    """Seconds to the deadline, never less than a twentieth (a socket timeout of 0 would
    make the socket non-blocking)."""
    return max(deadline - time.monotonic(), 0.05)


def _said(reply: Any) -> str:
    """What a server's error body says: Snowflake's ``code`` and ``message``."""
    if isinstance(reply, dict) and "message" in reply:
        code = f"code {reply['code']}: " if reply.get("code") else ""
        return f"{code}{reply['message']}"[:300]
    return str(reply)[:300] or "no body"
