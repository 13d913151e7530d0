"""``Stage``: the loopback cloud storage the SDK's file mode uploads to, as one object.

Wiring only: names (``StageNames``), access (``StageAccess``: credentials per location),
durable copies (``DurableDir``), moto's bucket (``MotoBucket``), the WSGI app (``StageApp``)
and the HTTPS server (``StageServer``). moto is imported when the stage starts, not when
this module is.

Restarts: clients are told the stage's URL once, in their environment (``AWS_ENDPOINT_URL``,
read by the SDK's S3 client when it starts), so the stage keeps its address: the port first
bound is written to ``<directory>/PORT`` and bound again by every later start on the same
directory (an ``OSError`` naming the file if another process holds it). The credentials
are derived from ``<directory>/SECRET``, so those handed out before a restart stay good.

Durability and memory: an upload is answered 200 only once its bytes are in
``<directory>/<bucket>/<key>`` (fsynced, file and directory, with ``fsync=True``). The disk
is the only copy kept: moto holds an object only while it handles a request for it, so
memory does not grow with the number of files, and a restart on the same directory serves
every stored object again with nothing to reload. Last-Modified and Content-Type are not
kept: a GET answers the bytes and their ETag (the MD5), with the time of the GET.
"""

from __future__ import annotations

import errno
import os
import socket
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from .auth import StageAccess, StageGrant, load_secret
from .budget import BODY_BUDGET_BYTES
from .durable import DurableDir
from .errors import StageError
from .faults import FaultDecision
from .names import StageNames
from .server import PortTaken, StageServer, listen
from .stats import StageStats

if TYPE_CHECKING:
    from .moto_bucket import MotoBucket

__all__ = ["PORT_FILE", "Stage"]

#: The stage's port, kept in its directory (see the module's docstring).
PORT_FILE = "PORT"


