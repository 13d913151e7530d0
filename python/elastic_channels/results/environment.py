"""What a result says about where it ran: the versions of what ran, and the machine."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["machine", "versions"]


def versions() -> dict[str, Any]:
    """This project's version (and its git commit when run from a checkout), the native
    module's, the SDK's, Python's and msgspec's; None for what is not installed."""
    return {
        "elastic_channels": _distribution("elastic-native"),
        "elastic_channels_commit": _git_commit(),
        "elastic_native": _native_version(),
        "snowpipe_streaming": _distribution("snowpipe-streaming"),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "msgspec": _distribution("msgspec"),
    }


def machine() -> dict[str, Any]:
    """The machine the run's workers ran on (``run``'s own: they are its children)."""
    return {
        "platform": platform.platform(),
        "system": platform.system(),
        "arch": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_bytes": _memory_bytes(),
        "load_average": _load_average(),
    }


def _distribution(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _native_version() -> str | None:
    try:
        import elastic_native
    except ImportError:
        return None
    return str(getattr(elastic_native, "__version__", None) or "") or None


def _git_commit() -> str | None:
    """The checkout's commit this package runs from (``+dirty`` with local changes), or
    None when it is not a git checkout (an installed wheel) or git is not at hand."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD", "--show-toplevel"],
            capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
        lines = head.stdout.split()
        # the checkout's own package, not an install inside some other repository
        if head.returncode != 0 or len(lines) != 2:
            return None
        if Path(lines[1]).resolve() / "python" / "elastic_channels" / "results" != here:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    changed = dirty.returncode == 0 and bool(dirty.stdout.strip())
    return lines[0] + ("+dirty" if changed else "")


def _cpu_model() -> str | None:
    """The CPU's model name (Linux /proc/cpuinfo; elsewhere what platform says)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model", "Hardware"):
                    return value.strip() or None
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages when the result was recorded (a loaded
    machine's figures are not a quiet one's)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None
