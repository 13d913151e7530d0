"""The stage's durable copies: one file per object, ``<directory>/<bucket>/<key>``.

A copy is written to ``<directory>/.incoming/`` first, fsynced, renamed into place, and
the directory that gained the name is fsynced too (as is every directory created on the
way), so once ``write`` returns the object survives a crash of the process or the machine.
A crash mid-write leaves only a stray file in ``.incoming/``, which ``open`` clears. With
``fsync=False`` the same steps run without the fsyncs (fast, survives a process crash only).

Keys are checked by ``StageNames`` before they get here; this class only maps them to paths.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from pathlib import Path

__all__ = ["DurableDir"]


class DurableDir:
    """Object bytes on disk, one file per key of one bucket."""

    def __init__(self, directory: Path, bucket: str, *, fsync: bool = True) -> None:
        self.root = Path(directory)
        self.bucket_dir = self.root / bucket
        self._incoming = self.root / ".incoming"
        self._fsync = fsync

    def open(self) -> None:
        """Create the directories and drop what a crash left half-written."""
        shutil.rmtree(self._incoming, ignore_errors=True)
        self._make_dirs(self._incoming)
        self._make_dirs(self.bucket_dir)

    def path(self, key: str) -> Path:
        """Where the durable copy of ``key`` lives (it may not exist)."""
        return self.bucket_dir / key

    def write(self, key: str, data: bytes) -> None:
        """Store ``data`` as ``key``, replacing any older copy, durably before returning."""
        target = self.path(key)
        self._make_dirs(target.parent)
        temp = self._incoming / uuid.uuid4().hex
        with open(temp, "wb") as f:
            f.write(data)
            if self._fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(temp, target)
        self._sync_dir(target.parent)

    def read(self, key: str) -> bytes | None:
        """The bytes of ``key``, or None if there is no copy."""
        try:
            return self.path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def etag(self, key: str) -> str | None:
        """The hex MD5 of ``key``'s bytes (S3's ETag for a single-part object), or None."""
        try:
            with open(self.path(key), "rb") as f:
                digest = hashlib.md5(usedforsecurity=False)
                while block := f.read(1 << 20):
                    digest.update(block)
                return digest.hexdigest()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def remove(self, key: str) -> bool:
        """Delete ``key``'s copy; whether there was one."""
        target = self.path(key)
        try:
            target.unlink()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return False
        self._sync_dir(target.parent)
        return True

    def _make_dirs(self, path: Path) -> None:
        missing = []
        while not path.is_dir():
            missing.append(path)
            path = path.parent
        for made in reversed(missing):
            made.mkdir(exist_ok=True)
            self._sync_dir(made.parent)

    def _sync_dir(self, path: Path) -> None:
        if not self._fsync:
            return
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
