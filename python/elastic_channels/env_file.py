"""Settings from a ``.env`` file in the working directory, read by every entry point.

``elastic-channels``, ``python -m elastic_channels.setup``, ``python -m
elastic_channels.k8s_worker`` and ``python -m elastic_channels.worker`` call
:func:`load_settings_file` first, so a setting in ``.env`` means the same whichever
way a job is started. Variables already in the environment win; an empty value is
unset on either side (``cp .env.example .env`` gives a file of empty values, each
meaning its default), as ``deploy/lib/common.sh`` reads the file too.
"""

from __future__ import annotations

import os
from pathlib import Path


def load_settings_file(path: Path = Path(".env")) -> bool:
    """Read account and run settings from ``path`` (``KEY=VALUE`` lines; the reference
    harness's convention; ``.env.example`` names them all) into the environment: each
    value that is not empty, for a variable the environment leaves unset or empty.
    True if a file was read."""
    if not path.is_file():
        return False
    from dotenv import dotenv_values

    for key, value in dotenv_values(path).items():
        if value is None or not value.strip():
            continue  # `KEY=` or a bare `KEY`: unset, the default applies
        if not os.environ.get(key, "").strip():
            os.environ[key] = value
    return True
