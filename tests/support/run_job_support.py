"""Running ``deploy/run_job.sh`` and ``deploy/deploy_monitor.sh`` in tests with a clean
environment (no setting leaks in from the caller's environment or a developer's .env:
tests/deploy/test_run_job_settings.py tests where settings come from). Only PYTHONPATH
passes through, so that the script's ``python3 -m elastic_channels...`` finds the package
the tests import."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RUN_JOB = REPO / "deploy" / "run_job.sh"
DEPLOY_MONITOR = REPO / "deploy" / "deploy_monitor.sh"
BASH = shutil.which("bash")
IMAGE = "registry.example/team/elastic-native:0.1.0"
#: What every rendering needs besides the rate: the image and the account settings.
REQUIRED = ["--image", IMAGE, "--account", "ORG-ACCT", "--user", "INGEST", "--database", "DEMO"]


def run_job(*args: str, **kw: Any) -> subprocess.CompletedProcess:
    """``run_job.sh args`` in a clean environment (see :func:`run_script`)."""
    return run_script(RUN_JOB, *args, **kw)


def deploy_monitor(*args: str, **kw: Any) -> subprocess.CompletedProcess:
    """``deploy_monitor.sh args`` in a clean environment (see :func:`run_script`)."""
    return run_script(DEPLOY_MONITOR, *args, **kw)


def run_script(
    script: Path,
    *args: str,
    path: str | None = None,
    cwd: str | Path | None = None,
    settings: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """``bash script args`` in a clean environment; ``path`` replaces PATH, ``cwd`` is
    where it runs (relative paths are from there), ``settings`` are added to the
    environment."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), "LANG": "C.UTF-8"}
    env["ENV_FILE"] = os.devnull
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if path is not None:
        env["PATH"] = path
    env.update(settings or {})
    return subprocess.run(
        [str(BASH), str(script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=cwd,
    )
