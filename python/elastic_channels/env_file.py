"""Settings from a ``.env`` file in the working directory, read by every entry point.

``elastic-channels``, ``python -m elastic_channels.setup``, ``python -m
elastic_channels.k8s_worker`` and ``python -m elastic_channels.worker`` call
:func:`load_settings_file` first, so a setting in ``.env`` means the same whichever
way a job is started. Variables already in the environment win.
"""

from __future__ import annotations

from pathlib import Path


def load_settings_file(path: Path = Path(".env")) -> bool:
    """Read account and run settings from ``path`` (``KEY=VALUE`` lines; the reference
    harness's convention; ``.env.example`` names them all) into the environment,
    leaving variables already set alone. True if a file was read."""
    if not path.is_file():
        return False
    from dotenv import load_dotenv

    return bool(load_dotenv(path, override=False))
