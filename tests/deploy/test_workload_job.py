"""``deploy/run_job.sh --workload NAME|FILE``: a workload file on this machine reaches the
pods through the run's ConfigMap (key ``workload.yaml``, mounted read-only), a shipped
workload by its name; a bad file is refused here, before anything is rendered."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from run_job_support import BASH, REQUIRED, run_job

from elastic_channels.scenario import find_scenario, load_file, scenario_hash, with_overrides
from elastic_channels.workload import load_text, load_workload
from elastic_channels.workload.load import shipped_text

yaml = pytest.importorskip("yaml")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")
#: libyaml when PyYAML has it: the parser kubectl's go-yaml was ported from, and as strict
#: (it refuses a JSON surrogate pair, which the pure-Python one lets through).
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Where the pods read a workload file: the ConfigMap's key, mounted read-only.
MOUNT_DIR = "/etc/elastic-channels"
MOUNTED = f"{MOUNT_DIR}/workload.yaml"
RATE = ["--target-bps", "2e6", "--duration-seconds", "60", "--workers", "3"]
#: Text a template or a shell could take for its own: placeholders, quotes, escapes, an
#: & (a pattern reference in bash 5.2's ${x//p/r}), tabs, unicode, CRLF.
ODD = (
    "# ${SECRET} ${IMAGE} $HOME $(id) `id` \"dq\" 'sq' \\ \\\\ \\n \\u0024 & \\& \t tab\n"
    "# é ✓ 😀 ---\n"
)


def workload_text(name: str = "mine", table: str = "MINE_ROWS", extra: str = "") -> str:
    """A valid workload file: the shipped iot-telemetry one, renamed, ``extra`` first."""
    text = shipped_text("iot-telemetry")
    text = text.replace("name: iot-telemetry\n", f"name: {name}\n", 1)
    text = text.replace("table: IOT_TELEMETRY\n", f"table: {table}\n", 1)
    assert f"table: {table}\n" in text and f"name: {name}\n" in text
    return extra + text


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))  # as it is: no newline translation
    return path


def render(*args: str, **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    proc = run_job("wl-1", *args, *REQUIRED, "--dry-run", **kw)
    assert proc.returncode == 0, proc.stderr
    docs = {d["kind"]: d for d in yaml.load_all(proc.stdout, Loader=LOADER) if d is not None}
    assert set(docs) == {"ConfigMap", "Job"}
    return docs["ConfigMap"], docs["Job"]


def pod(job: dict[str, Any]) -> dict[str, Any]:
    return job["spec"]["template"]["spec"]


def worker_args(job: dict[str, Any]) -> list[str]:
    (container,) = pod(job)["containers"]
    return container["args"]


def flag(args: list[str], name: str) -> str:
    assert args.count(name) == 1, f"{name} given {args.count(name)} times: {args}"
    return args[args.index(name) + 1]


def workload_volume(config_map: dict[str, Any], job: dict[str, Any]) -> str:
    """The path the pods see the ConfigMap's workload.yaml at, checked on the way: one
    volume of the run's ConfigMap with that key alone, mounted read-only."""
    volumes = [v for v in pod(job)["volumes"] if "configMap" in v]
    assert len(volumes) == 1, volumes
    volume = volumes[0]
    assert volume["configMap"]["name"] == config_map["metadata"]["name"]
    assert volume["configMap"]["items"] == [{"key": "workload.yaml", "path": "workload.yaml"}]
    (container,) = pod(job)["containers"]
    mounts = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert len(mounts) == 1 and mounts[0]["readOnly"] is True, mounts
    return f"{mounts[0]['mountPath'].rstrip('/')}/workload.yaml"


def no_workload_mount(config_map: dict[str, Any], job: dict[str, Any]) -> None:
    assert "workload.yaml" not in config_map["data"]
    assert not [v for v in pod(job)["volumes"] if "configMap" in v]
    (container,) = pod(job)["containers"]
    assert [m["name"] for m in container["volumeMounts"]] == ["snowflake-key", "tmp"]


@pytest.fixture
def mine(tmp_path: Path) -> Path:
    return write(tmp_path / "mine.yaml", workload_text())


def test_a_workload_file_reaches_the_pods_through_the_config_map(mine: Path) -> None:
    config_map, job = render("--workload", str(mine), *RATE)
    assert config_map["data"]["workload.yaml"] == mine.read_bytes().decode("utf-8")
    args = worker_args(job)
    assert flag(args, "--workload") == MOUNTED == workload_volume(config_map, job)
    # The pods send to the workload's pipe, the one setup --workload made.
    assert config_map["data"]["SNOWFLAKE_PIPE"] == "MINE_ROWS_PIPE"
    assert load_text(config_map["data"]["workload.yaml"]).table == "MINE_ROWS"
    assert flag(args, "--target-bps") == "2000000" and job["spec"]["completions"] == 3


