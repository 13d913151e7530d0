"""Running the deploy/ scripts in tests: a clean environment and stand-in cloud tools.

Every script runs with only PATH, HOME and LANG from the caller, ``ENV_FILE`` pointing at
an empty file (so a developer's ``.env`` cannot leak in), and a ``bin/`` directory first
on PATH holding stand-ins for every cloud tool. A stand-in records each call (and what
it read on stdin) and, unless a test says otherwise, fails loudly: a dry run that calls
one shows up as a failure.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
CLOUD_TOOLS = ("kubectl", "eksctl", "aws", "docker", "elastic-channels")
BASH = shutil.which("bash")


class Deploy:
    """Runs deploy/ scripts against stand-in tools and reports what they were asked."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path
        self.bindir = tmp_path / "bin"
        self.bindir.mkdir()
        self.log = tmp_path / "calls.log"
        self.env_file = tmp_path / "empty.env"
        self.env_file.write_text("")
        for tool in CLOUD_TOOLS:
            self.stub(tool, f'echo "{tool}: stand-in called unexpectedly" >&2; exit 97')

    def stub(self, tool: str, body: str = "exit 0") -> None:
        """A stand-in for ``tool``: logs ``tool args`` and saves its stdin, then ``body``
        runs with ``$IN`` naming the saved stdin file. The calls of one pipeline are
        logged in the order they started, which is any order."""
        path = self.bindir / tool
        path.write_text(
            "#!/usr/bin/env bash\n"
            # The stages of a pipeline start together: number the calls under a lock.
            f'exec 9>>"{self.log}.lock"; flock 9\n'
            f'n=$(wc -l < "{self.log}" 2>/dev/null || echo 0); n=${{n// /}}\n'
            f'echo "{tool} $*" >> "{self.log}"\n'
            "flock -u 9\n"
            f'IN="{self.dir}/{tool}.$n.stdin"; cat > "$IN"\n'
            f"{body}\n"
        )
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def run(self, script: str, *args: str, **settings: str) -> subprocess.CompletedProcess:
        assert BASH is not None
        env = {
            "PATH": f"{self.bindir}:{os.environ['PATH']}",
            "HOME": str(self.dir),
            "LANG": "C.UTF-8",
            "ENV_FILE": str(self.env_file),
            **settings,
        }
        return subprocess.run(
            [BASH, str(DEPLOY / f"{script}.sh"), *args],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=60,
            cwd=self.dir,
        )

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def stdin_of(self, call_index: int, tool: str) -> str:
        return (self.dir / f"{tool}.{call_index}.stdin").read_text()

    @staticmethod
    def heredoc(text: str, opener: str) -> str:
        """The body of the here-document that starts on the line ending in ``opener``."""
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.endswith(opener))
        end = lines.index(opener.split("'")[1], start + 1)
        return "\n".join(lines[start + 1 : end])

    @staticmethod
    def commands(text: str) -> list[str]:
        """The command lines of a dry run's script: no comments, no here-document bodies."""
        out: list[str] = []
        lines = iter(text.splitlines())
        for line in lines:
            if not line or line.startswith("#"):
                continue
            out.append(line)
            if line.endswith("<<'EOF'") or line.endswith("<<'SQL'"):
                end = line.rsplit("'", 2)[1]
                for body in lines:
                    if body == end:
                        break
        return out


@pytest.fixture
def deploy(tmp_path: Path) -> Deploy:
    if BASH is None:
        pytest.skip("needs bash")
    return Deploy(tmp_path)
