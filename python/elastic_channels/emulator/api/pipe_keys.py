"""The pipe's encryption keys: what file mode encrypts its staged files with.

``pipe-info`` hands the SDK ``encryption_info.pipe_key`` (base64 of 32 random bytes, the
AES-256 key) and ``pipe_key_id``; each file fragment the SDK then registers names the key
it was written with (``master_key_id``). The keys live in ``DATA_DIR/pipe_keys.json``
(mode 0600), made on first start and kept, so a file uploaded before a crash still
decrypts after the restart; a key is never replaced, only added, so every id ever handed
out keeps working.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from pathlib import Path

__all__ = ["KEY_BYTES", "PipeKeyError", "PipeKeys"]

#: AES-256: the SDK refuses shorter keys ("Encryption key too short: expected 32 bytes").
KEY_BYTES = 32
FILE_NAME = "pipe_keys.json"


class PipeKeyError(ValueError):
    """The key file is damaged, or a fragment names a key this pipe never handed out."""


class PipeKeys:
    """The keys by id (as the SDK sends ``master_key_id``: a decimal string)."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / FILE_NAME
        if self.path.exists():
            self._keys, self.current_id = _load(self.path)
        else:
            self.current_id = "1"
            self._keys = {self.current_id: secrets.token_bytes(KEY_BYTES)}
            _save(self.path, self._keys, self.current_id)

    def current(self) -> tuple[str, str]:
        """The id and the base64 key that ``pipe-info`` hands out now."""
        return self.current_id, base64.b64encode(self._keys[self.current_id]).decode()

    def key(self, key_id: object) -> bytes:
        """The key a fragment was written with; PipeKeyError if it names none of ours."""
        found = self._keys.get(str(key_id))
        if found is None:
            raise PipeKeyError(f"master_key_id {key_id!r} is not a key of this pipe")
        return found


def _load(path: Path) -> tuple[dict[str, bytes], str]:
    try:
        doc = json.loads(path.read_text())
        keys = {str(k): base64.b64decode(v, validate=True) for k, v in doc["keys"].items()}
        current = str(doc["current"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise PipeKeyError(f"{path}: damaged pipe key file ({e}); restore it or use a fresh "
                           "--data-dir (files staged with its keys cannot be read without it)"
                           ) from None  # fmt: skip
    if current not in keys or any(len(k) != KEY_BYTES for k in keys.values()):
        raise PipeKeyError(f"{path}: damaged pipe key file (a key is not {KEY_BYTES} bytes)")
    return keys, current


def _save(path: Path, keys: dict[str, bytes], current: str) -> None:
    doc = {"current": current, "keys": {k: base64.b64encode(v).decode() for k, v in keys.items()}}
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
