"""Logging of the entry points: one format, a level name in any case, and a LOG_LEVEL that
is no level refused with a message naming it (exit 2) before any work starts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def _python(*args: str, cwd: Path, log_level: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LOG_LEVEL": log_level}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=60, cwd=cwd, env=env
    )


def test_a_level_name_in_any_case_sets_the_level_and_the_format(tmp_path: Path) -> None:
    code = (
        "import logging, os\n"
        "from elastic_channels.log import configure_logging\n"
        "configure_logging(os.environ['LOG_LEVEL'])\n"
        "logging.getLogger('elastic_channels.x').info('shown')\n"
        "logging.getLogger('elastic_channels.x').debug('hidden')\n"
    )
    done = _python("-c", code, cwd=tmp_path, log_level=" info ")
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.splitlines()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
    assert re.fullmatch(stamp + r" INFO elastic_channels\.x: shown", line)


@pytest.mark.parametrize("job", ["run", "monitor", "worker"])
def test_a_log_level_that_is_no_level_is_refused_by_name(tmp_path: Path, job: str) -> None:
    done = _python("-m", "elastic_channels", job, cwd=tmp_path, log_level="loud")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"elastic-channels {job}: error: LOG_LEVEL='loud' is not a log level" in done.stderr
    assert "DEBUG, INFO, WARNING, ERROR, CRITICAL" in done.stderr
    assert "Traceback" not in done.stderr
    assert not any(tmp_path.iterdir())  # nothing started: no data dir, no files
