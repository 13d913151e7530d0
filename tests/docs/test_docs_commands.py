"""Every documented command that can run here does run, as written; every quoted one has
the flags it shows.

The steps of README.md and docs/*.md (``doc_commands``: ```bash lines, ```python
snippets, commands in markdown tables) run in one scratch directory per document, in
the document's order, so a later step sees what an earlier one made (a run's data dir,
say). A step's test runs the steps before it first, when no other test has, so any
one test can run alone (``-k``). Durations are cut to a few seconds and benchmarks run
in the brief form ``BRIEF`` gives them; nothing else is changed. Commands that cannot
run inside a test are skipped by ``SKIPPED``, each rule with its reason. Every command
the documents quote, run or not, in a block, a table or a sentence, must use only the
flags its own ``--help`` lists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_commands import DOCS, REPO, Step, argv_here, every_command, steps, unknown_flags

#: (pattern, why a command it matches is not run here)
SKIPPED = [
    (r"^pip install", "installs the project: the test runs on the installed one"),
    (r"^pip download", "needs the network (PyPI)"),
    (r"^bash scripts/test\.sh$", "the test command itself (its --help is run instead)"),
    (r"^cargo bench", "builds and runs criterion benches: minutes (the name is checked)"),
    (r"^(docker|kubectl|eksctl|aws|helm) ", "needs a container engine or a cloud CLI"),
    (r"^bash scripts/build_image\.sh", "builds an image: about 10 minutes, opt-in"),
]
#: Benchmarks that can run briefly here: the flags set for that, and why those.
BRIEF = {
    "benches/bench_encoders.py": (
        {"--repeats": "1", "--sizes": "1000"},
        "one small round still runs every path and prints the table",
    ),
    "benches/bench_worker_paths.py": (
        {"--duration-seconds": "1", "--rates": "5e6", "--zstd": "on"},
        "by default 12 worker runs; one rate and one compression per path",
    ),
    "benches/bench_emulator.py": (
        {
            "--duration-seconds": "2",
            "--warmup-seconds": "0.5",
            "--rounds": "1",
            "--baseline": "none",
        },
        "the baseline is an older emulator built from git history: minutes",
    ),
    "benches/bench_landing_steps.py": (
        {"--bodies": "2", "--repeat": "1"},
        "60 bodies x 5 runs of every step by default; two bodies once still run each step",
    ),
}
SHORT_S = "2"
#: Commands a document quotes as history, not to be typed: (pattern, why).
RETIRED = [
    (r"elastic_channels\.benchmark_client_cpu", "the client-only bench before the layout change"),
]


def skip_reason(command: str) -> str | None:
    for pattern, why in SKIPPED:
        if re.search(pattern, command):
            return why
    bench = re.match(r"python3? (benches/\S+\.py)", command)
    if bench and bench.group(1) not in BRIEF:
        return f"{bench.group(1)} has no brief form in BRIEF (its flags are checked)"
    return None


def _set_flag(argv: list[str], flag: str, value: str) -> list[str]:
    if flag in argv:
        i = argv.index(flag)
        return [*argv[: i + 1], value, *argv[i + 2 :]]
    return [*argv, flag, value]


def runnable_argv(command: str) -> list[str]:
    """The command as it runs here: durations cut, a benchmark in its brief form."""
    argv = argv_here(command)
    if "--duration-seconds" in argv:
        argv = _set_flag(argv, "--duration-seconds", SHORT_S)
    bench = re.match(r"python3? (benches/\S+\.py)", command)
    if bench:
        for flag, value in BRIEF[bench.group(1)][0].items():
            argv = _set_flag(argv, flag, value)
    return argv


class DocRun:
    """One document's steps run in order in its scratch directory, each at most once."""

    def __init__(self, doc: Path, workdir: Path) -> None:
        self.workdir = workdir
        self.steps = steps(doc)
        self.results: dict[Step, subprocess.CompletedProcess | str] = {}

    def run(self, step: Step) -> subprocess.CompletedProcess | str:
        """Run the steps before ``step`` that have not run, then ``step``: its process,
        or why it was skipped."""
        for earlier in self.steps[: self.steps.index(step) + 1]:
            if earlier not in self.results:
                self.results[earlier] = self._run(earlier)
        return self.results[step]

    def failed_before(self, step: Step) -> list[str]:
        return [
            s.id
            for s in self.steps[: self.steps.index(step)]
            if not isinstance(r := self.results[s], str) and r.returncode != 0
        ]

    def _run(self, step: Step) -> subprocess.CompletedProcess | str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_")}
        env["PYTHONUNBUFFERED"] = "1"  # documented local steps must not need an account
        if step.kind == "python":
            argv, timeout = [sys.executable, "-c", step.text], 120
        elif why := skip_reason(step.text):
            return why
        else:
            argv, timeout = runnable_argv(step.text), 300
        return subprocess.run(
            argv, cwd=self.workdir, env=env, capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


@pytest.fixture(scope="module")
def doc_runs(tmp_path_factory):
    return {doc: DocRun(doc, tmp_path_factory.mktemp(doc.stem)) for doc in DOCS}


ALL_STEPS = [s for doc in DOCS for s in steps(doc)]


@pytest.mark.parametrize("step", ALL_STEPS, ids=[s.id for s in ALL_STEPS])
def test_documented_step_runs(step: Step, doc_runs) -> None:
    run = doc_runs[step.doc]
    done = run.run(step)
    if isinstance(done, str):
        pytest.skip(done)
    earlier = run.failed_before(step)
    assert done.returncode == 0, (
        f"{step.doc.name} line {step.line}: exited {done.returncode}\n{step.text}\n"
        f"stdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr[-3000:]}"
        + (f"\n(earlier steps of the document failed too: {earlier})" if earlier else "")
    )


QUOTED = [(doc, n, c) for doc in DOCS for n, c in every_command(doc)]


@pytest.mark.parametrize(
    ("doc", "line", "command"), QUOTED, ids=[f"{d.name}:{n}:{c[:40]}" for d, n, c in QUOTED]
)
def test_quoted_command_uses_only_flags_it_has(doc: Path, line: int, command: str) -> None:
    for pattern, why in RETIRED:
        if re.search(pattern, command):
            pytest.skip(why)
    assert unknown_flags(command) == [], f"{doc.name} line {line}: `{command}`"


def test_the_skip_rules_leave_the_main_commands_in() -> None:
    commands = [s.text for s in ALL_STEPS if s.kind == "command"]
    run = [c for c in commands if skip_reason(c) is None]
    assert len(run) > len(commands) / 2, "the skip rules hide most documented commands"
    readme = [s.text for s in steps(REPO / "README.md") if s.kind == "command"]
    assert any(c.startswith("elastic-channels run ") and skip_reason(c) is None for c in readme)
    assert any(c.startswith("python benches/") and skip_reason(c) is None for c in readme)
    assert "bash scripts/test.sh" in readme, "the test command is documented"
    assert all(why for _, why in SKIPPED) and all(why for _, why in BRIEF.values())


def test_every_brief_flag_is_a_flag_of_its_benchmark() -> None:
    for script, (flags, _) in BRIEF.items():
        assert unknown_flags(f"python {script} {' '.join(flags)}") == [], script


@pytest.mark.parametrize("script", ["scripts/test.sh", "scripts/install.sh"])
def test_script_help_helps_and_runs_nothing(script: str) -> None:
    done = subprocess.run(
        ["bash", str(REPO / script), "--help"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and "usage" in done.stdout.lower(), done.stdout + done.stderr
    assert "==>" not in done.stdout  # no step ran
