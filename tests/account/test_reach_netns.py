"""An account with no route to it (issue #29: ``run`` retried for minutes with only SDK
warnings): in a private network namespace (``unshare --net``, as root) where loopback is
the only interface, ``setup``, ``monitor`` and ``run`` with settings that look right stop within
seconds on one line naming the host and what failed: the DNS lookup (no resolver can be
reached), or, with the host given as an address, the TCP connect (no route)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from key_files import pem_key

pytest.importorskip("jwt")
REPO = Path(__file__).resolve().parents[2]
HOST = "myorg-myacct.snowflakecomputing.com"
#: TEST-NET-1 (RFC 5737): an address, so no DNS; no route to it in the namespace.
NO_ROUTE = "192.0.2.10"
#: The preflight's own bound is 5 s; the rest is a child's start on a loaded machine.
BOUND_S = 30


def _unshare_refused() -> str | None:
    """Why a private network namespace cannot be made here, or None."""
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    if os.geteuid() != 0:
        return "needs root for unshare --net"
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare --net is not permitted here: {probe.stderr.strip()}"
    return None


pytestmark = pytest.mark.skipif(_unshare_refused() is not None, reason=str(_unshare_refused()))


def _in_netns(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, float]:
    """``python -m elastic_channels ARGS`` in a new network namespace, loopback up when
    ``ip`` is at hand (down otherwise: no interface at all); (exit code, stderr, seconds)."""
    lo_up = "ip link set lo up && " if shutil.which("ip") else ""
    script = f'{lo_up}exec "$0" -m elastic_channels "$@"'
    start = time.monotonic()
    proc = subprocess.run(
        ["unshare", "--net", "sh", "-c", script, sys.executable, *args],
        capture_output=True, text=True, timeout=120, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return proc.returncode, proc.stderr, time.monotonic() - start


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SNOWFLAKE_", "AWS_"))}
    return {
        **keep, "PYTHONPATH": str(REPO / "python"),
        "SNOWFLAKE_ACCOUNT": "myorg-myacct", "SNOWFLAKE_USER": "ingest",
        "SNOWFLAKE_PRIVATE_KEY_FILE": str(pem_key(tmp_path)), "SNOWFLAKE_DATABASE": "DEMO",
    }  # fmt: skip


def test_setup_with_no_resolver_names_the_host_and_the_dns_lookup(
    env: dict[str, str], tmp_path: Path
) -> None:
    rc, err, took = _in_netns(["setup"], env, tmp_path)
    assert rc == 2 and took < BOUND_S, (rc, took, err)
    assert err.startswith(f"setup: error: cannot reach the account at {HOST}:443: DNS lookup ")
    assert err.count("\n") == 1


def test_setup_and_monitor_with_no_route_name_the_address_and_the_connect(
    env: dict[str, str], tmp_path: Path
) -> None:
    env = {**env, "SNOWFLAKE_HOST": NO_ROUTE}
    line = f"cannot reach the account at {NO_ROUTE}:443: TCP connect to {NO_ROUTE} failed: "
    rc, err, took = _in_netns(["setup"], env, tmp_path)
    assert rc == 2 and took < BOUND_S, (rc, took, err)
    assert err.startswith(f"setup: error: {line}") and err.count("\n") == 1
    rc, err, took = _in_netns(["monitor", "-", "--run-id", "r1"], env, tmp_path)
    assert rc == 2 and took < BOUND_S, (rc, took, err)
    assert err.startswith(f"elastic-channels monitor: error: {line}") and err.count("\n") == 1


def test_run_with_no_route_stops_before_any_worker(env: dict[str, str], tmp_path: Path) -> None:
    """As the issue found it: settings that look right, ``--database DEMO`` given."""
    env = {**env, "SNOWFLAKE_HOST": NO_ROUTE}
    del env["SNOWFLAKE_DATABASE"]
    argv = ["run", "--workers", "1", "--duration-seconds", "5", "--database", "DEMO"]
    rc, err, took = _in_netns(argv, env, tmp_path)
    assert rc == 2 and took < BOUND_S, (rc, took, err)
    assert err == (
        f"elastic-channels run: error: cannot reach the account at {NO_ROUTE}:443: "
        f"TCP connect to {NO_ROUTE} failed: Network is unreachable\n"
    )
