"""``run`` against an account it cannot reach fails in seconds, before any worker starts,
with one line naming the host and what failed (issue #29: it retried for over 2 minutes
with only the SDK's WARN lines)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from key_files import pem_key
from reach_support import closed_port

pytest.importorskip("jwt")


def test_run_fails_fast_naming_the_host(tmp_path: Path) -> None:
    port = closed_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_")}
    env.update({
        "SNOWFLAKE_ACCOUNT": "myorg-myacct", "SNOWFLAKE_USER": "ingest",
        "SNOWFLAKE_PRIVATE_KEY_FILE": str(pem_key(tmp_path)), "SNOWFLAKE_DATABASE": "DEMO",
        "SNOWFLAKE_HOST": "127.0.0.1", "SNOWFLAKE_PORT": str(port),
    })  # fmt: skip
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "elastic_channels", "run", "--target-bps", "1e6",
         "--duration-seconds", "5", "--database", "DEMO"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60, check=False,
    )  # fmt: skip
    took = time.monotonic() - began
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"elastic-channels run: error: cannot reach the account at 127.0.0.1:{port}: "
        "TCP connect to 127.0.0.1 refused"
    ]
    assert took < 30, took  # a bound, not a speed figure: the SDK retried for minutes
    assert not (tmp_path / ".elastic-channels" / "logs").exists()  # no worker started
