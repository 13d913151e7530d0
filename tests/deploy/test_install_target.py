"""deploy/image/install_target.sh: requirements installed as built for another
architecture (what the image's build stage runs for linux/arm64 on an x86-64 machine)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "image" / "install_target.sh"
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")
EM_AARCH64 = 183


def run(*args: str) -> subprocess.CompletedProcess:
    return run_with({}, *args)


def run_with(settings: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    assert BASH is not None
    env = {**os.environ, "PYTHON": sys.executable, **settings}
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


def test_without_the_targets_python_headers_the_error_says_what_to_install(tmp_path) -> None:
    """hdrhistogram has no aarch64 wheel on PyPI: it must be built, which needs the
    target's libpython3.11-dev; an empty TARGET_ROOT names the missing file."""
    empty = tmp_path / "root"
    empty.mkdir()
    proc = run_with(
        {"TARGET_ROOT": str(empty)}, "aarch64", str(tmp_path / "site"), "hdrhistogram>=0.10,<0.11"
    )
    assert proc.returncode != 0
    assert "building it from its sdist" in proc.stdout
    assert "_sysconfigdata__aarch64-linux-gnu.py" in proc.stderr
    assert "libpython3.11-dev" in proc.stderr


def probe_wheel(where: Path, requires: str) -> Path:
    """A pure-Python wheel that needs ``requires``, as the project's wheel needs
    hdrhistogram: pip then names it "... (from probe)" when nothing matches."""
    wheel = where / "probe-1.0-py3-none-any.whl"
    files = {
        "probe/__init__.py": "",
        "probe-1.0.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: probe\nVersion: 1.0\nRequires-Dist: {requires}\n"
        ),
        "probe-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},,\n" for name in files) + "probe-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr("probe-1.0.dist-info/RECORD", record)
    return wheel


def test_a_dependency_without_a_wheel_is_built_by_its_requirement(tmp_path: Path) -> None:
    """pip reports a missing dependency as "hdrhistogram<0.11,>=0.10 (from probe)": the
    build is asked for the requirement alone (it reaches the missing-headers check)."""
    empty = tmp_path / "root"
    empty.mkdir()
    wheel = probe_wheel(tmp_path, "hdrhistogram<0.11,>=0.10")
    proc = run_with({"TARGET_ROOT": str(empty)}, "aarch64", str(tmp_path / "site"), str(wheel))
    assert proc.returncode != 0
    assert "no linux/aarch64 wheel of hdrhistogram<0.11,>=0.10: building" in proc.stdout
    assert "Invalid requirement" not in proc.stderr
    assert "_sysconfigdata__aarch64-linux-gnu.py" in proc.stderr


ROOTFS = REPO / "target" / "aarch64-python" / "rootfs"


@pytest.mark.skipif(
    shutil.which("aarch64-linux-gnu-gcc") is None
    or not (ROOTFS / "usr/include/aarch64-linux-gnu/python3.11/pyconfig.h").exists(),
    reason="needs the cross compiler and scripts/ci_arm64.sh's aarch64 root file system",
)
def test_cross_builds_what_pypi_has_no_aarch64_wheel_of(tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = run_with({"TARGET_ROOT": str(ROOTFS)}, "aarch64", str(site), "hdrhistogram>=0.10,<0.11")
    assert proc.returncode == 0, proc.stderr
    (so,) = site.glob("pyhdrh.cpython-311-aarch64-linux-gnu.so")
    assert struct.unpack_from("<H", so.read_bytes()[:20], 18)[0] == EM_AARCH64
