"""A ``--profile`` file, read: an SDK profile JSON, or the info file an emulator writes.

An SDK profile is the SDK's own connection properties (``account``, ``user``,
``private_key``, ``role``, ``host``, ``url``, ... and any client property). An
emulator's info file (``Emulator.info()``, ``emulator serve --info-file``) holds its
client properties under ``properties`` beside its target (``database``, ``schema``,
``pipe``) and its CA (``ssl_cert_file``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bounded_read import FileRefused, check_depth, read_text
from ..setting import SettingError

__all__ = ["MAX_PROFILE_BYTES", "Profile", "load_profile"]

#: The largest ``--profile`` file read (an SDK profile is well under 10 KB), and how
#: deep its objects may nest.
MAX_PROFILE_BYTES = 1 << 20
MAX_PROFILE_DEPTH = 32

#: What an emulator's info file says about its target, beside its properties.
_TARGET_KEYS = ("database", "schema", "pipe", "ssl_cert_file")


@dataclass(frozen=True)
class Profile:
    path: str
    #: The connection and client properties it holds.
    properties: dict[str, Any] = field(default_factory=dict)
    #: An emulator's target and CA; empty for an SDK profile.
    target: dict[str, Any] = field(default_factory=dict)
    #: The file is an emulator's info file (its URL, CA and key file beside them).
    emulator_info: dict[str, Any] | None = None

    def get(self, key: str) -> Any:
        """A setting the file names (a target key first, then a property); None when
        absent or empty."""
        value = self.target.get(key, self.properties.get(key))
        return None if value is None or value == "" else value


def load_profile(path: str, where: str = "--profile") -> Profile:
    """The file at ``path``; a :class:`SettingError` naming ``where`` and the path when
    it cannot be read, is over :data:`MAX_PROFILE_BYTES` or nested past
    ``MAX_PROFILE_DEPTH``, is not JSON, or is not a JSON object."""
    said = f"{where} {path}: cannot read it as JSON"
    try:
        data = json.loads(read_text(Path(path), MAX_PROFILE_BYTES))
        check_depth(data, MAX_PROFILE_DEPTH)
    except FileRefused as e:
        raise SettingError(f"{said}: {str(e).removeprefix('cannot read it: ')}") from None
    except RecursionError:
        raise SettingError(
            f"{said}: nested deeper than the {MAX_PROFILE_DEPTH} levels a file may hold"
        ) from None
    except ValueError as e:  # json.JSONDecodeError
        raise SettingError(f"{said}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise SettingError(f"{where} {path}: expected a JSON object")
    if isinstance(data.get("properties"), dict):
        target = {k: data[k] for k in _TARGET_KEYS if data.get(k) not in (None, "")}
        return Profile(path, dict(data["properties"]), target, data)
    return Profile(path, data)
