"""deploy/image/install_target.sh: requirements installed as built for another
architecture (what the image's build stage runs for linux/arm64 on an x86-64 machine)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "image" / "install_target.sh"
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")
EM_AARCH64 = 183


def run(*args: str) -> subprocess.CompletedProcess:
    assert BASH is not None
    env = {**os.environ, "PIP": f"{sys.executable} -m pip"}
    return subprocess.run(
        [BASH, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_help() -> None:
    proc = run("--help")
    assert proc.returncode == 0 and proc.stderr == ""
    assert "ARCH DEST REQUIREMENT" in proc.stdout and "--dry-run" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "usage"),
        (("aarch64", "/tmp/x"), "usage"),
        (("arm64", "/tmp/x", "a"), "aarch64 or x86_64"),
    ],
)
def test_bad_arguments(args: tuple[str, ...], message: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_dry_run_names_the_targets_platforms(tmp_path: Path) -> None:
    proc = run("--dry-run", "aarch64", str(tmp_path / "site"), "msgspec==0.20.0")
    assert proc.returncode == 0, proc.stderr
    cmd = proc.stdout.split()
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert "--only-binary=:all:" in cmd and cmd[cmd.index("--python-version") + 1] == "3.11"
    platforms = {cmd[i + 1] for i, word in enumerate(cmd) if word == "--platform"}
    # The SDK's aarch64 wheel is manylinux_2_26; bookworm's glibc is 2.36.
    assert {"manylinux_2_26_aarch64", "manylinux_2_36_aarch64", "linux_aarch64"} <= platforms
    assert not any("x86_64" in p for p in platforms)
    assert "msgspec==0.20.0" in cmd
    assert not (tmp_path / "site").exists()


def test_installs_aarch64_binaries(tmp_path: Path) -> None:
    """A real install from PyPI: the extension module that lands is an aarch64 ELF."""
    site = tmp_path / "site"
    proc = run("aarch64", str(site), "msgspec==0.20.0")
    if proc.returncode != 0 and "No matching distribution" not in proc.stderr:
        if "NewConnectionError" in proc.stderr or "Network is unreachable" in proc.stderr:
            pytest.skip("PyPI is not reachable")
    assert proc.returncode == 0, proc.stderr
    (so,) = site.glob("msgspec/_core*.so")
    head = so.read_bytes()[:20]
    assert head[:4] == b"\x7fELF"
    assert struct.unpack_from("<H", head, 18)[0] == EM_AARCH64