@pytest.mark.parametrize("version", ["1.29.0", "latest"])
def test_the_workload_job_is_valid_kubernetes(mine: Path, version: str) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    if version == "latest":
        version = kv.latest_version()
    for doc in render("--workload", str(mine), *RATE):
        kv.validate(doc, version, strict=True)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_any_text_arrives_unchanged(tmp_path: Path, newline: str) -> None:
    text = workload_text(extra=ODD).replace("\n", newline) + newline * 2
    f = write(tmp_path / "odd rows.yaml", text)
    config_map, job = render("--workload", str(f), *RATE)
    assert config_map["data"]["workload.yaml"] == text
    assert pod(job)["containers"][0]["image"] == REQUIRED[1]
    assert flag(worker_args(job), "--workload") == MOUNTED


def test_a_shipped_name_passes_the_name_and_mounts_nothing() -> None:
    config_map, job = render("--workload", "clickstream", *RATE)
    assert flag(worker_args(job), "--workload") == "clickstream"
    no_workload_mount(config_map, job)
    assert config_map["data"]["SNOWFLAKE_PIPE"] == load_workload("clickstream").pipe
    # A pipe that is named wins over the workload's.
    config_map, _ = render("--workload", "clickstream", "--pipe", "OTHER_PIPE", *RATE)
    assert config_map["data"]["SNOWFLAKE_PIPE"] == "OTHER_PIPE"


def test_no_workload_is_resort_sales_as_before() -> None:
    config_map, job = render(*RATE)
    assert "--workload" not in worker_args(job)
    no_workload_mount(config_map, job)
    assert config_map["data"]["SNOWFLAKE_PIPE"] == "RESORT_SALES_PIPE"


def test_the_workload_setting_and_the_option(tmp_path: Path, mine: Path) -> None:
    # WORKLOAD (the environment or .env) is the flags-only form's, as for run.
    config_map, job = render(*RATE, cwd=tmp_path, settings={"WORKLOAD": "mine.yaml"})
    assert config_map["data"]["workload.yaml"] == mine.read_text(encoding="utf-8")
    assert flag(worker_args(job), "--workload") == MOUNTED
    config_map, job = render("--workload", "iot-telemetry", *RATE, settings={"WORKLOAD": "x.yml"})
    assert flag(worker_args(job), "--workload") == "iot-telemetry"
    no_workload_mount(config_map, job)
    # A scenario's workload is its key: WORKLOAD does not change it.
    config_map, job = render("--scenario", "smoke", settings={"WORKLOAD": str(mine)})
    assert "--workload" not in worker_args(job)
    no_workload_mount(config_map, job)


def scenario_file(tmp_path: Path, workload: str) -> Path:
    return write(
        tmp_path / "sc.yaml",
        f"name: sc\nworkload: {workload}\nstages:\n  - {{seconds: 30, mbps: 2}}\n",
    )


def test_a_scenarios_workload_file_reaches_the_pods(tmp_path: Path, mine: Path) -> None:
    text = workload_text(extra=ODD)
    write(mine, text)
    sc = scenario_file(tmp_path, "mine.yaml")  # relative: from where run_job.sh runs
    config_map, job = render("--scenario", str(sc), cwd=tmp_path)
    assert config_map["data"]["workload.yaml"] == text
    args = worker_args(job)
    assert flag(args, "--workload") == MOUNTED == workload_volume(config_map, job)
    assert config_map["data"]["SNOWFLAKE_PIPE"] == "MINE_ROWS_PIPE"
    # The hash and the scenario.yaml shown are the scenario's as written, here.
    shown = yaml.load(config_map["data"]["scenario.yaml"], Loader=LOADER)
    assert shown["workload"] == "mine.yaml"
    assert len(flag(args, "--scenario-hash")) == 12


def test_workload_overrides_a_scenarios_key(tmp_path: Path, mine: Path) -> None:
    config_map, job = render("--scenario", "step", "--workload", str(mine))
    args = worker_args(job)
    assert flag(args, "--workload") == MOUNTED == workload_volume(config_map, job)
    assert config_map["data"]["workload.yaml"] == mine.read_text(encoding="utf-8")
    expected = with_overrides(load_file(find_scenario("step")), {"workload": str(mine)})
    assert flag(args, "--scenario-hash") == scenario_hash(expected)
    # And the other way: a shipped name in place of a scenario's file.
    sc = scenario_file(tmp_path, str(mine))
    config_map, job = render("--scenario", str(sc), "--workload", "wide-events")
    assert flag(worker_args(job), "--workload") == "wide-events"
    no_workload_mount(config_map, job)


