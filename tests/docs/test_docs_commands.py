"""Every documented command that can run here does run, as written.

Extracts the ```bash blocks and ```python snippets of README.md and docs/*.md. Each
bash line (continuations joined, ``a && b`` split) runs in one scratch directory per
document, in order, so a later command sees what an earlier one made (a run's data
dir, say). Durations are cut to a few seconds; nothing else is changed. Commands that
cannot run inside a test are skipped by rule, each rule with its reason, and a test
checks that no rule hides everything. ```console blocks (a cloud, an account) are
never run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: (pattern, why it is not run here)
SKIPPED = [
    (r"^pip install", "installs the project: the test runs on the installed one"),
    (r"^bash scripts/test\.sh$", "the test command itself (its --help is run instead)"),
    (r"^cargo bench", "a benchmark: minutes of CPU, figures in docs/PERFORMANCE.md"),
    (r"^python3? benches/", "a benchmark: minutes of CPU, figures in docs/PERFORMANCE.md"),
    (r"^(docker|kubectl|eksctl|aws) ", "needs a container engine or a cloud"),
    (r"^bash scripts/build_image\.sh", "builds an image: ~10 minutes, opt-in"),
]
SHORT_S = "2"


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)


def bash_commands(path: Path) -> list[str]:
    out: list[str] = []
    for block in _blocks(path.read_text(), "bash"):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
            out += [part.strip() for part in line.split("&&") if part.strip()]
    return out


def skip_reason(command: str) -> str | None:
    for pattern, why in SKIPPED:
        if re.search(pattern, command):
            return why
    return None


def shortened(command: str) -> str:
    return re.sub(r"--duration-seconds \S+", f"--duration-seconds {SHORT_S}", command)


def _cases() -> list:
    cases = []
    for doc in DOCS:
        for i, cmd in enumerate(bash_commands(doc)):
            cases.append(pytest.param(doc, i, cmd, id=f"{doc.name}:{i}:{cmd[:40]}"))
    return cases


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory):
    """One scratch directory per document, shared by its commands in order."""
    return {doc: tmp_path_factory.mktemp(doc.stem) for doc in DOCS}


@pytest.mark.parametrize(("doc", "index", "command"), _cases())
def test_documented_command_runs(doc: Path, index: int, command: str, workdirs) -> None:
    why = skip_reason(command)
    if why:
        pytest.skip(why)
    cmd = shortened(command)
    argv = shlex.split(cmd)
    if argv[0].startswith(("deploy/", "scripts/")):
        argv[0] = str(REPO / argv[0])
    if argv[0] == "bash" and len(argv) > 1 and argv[1].startswith(("deploy/", "scripts/")):
        argv[1] = str(REPO / argv[1])
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for var in [k for k in env if k.startswith("SNOWFLAKE_")]:
        del env[var]  # documented local commands must not depend on an account
    done = subprocess.run(
        argv, cwd=workdirs[doc], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (
        f"{doc.name}: `{command}` exited {done.returncode}\n"
        f"stdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr[-3000:]}"
    )


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_python_snippets_run(doc: Path, workdirs) -> None:
    """In the document's scratch directory, after its commands (a snippet may read what
    they left, as the Iceberg one reads the run's table)."""
    snippets = _blocks(doc.read_text(), "python")
    if not snippets:
        pytest.skip(f"{doc.name} has no python snippet")
    for snippet in snippets:
        done = subprocess.run(
            [sys.executable, "-c", snippet], cwd=workdirs[doc], capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, f"{doc.name} snippet failed:\n{snippet}\n{done.stderr}"


def test_the_skip_rules_leave_the_main_commands_in() -> None:
    readme = bash_commands(REPO / "README.md")
    run = [c for c in readme if skip_reason(c) is None]
    assert any(c.startswith("elastic-channels run ") for c in run), readme
    assert any(c.startswith("deploy/run_job.sh") for c in run), readme
    assert [c for c in readme if c == "bash scripts/test.sh"], "the test command is documented"


@pytest.mark.parametrize("script", ["scripts/test.sh", "scripts/install.sh"])
def test_script_help_helps_and_runs_nothing(script: str) -> None:
    done = subprocess.run(
        ["bash", str(REPO / script), "--help"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and "usage" in done.stdout.lower(), done.stdout + done.stderr
    assert "==>" not in done.stdout  # no step ran
