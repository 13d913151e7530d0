"""The one command: every job listed, plain-text help at every level, .env settings."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from elastic_channels.cli import build_parser

JOBS = ["run", "worker", "bench", "emulator", "setup", "plan", "monitor", "dashboard"]


def cli(*args: str, cwd: Path | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, env=env,
    )  # fmt: skip


def test_top_level_help_lists_every_job() -> None:
    done = cli("--help")
    assert done.returncode == 0, done.stderr
    for job in JOBS:
        assert f"\n    {job}" in done.stdout, job
    assert "``" not in done.stdout and ":data:" not in done.stdout  # no RST markup


def _levels(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """Every command path of the parser tree: (), ("run",), ("emulator", "faults", "add")..."""
    yield path
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias names the same parser again
                    seen.add(id(sub))
                    yield from _levels(sub, (*path, name))


# The CLI builds the parser of the chosen job only (its module, and so its dependencies,
# load when it is chosen): walk each job's tree from its own parser.
LEVELS = [()] + [
    level for job in JOBS for level in _levels(build_parser(job)) if level[:1] == (job,)
]
#: Markup or leftovers that have no place in plain-text help.
NOT_PLAIN = [
    (re.compile(r"``"), "RST double backticks"),
    (re.compile(r"::$", re.M), "an RST literal-block marker at a line end"),
    (re.compile(r":(?:data|func|class|mod|meth|attr|ref):`"), "an RST role"),
    (re.compile(r"%\(\w+\)"), "an unexpanded %(...) placeholder"),
    (re.compile(r"default: None"), "a default shown as None"),
    (re.compile(r"unavailable here"), "a job whose module failed to import"),
]


def test_the_walk_reaches_nested_subcommands() -> None:
    assert {("run",), ("emulator", "serve"), ("emulator", "faults", "add")} <= set(LEVELS)
    assert {(job,) for job in JOBS} <= set(LEVELS)


@pytest.mark.parametrize("path", LEVELS, ids=[" ".join(p) or "top" for p in LEVELS])
def test_every_level_has_plain_text_help(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser(path[0] if path else None).parse_args([*path, "--help"])
    out, err = capsys.readouterr()
    assert exc.value.code == 0, err
    assert out.startswith(f"usage: {' '.join(('elastic-channels', *path))}"), out[:200]
    assert len(out.strip().split("\n\n")) >= 2, "usage only: no text that explains"
    for pattern, what in NOT_PLAIN:
        found = pattern.search(out)
        near = out[max(0, found.start() - 80) : found.end() + 80] if found else ""
        assert found is None, f"{what} in `{' '.join(path)} --help`: {near!r}"


@pytest.mark.parametrize("job", JOBS)
def test_every_job_answers_help_as_its_own_process(job: str) -> None:
    done = cli(job, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: elastic-channels {job}")


def test_an_unknown_job_is_refused_with_the_list() -> None:
    done = cli("launch")
    assert done.returncode == 2
    assert "invalid choice: 'launch'" in done.stderr and "run" in done.stderr


def _env_without_snowflake() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_")}


def test_settings_come_from_a_dot_env_file_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SNOWFLAKE_DATABASE=FROM_FILE\nSNOWFLAKE_SCHEMA=FILE_SCHEMA\n")
    done = cli("setup", "--print", cwd=tmp_path, env=_env_without_snowflake())
    assert done.returncode == 0, done.stderr
    assert "CREATE DATABASE IF NOT EXISTS FROM_FILE" in done.stdout
    assert "FROM_FILE.FILE_SCHEMA.RESORT_SALES" in done.stdout
    env = {**_env_without_snowflake(), "SNOWFLAKE_DATABASE": "FROM_ENV"}
    done = cli("setup", "--print", cwd=tmp_path, env=env)
    assert "CREATE DATABASE IF NOT EXISTS FROM_ENV" in done.stdout
    assert "FROM_FILE" not in done.stdout


def test_without_a_dot_env_file_a_missing_setting_is_named(tmp_path: Path) -> None:
    done = cli("setup", "--print", cwd=tmp_path, env=_env_without_snowflake())
    assert done.returncode == 2
    assert "--database (or SNOWFLAKE_DATABASE) is required" in done.stderr