class Stage:
    """An S3 bucket on ``https://host:port`` whose objects are files in ``directory``.

    ``file_path`` arguments name an object relative to the stage ``location``
    (``0.ndjson``) or in full (``emulator-stage/streaming/0.ndjson``, the form SDK 1.9.1
    registers); see ``names.py``. ``faults`` is called as ``faults("stage_put")`` once per
    upload (see ``faults.py``). ``read``, ``etag`` and ``remove`` work on the directory and
    need no running server.
    """

    def __init__(
        self,
        directory: Path,
        *,
        cert_chain: Path,
        key_file: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        bucket: str = "emulator-stage",
        prefix: str = "streaming/",
        fsync: bool = True,
        faults: Callable[[str], FaultDecision | None] | None = None,
        body_timeout_s: float = 30.0,
        max_connections: int = 256,
        header_timeout_s: float = 10.0,
        body_budget_bytes: int = BODY_BUDGET_BYTES,
    ) -> None:
        """``port``: 0 = the one kept in ``directory`` (a free one at the first start);
        ``header_timeout_s``: how long a request's line and headers may take to arrive
        after the TLS handshake; ``body_timeout_s``: how long an upload's body may take;
        ``body_budget_bytes``: bytes of upload bodies held at once (``budget.py``);
        ``max_connections``: connections served at once."""
        self._names = StageNames(bucket, prefix)
        self._directory = Path(directory)
        self._access: StageAccess | None = None
        self._durable = DurableDir(self._directory, bucket, fsync=fsync)
        self._stats = StageStats()
        self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._tls.minimum_version = ssl.TLSVersion.TLSv1_2
        self._tls.load_cert_chain(cert_chain, key_file)
        self._address = (host, port)
        self._faults = faults
        self._body_timeout_s = body_timeout_s
        self._max_connections = max_connections
        self._header_timeout_s = header_timeout_s
        self._body_budget_bytes = body_budget_bytes
        self._server: StageServer | None = None
        self._moto: MotoBucket | None = None
        self._lock = threading.Lock()

    @property
    def access(self) -> StageAccess:
        """Grants and checks (made from the directory's secret on first use)."""
        if self._access is None:
            self._access = StageAccess(load_secret(self._directory), self._names)
        return self._access

    def start(self) -> Stage:
        """Create the directories and the bucket, start serving; returns self."""
        from .app import StageApp
        from .moto_bucket import MotoBucket

        with self._lock:
            if self._server is not None:
                raise RuntimeError("the stage is already started")
            self._durable.open()
            sock = self._listen()
            moto = MotoBucket(self._names.bucket)
            try:
                moto.create()
                app = StageApp(
                    moto, self._names, self._durable, self.access, self._stats, self._faults,
                    body_timeout_s=self._body_timeout_s,
                    body_budget_bytes=self._body_budget_bytes,
                )  # fmt: skip
                server = StageServer(
                    app, sock, self._tls, self._max_connections, self._header_timeout_s
                )
            except BaseException:
                moto.destroy()
                raise
            finally:
                sock.close()  # the server holds its own copy
            server.start()
            self._moto, self._server = moto, server
        return self

    def _listen(self) -> socket.socket:
        """The listening socket: on the port asked for, else the kept one, else a free one
        (then kept)."""
        host, port = self._address
        kept_file = self._directory / PORT_FILE
        kept = _read_port(kept_file)
        try:
            sock = listen(host, port or kept or 0)
        except PortTaken:
            if port or not kept:
                raise
            raise PortTaken(
                errno.EADDRINUSE,
                f"the stage's port {kept} on {host} is in use by another process. The stage "
                f"keeps the port of its first start ({kept_file}) so that clients started "
                "before a restart can still upload; stop what holds it, or delete that file "
                "to take a new port (clients started earlier then cannot upload)",
            ) from None
        bound = sock.getsockname()[1]
        if not port and bound != kept:
            tmp = kept_file.with_suffix(".tmp")
            tmp.write_text(f"{bound}\n")
            os.replace(tmp, kept_file)
        return sock

    def stop(self) -> None:
        """Stop serving and drop the bucket from moto; the files stay. Idempotent."""
        with self._lock:
            server, moto, self._server, self._moto = self._server, self._moto, None, None
        if server is not None:
            server.stop()
        if moto is not None:
            moto.destroy()

    def __enter__(self) -> Stage:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``https://127.0.0.1:PORT``: the endpoint for the SDK's ``AWS_ENDPOINT_URL``."""
        if self._server is None:
            raise RuntimeError("the stage is not started")
        return self._server.url

    @property
    def location(self) -> str:
        """``emulator-stage/streaming/``: the stage's root; each pipe-info ``location`` is
        one below it (``grant``)."""
        return self._names.location

    def grant(self, user: str) -> StageGrant:
        """A stage location of its own for one client of ``user`` (a pipe-info
        ``location``), and credentials that reach it alone."""
        return self.access.grant(user)

    def check_owner(self, file_path: str, user: str) -> None:
        """``StageError`` unless ``file_path`` lies in a location granted to ``user``: for
        registration, so that a client registers only files of its own user's locations
        (and of those, only the ones it was told: locations are 128-bit secrets)."""
        self.access.owner_check(file_path, user)

    def read(self, file_path: str) -> bytes:
        """The stored bytes of ``file_path``; ``StageError`` if unsafe, outside or absent."""
        key = self._names.key_for(file_path)
        data = self._durable.read(key)
        if data is None:
            raise StageError(f"stage file {file_path!r} (key {key!r}) is not in the stage")
        return data

    def etag(self, file_path: str) -> str:
        """The hex MD5 of ``file_path``'s bytes: the ETag the upload's reply carried,
        without its quotes. Reads the file; ``StageError`` as ``read``."""
        key = self._names.key_for(file_path)
        etag = self._durable.etag(key)
        if etag is None:
            raise StageError(f"stage file {file_path!r} (key {key!r}) is not in the stage")
        return etag

    def remove(self, file_path: str) -> bool:
        """Delete ``file_path``'s durable copy (moto holds none between requests);
        whether it was there. ``StageError`` if the name is unsafe or outside the stage."""
        key = self._names.key_for(file_path)
        return self._durable.remove(key)

    def stats(self) -> dict[str, int]:
        """``uploads``, ``bytes``, ``refused``, ``faults`` (``StageStats.snapshot``) and
        ``connections_refused`` (closed unserved, at the connection cap)."""
        server = self._server
        refused = server.connections_refused if server is not None else 0
        return {**self._stats.snapshot(), "connections_refused": refused}


def _read_port(path: Path) -> int:
    """The port kept in ``path``, or 0 if there is none; ``ValueError`` if it is not one."""
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return 0
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{path}: {text[:20]!r} is not a port; delete the file")
    return int(text)
