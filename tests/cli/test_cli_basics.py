"""The command's basics: --version names the installed distribution's version, a bare
``elastic-channels`` shows what it can do, a reader that goes away (``| head -1``) ends
it quietly, and scripts/install_browser.sh --help explains and installs nothing."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
from importlib.metadata import entry_points, version
from pathlib import Path

import pytest

from elastic_channels.cli import COMMANDS

REPO = Path(__file__).resolve().parents[2]
INSTALL_BROWSER = REPO / "scripts" / "install_browser.sh"
#: The `python -m` form of the command (it runs the same cli.main as the console script).
CLI = [sys.executable, "-m", "elastic_channels"]


def _distribution() -> str:
    """The distribution's name, as pyproject.toml's [project] table spells it."""
    text = (REPO / "pyproject.toml").read_text()
    project = text.split("\n[project]\n", 1)[1].split("\n[", 1)[0]
    found = re.search(r'^name\s*=\s*"([^"]+)"', project, flags=re.M)
    assert found is not None, "no name in pyproject.toml's [project] table"
    return found.group(1)


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=30, cwd=cwd, env=_env(),
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _console_script() -> Path | None:
    """The installed `elastic-channels` script of this interpreter, if there is one."""
    path = Path(sysconfig.get_path("scripts")) / "elastic-channels"
    return path if path.is_file() else None


# --- --version ---------------------------------------------------------------------------


def test_the_console_script_is_cli_main() -> None:
    scripts = entry_points(group="console_scripts")
    (ep,) = [ep for ep in scripts if ep.name == "elastic-channels"]
    assert ep.value == "elastic_channels.cli:main"
    assert ep.dist is not None and ep.dist.name == _distribution()


def test_version_prints_the_installed_distributions_version(tmp_path: Path) -> None:
    expected = f"elastic-channels {version(_distribution())}\n"
    assert "unknown" not in expected
    runs = [CLI]
    script = _console_script()
    if script is not None:
        runs.append([sys.executable, str(script)])
    for argv in runs:
        done = _run([*argv, "--version"], cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected, argv
        assert done.stderr == ""


# --- a bare elastic-channels -------------------------------------------------------------


def test_bare_command_prints_its_help_and_exits_0(tmp_path: Path) -> None:
    done = _run(CLI, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("usage: elastic-channels [-h] [--version] COMMAND ...\n")
    # Every command is listed by name with its one-line help (its first word, at least).
    listed = re.findall(r"^    (\w+)\b", done.stdout, flags=re.M)
    assert listed == [name for name, _, _ in COMMANDS]
    for name, _, help_text in COMMANDS:
        assert help_text.split()[0] in done.stdout, name
    assert "examples:" in done.stdout
    # The same text as --help: the bare command is not a different, shorter page.
    assert done.stdout == _run([*CLI, "--help"], cwd=tmp_path).stdout


# --- a reader that goes away -------------------------------------------------------------

#: A bound on the pipe's capacity; set on the pipe where Linux allows it (F_SETPIPE_SZ).
PIPE_SIZE = 4096
#: A figure label this long makes `plan` print far more than the pipe holds, so its print
#: is still blocked on the pipe when the reader goes: the EPIPE surely comes mid-print.
LABEL_CHARS = 200_000


def _small_pipe() -> tuple[int, int]:
    r, w = os.pipe()
    if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux; elsewhere the label is longer than a pipe
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) < LABEL_CHARS
    return r, w


def _long_plan(tmp_path: Path) -> list[str]:
    figures = tmp_path / "figures.json"
    figures.write_text(
        json.dumps({
            "per_channel_mbps": 10, "per_vcpu_mbps": 50, "cpu_s_per_gb": 20,
            "rss_mib_per_pod": 300, "label": "x" * LABEL_CHARS,
        })
    )  # fmt: skip
    return [*CLI, "plan", "--target-gbps", "41.8", "--figures", str(figures)]


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_a_reader_that_stops_after_one_line_ends_it_quietly(
    tmp_path: Path, unbuffered: bool
) -> None:
    """`elastic-channels plan ... | head -1`: exit 0 and nothing on stderr."""
    r, w = _small_pipe()
    try:
        proc = subprocess.Popen(
            _long_plan(tmp_path), stdout=w, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            cwd=tmp_path, env=_env(PYTHONUNBUFFERED="1" if unbuffered else None),
        )  # fmt: skip
    finally:
        os.close(w)
    with os.fdopen(r, "rb", buffering=0) as reader:  # one line, then the read end closes
        first = b""
        while not first.endswith(b"\n"):
            byte = reader.read(1)
            if not byte:
                break
            first += byte
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert first.startswith(b"plan for 41.8 GB/s"), first
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode()
    assert err == b""
    assert proc.returncode == 0


#: A command that leaves a line in stdout's buffer when the pipe breaks under it: its
#: first print stays buffered, its second (longer than the buffer) first flushes that
#: line, which meets the closed pipe and stays in the buffer for the interpreter's flush
#: at exit. The command is `plan` with its function swapped for this one.
LEFT_IN_THE_BUFFER = """
import sys
from elastic_channels import cli
from elastic_channels.fleet import plan

