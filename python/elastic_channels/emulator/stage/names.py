"""Which object a stage file name means, and which names are refused.

One stage is one bucket and one key prefix (``emulator-stage`` + ``streaming/``); pipe-info
hands the two out joined as the stage ``location`` (``emulator-stage/streaming/``) and the
SDK uploads ``PUT /<location><name>``. A name given to the stage in Python (``file_path``,
as a file registration carries it) may take two forms:

- relative to the location: ``0.ndjson``, ``abc/0.ndjson`` -> key ``streaming/0.ndjson``;
- the full ``<bucket>/<key>`` form: ``emulator-stage/streaming/0.ndjson``, recognised by its
  first segment being the bucket name. Its key must lie under the prefix. This is the form
  SDK 1.9.1 registers (its ``file_path``, seen on loopback with location
  ``emulator-stage/streaming/``: ``emulator-stage/streaming/0.ndjson``).

A relative name whose first segment equals the bucket name is therefore read as the full
form.

Keys become files under ``<directory>/<bucket>/``, so a key is refused unless every
``/``-separated segment is an ordinary file name: no empty, ``.`` or ``..`` segment, no
backslash, no NUL, not absolute, at most 255 bytes (a file name's limit); and a key is at
most 1024 bytes of UTF-8, as S3's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import StageError

__all__ = ["MAX_KEY_BYTES", "MAX_SEGMENT_BYTES", "StageNames"]

#: S3's limit on a key, in bytes of UTF-8.
MAX_KEY_BYTES = 1024
#: The longest file name (NAME_MAX): each key segment becomes one.
MAX_SEGMENT_BYTES = 255


@dataclass(frozen=True)
class StageNames:
    """The stage's bucket and key prefix, and the rules for names under them."""

    bucket: str
    prefix: str

    def __post_init__(self) -> None:
        if not self.bucket or "/" in self.bucket or self.bucket.startswith("."):
            raise ValueError(f"bucket must be one plain name, got {self.bucket!r}")
        if self.prefix and not self.prefix.endswith("/"):
            raise ValueError(f"prefix must be empty or end with '/', got {self.prefix!r}")
        if self.prefix:
            self.check_key(self.prefix + "x")

    @property
    def location(self) -> str:
        """``<bucket>/<prefix>``: what pipe-info hands out as the stage ``location``."""
        return f"{self.bucket}/{self.prefix}"

    def key_for(self, file_path: str) -> str:
        """The object key ``file_path`` names (either form); ``StageError`` if refused."""
        if not isinstance(file_path, str):
            raise StageError(f"stage file path must be a str, got {type(file_path).__name__}")
        if file_path.startswith("/"):
            raise StageError(f"stage file path {file_path!r} is absolute")
        if file_path.startswith(self.bucket + "/"):
            key = file_path[len(self.bucket) + 1 :]
            if not key.startswith(self.prefix):
                raise StageError(
                    f"stage file path {file_path!r} is not under the stage location "
                    f"{self.location!r}"
                )
        else:
            key = self.prefix + file_path
        self.check_key(key, shown=file_path)
        return key

    def in_stage(self, key: str) -> bool:
        """Whether ``key`` (already checked) lies under the stage prefix."""
        return key.startswith(self.prefix)

    @staticmethod
    def check_key(key: str, *, shown: str | None = None) -> None:
        """Refuse a key that could not be one plain file below the bucket directory."""
        what = shown if shown is not None else key
        if not key or key.startswith("/"):
            raise StageError(f"stage file path {what!r} is empty or absolute")
        if "\\" in key or "\x00" in key:
            raise StageError(f"stage file path {what!r} contains a backslash or NUL")
        parts = key.split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise StageError(f"stage file path {what!r} has an empty, '.' or '..' segment")
        if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
            raise StageError(f"stage file path is longer than {MAX_KEY_BYTES} bytes")
        if any(len(p.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES for p in parts):
            raise StageError(
                f"stage file path {what[:80]!r}... has a segment longer than "
                f"{MAX_SEGMENT_BYTES} bytes"
            )
