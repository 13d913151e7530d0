"""What every script in deploy/ owes its user: --help that helps and runs nothing, a
--dry-run that needs no settings and calls no cloud tool, errors that name the bad
argument, shellcheck-clean source, and a setting in .env.example for every one it reads.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from elastic_channels.dashboard.settings import ENV as DASHBOARD_ENV

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.stem for p in (REPO / "deploy").glob("*.sh"))
#: What each script needs on its command line before --dry-run can run it.
DRY_RUN_ARGS: dict[str, list[str]] = {
    "run_job": ["dry-1", "--target-bps", "92e6", "--duration-seconds", "60", "--workers", "1"],
    "deploy_monitor": ["dry-1"],
}
#: Scripts whose dry run prints manifests (YAML) rather than a script of commands.
RENDERERS = {"run_job", "deploy_monitor"}


def test_the_one_time_steps_are_all_there() -> None:
    assert set(SCRIPTS) >= {
        "create_cluster",
        "build_and_push",
        "create_secret",
        "allowlist",
        "deploy_monitor",
        "run_job",
        "teardown",
    }


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_explains_and_runs_nothing(deploy, script: str) -> None:
    for args in (["--help"], ["-h"], [*DRY_RUN_ARGS.get(script, []), "--bogus", "--help"]):
        proc = deploy.run(script, *args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        assert "--dry-run" in proc.stdout and "--help" in proc.stdout
        assert f"deploy/{script}.sh" in proc.stdout  # a usage line
        assert not proc.stdout.startswith(("#!", "#")), "the comment markers are stripped"
    assert deploy.calls() == []


@pytest.mark.parametrize("script", SCRIPTS)
def test_dry_run_needs_no_settings_and_no_cloud_tool(deploy, script: str) -> None:
    proc = deploy.run(script, *DRY_RUN_ARGS.get(script, []), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    assert deploy.calls() == [], "a dry run called a cloud tool"
    # What is missing is named on stderr, and shown as <NAME> in the output.
    for name in re.findall(r"^  ([A-Z_]+) \(", proc.stderr, flags=re.M):
        assert f"<{name}>" in proc.stdout
    if script not in RENDERERS:
        syntax = subprocess.run(["bash", "-n"], input=proc.stdout, capture_output=True, text=True)
        assert syntax.returncode == 0, f"the dry run is not a bash script:\n{syntax.stderr}"


@pytest.mark.parametrize("script", SCRIPTS)
def test_unknown_option_is_named(deploy, script: str) -> None:
    proc = deploy.run(script, *DRY_RUN_ARGS.get(script, []), "--frobnicate", "--dry-run")
    assert proc.returncode == 2
    assert "--frobnicate" in proc.stderr and "--help" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s != "run_job"])
def test_option_without_its_value_is_named(deploy, script: str) -> None:
    text = (REPO / "deploy" / f"{script}.sh").read_text()
    option = re.search(r"^\s+(--[a-z-]+) \|", text, flags=re.M)
    assert option is not None, "no option that takes a value"
    proc = deploy.run(script, *DRY_RUN_ARGS.get(script, []), option.group(1))
    assert proc.returncode == 2
    assert f"{option.group(1)} needs a value" in proc.stderr


def test_real_runs_name_the_missing_tool(deploy, tmp_path: Path) -> None:
    """Without --dry-run and without the cloud tool, the error says which and how."""
    bare = tmp_path / "bare"
    bare.mkdir()
    for tool in ("bash", "dirname", "basename", "sed", "awk", "head", "tr", "grep", "cat"):
        found = shutil.which(tool)
        assert found is not None
        (bare / tool).symlink_to(found)
    proc = deploy.run("create_cluster", PATH=str(bare))
    assert proc.returncode == 2
    assert "'eksctl' not found" in proc.stderr and "--dry-run" in proc.stderr


def _settings_read(text: str) -> set[str]:
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    names = set(re.findall(r"\$\{([A-Z][A-Z0-9_]*):-", text))
    names |= set(re.findall(r'require ([A-Z][A-Z0-9_]*) "', text))
    return names


def test_env_example_names_every_setting() -> None:
    example = (REPO / ".env.example").read_text()
    declared = set(re.findall(r"^([A-Z][A-Z0-9_]*)=", example, flags=re.M))
    read: set[str] = set()
    for path in [*(REPO / "deploy").glob("*.sh"), REPO / "deploy" / "lib" / "common.sh"]:
        read |= _settings_read(path.read_text())
    # and every account or worker setting the package reads from the environment
    for path in (REPO / "python" / "elastic_channels").rglob("*.py"):
        read |= set(re.findall(r'"((?:SNOWFLAKE|SNOWPIPE|ELASTIC)_[A-Z0-9_]+)"', path.read_text()))
    internal = {
        "ENV_FILE", "KEY_FILE",  # the scripts' own
        "ELASTIC_K8S_METRICS",  # a table name, not a setting
        "ELASTIC_EMULATOR_CRASH_AT",  # a test hook of the emulator
        # what `elastic-channels dashboard` hands the Streamlit app it starts
        *DASHBOARD_ENV.values(),
    }  # fmt: skip
    assert read - internal <= declared, f"not in .env.example: {sorted(read - internal - declared)}"
    for key in ("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PRIVATE_KEY_FILE", "REGISTRY"):
        assert key in declared
    # Every value is empty: the defaults live in the scripts, stated in the comments.
    assert re.findall(r"^[A-Z][A-Z0-9_]*=(.+)$", example, flags=re.M) == []


def test_env_example_is_a_valid_env_file(deploy) -> None:
    proc = deploy.run("create_cluster", "--dry-run", ENV_FILE=str(REPO / ".env.example"))
    assert proc.returncode == 0, proc.stderr
    assert "name: elastic-channels" in proc.stdout  # empty values mean the defaults


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck")
def test_shellcheck_clean() -> None:
    paths = [*(REPO / "deploy").glob("**/*.sh")]
    assert len(paths) >= 9
    proc = subprocess.run(["shellcheck", *map(str, paths)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