def cmd_plan(_args):
    print("a short first line")
    print("x" * 1_000_000)
    return 0

plan.cmd_plan = cmd_plan
sys.exit(cli.main(["plan", "--target-gbps", "41.8"]))
"""


def test_output_left_in_the_buffer_is_not_flushed_into_the_closed_pipe(tmp_path: Path) -> None:
    """What ``cli._quiet_broken_pipe`` is for: after a BrokenPipeError, the interpreter's
    own flush at exit must not raise a second one (exit 120, 'Exception ignored')."""
    r, w = _small_pipe()
    os.close(r)
    try:
        done = subprocess.run(
            [sys.executable, "-c", LEFT_IN_THE_BUFFER], stdout=w, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL, cwd=tmp_path, env=_env(PYTHONUNBUFFERED=None),
            timeout=30,
        )  # fmt: skip
    finally:
        os.close(w)
    assert b"BrokenPipeError" not in done.stderr, done.stderr.decode()
    assert done.stderr == b""
    assert done.returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["plan", "--target-gbps", "41.8"], id="plan"),
        pytest.param([], id="bare"),
    ],
)
@pytest.mark.parametrize(
    "unbuffered",
    [
        pytest.param(False, id="buffered"),
        pytest.param(True, id="unbuffered"),
    ],
)  # fmt: skip
def test_a_reader_gone_before_any_output_ends_it_quietly(
    tmp_path: Path, args: list[str], unbuffered: bool
) -> None:
    """`elastic-channels plan ... | true` (the reader gone before a byte is written)."""
    r, w = os.pipe()
    os.close(r)
    try:
        done = subprocess.run(
            [*CLI, *args], stdout=w, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            cwd=tmp_path, env=_env(PYTHONUNBUFFERED="1" if unbuffered else None), timeout=30,
        )  # fmt: skip
    finally:
        os.close(w)
    assert b"Traceback" not in done.stderr and b"BrokenPipeError" not in done.stderr, (
        done.stderr.decode()
    )
    assert done.returncode == 0


# --- scripts/install_browser.sh --help ---------------------------------------------------

#: What install_browser.sh would run to install; stand-ins record any call and fail.
INSTALLERS = ("apt-get", "sudo")


def run_install_browser(
    script: Path, tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Runs ``script`` on a PATH of stand-ins for the installers and bash and the few
    tools the script uses, nothing else: no chromium is found, so a run that does not
    stop at --help goes on to apt-get (or sudo). Returns the process and the calls."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    for tool in INSTALLERS:
        stub = bindir / tool
        stub.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{log}"\nexit 97\n')
        stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    for tool in ("bash", "cat", "id", "env", "sh"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bindir / tool).symlink_to(found)
    done = subprocess.run(
        [str(bindir / "bash"), str(script), *args], capture_output=True, text=True,
        timeout=30, cwd=tmp_path, stdin=subprocess.DEVNULL,
        env={"PATH": str(bindir), "HOME": str(tmp_path), "LANG": "C.UTF-8"},
    )  # fmt: skip
    return done, (log.read_text().splitlines() if log.exists() else [])


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_install_browser_help_explains_and_installs_nothing(tmp_path: Path, flag: str) -> None:
    done, calls = run_install_browser(INSTALL_BROWSER, tmp_path, flag)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("usage: bash scripts/install_browser.sh\n")
    assert "chromium" in done.stdout and "tests/dashboard/test_browser.py" in done.stdout
    assert "already installed" not in done.stdout
    assert calls == [], "--help ran an installer"
