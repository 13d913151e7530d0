"""``Stage``: the loopback cloud storage the SDK's file mode uploads to, as one object.

Wiring only: names (``StageNames``), credentials (``StageCredentials``), durable copies
(``DurableDir``), moto's bucket (``MotoBucket``), the WSGI app (``StageApp``) and the HTTPS
server (``StageServer``). moto is imported when the stage starts, not when this module is.

Durability and memory: an upload is answered 200 only once its bytes are in
``<directory>/<bucket>/<key>`` (fsynced, file and directory, with ``fsync=True``). The disk
is the only copy kept: moto holds an object only while it handles a request for it, so
memory does not grow with the number of files, and a restart on the same directory serves
every stored object again with nothing to reload. Last-Modified and Content-Type are not
kept: a GET answers the bytes and their ETag (the MD5), with the time of the GET.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from .auth import StageCredentials
from .durable import DurableDir
from .errors import StageError
from .faults import FaultDecision
from .names import StageNames
from .server import StageServer
from .stats import StageStats

if TYPE_CHECKING:
    from .moto_bucket import MotoBucket

__all__ = ["Stage"]


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
        access_key_id: str = "emulator",
        secret_key: str = "emulator",
        session_token: str = "emulator",
        fsync: bool = True,
        faults: Callable[[str], FaultDecision | None] | None = None,
    ) -> None:
        self._names = StageNames(bucket, prefix)
        self._credentials = StageCredentials(access_key_id, secret_key, session_token)
        self._durable = DurableDir(Path(directory), bucket, fsync=fsync)
        self._stats = StageStats()
        self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._tls.minimum_version = ssl.TLSVersion.TLSv1_2
        self._tls.load_cert_chain(cert_chain, key_file)
        self._address = (host, port)
        self._faults = faults
        self._server: StageServer | None = None
        self._moto: MotoBucket | None = None
        self._lock = threading.Lock()

    def start(self) -> Stage:
        """Create the directories and the bucket, start serving; returns self."""
        from .app import StageApp
        from .moto_bucket import MotoBucket

        with self._lock:
            if self._server is not None:
                raise RuntimeError("the stage is already started")
            self._durable.open()
            moto = MotoBucket(self._names.bucket)
            moto.create()
            app = StageApp(
                moto, self._names, self._durable, self._credentials, self._stats, self._faults
            )
            try:
                server = StageServer(app, *self._address, self._tls)
            except BaseException:
                moto.destroy()
                raise
            server.start()
            self._moto, self._server = moto, server
        return self

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
        """``emulator-stage/streaming/``: the stage ``location`` pipe-info hands out."""
        return self._names.location

    def creds(self) -> dict[str, str]:
        """The ``creds`` of the pipe-info stage location (``AWS_KEY_ID``, ...)."""
        return self._credentials.as_pipe_info()

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
        """``uploads``, ``bytes``, ``refused``, ``faults``: see ``StageStats.snapshot``."""
        return self._stats.snapshot()