def bad_workload(tmp_path: Path) -> Path:
    text = workload_text().replace("range: {min: -20, max: 45}", "range: {min: 50, max: 40}")
    assert "min: 50" in text
    return write(tmp_path / "bad.yaml", text)


def test_a_bad_workload_file_is_refused_naming_column_and_key(tmp_path: Path) -> None:
    bad = bad_workload(tmp_path)
    line = next(n for n, t in enumerate(bad.read_text().splitlines(), 1) if "min: 50" in t)
    where = f"{bad}:{line}: columns[4] (TEMP): range.min: must be at most max (50 > 40)"
    cases = {
        "--workload": ["--workload", str(bad), *RATE],
        "--scenario --workload": ["--scenario", "step", "--workload", str(bad)],
        "scenario key": ["--scenario", str(scenario_file(tmp_path, str(bad)))],
    }
    for case, args in cases.items():
        proc = run_job("wl-1", *args, *REQUIRED, "--dry-run")
        assert (proc.returncode, proc.stdout) == (2, ""), case
        assert where in proc.stderr, (case, proc.stderr)
    proc = run_job("wl-1", *RATE, *REQUIRED, "--dry-run", settings={"WORKLOAD": str(bad)})
    assert (proc.returncode, proc.stdout) == (2, "")
    assert f"WORKLOAD: {where}" in proc.stderr


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.yaml", None, "cannot read it"),
        ("latin1.yaml", b"name: caf\xe9\n", "not UTF-8 text"),
        (
            "huge.yaml",
            b"#" + b"x" * (130 * 1024) + b"\n",
            "bytes, and the pods can be handed at most",
        ),
        ("nope", None, "no shipped workload 'nope'"),
    ],
)
def test_a_workload_that_cannot_be_used_renders_nothing(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    if content is not None:
        (tmp_path / name).write_bytes(content)
    proc = run_job("wl-1", "--workload", name, *RATE, *REQUIRED, "--dry-run", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert message in proc.stderr and "--workload" in proc.stderr


def test_an_empty_workload_option_is_refused() -> None:
    proc = run_job("wl-1", "--workload", "", *RATE, *REQUIRED, "--dry-run")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert "--workload needs" in proc.stderr


def test_help_says_what_workload_takes() -> None:
    proc = run_job("--help")
    assert proc.returncode == 0
    text = proc.stdout
    assert "--workload NAME|FILE" in text
    for word in ("iot-telemetry", "workload.yaml", MOUNTED, "setup --workload"):
        assert word in text, word


def fake_kubectl(tmp_path: Path) -> tuple[str, Path]:
    """A stand-in kubectl first on PATH: the Secret exists, the Job does not, and what
    ``apply`` reads is kept in applied.yaml; every call is logged."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "kubectl.log"
    kubectl = bindir / "kubectl"
    kubectl.write_text(
        f"""#!/bin/sh
echo "$*" >> {log}
case "$1 $2" in
  "get secret") exit 0 ;;
  "get job") exit 1 ;;
  "apply "*) cat > {tmp_path / "applied.yaml"} ;;
esac
exit 0
"""
    )
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
    return f"{bindir}:{os.environ['PATH']}", log


def test_applying_sends_the_file_and_a_bad_one_applies_nothing(tmp_path: Path, mine: Path) -> None:
    path, log = fake_kubectl(tmp_path)
    proc = run_job("wl-1", "--workload", str(mine), *RATE, *REQUIRED, path=path)
    assert proc.returncode == 0, proc.stderr
    applied = {
        d["kind"]: d for d in yaml.load_all((tmp_path / "applied.yaml").read_text(), Loader=LOADER)
    }
    assert applied["ConfigMap"]["data"]["workload.yaml"] == mine.read_text(encoding="utf-8")
    assert flag(worker_args(applied["Job"]), "--workload") == MOUNTED
    assert f"setup --workload {mine}" in proc.stderr and "to pipe MINE_ROWS_PIPE" in proc.stderr
    log.unlink()
    (tmp_path / "applied.yaml").unlink()
    proc = run_job("wl-1", "--workload", str(bad_workload(tmp_path)), *RATE, *REQUIRED, path=path)
    assert proc.returncode == 2 and "range.min" in proc.stderr
    assert not log.exists() and not (tmp_path / "applied.yaml").exists()
