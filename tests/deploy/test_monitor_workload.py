"""``deploy/deploy_monitor.sh --workload NAME|FILE``: the in-cluster monitor reads the
run's landing table by the run's workload. A shipped workload reaches it by name; a
workload file through the monitor's ConfigMap (key ``workload.yaml``, mounted read-only)
and ``--workload`` the mounted path, as run_job.sh hands it to the workers. A bad file is
refused before anything is rendered or applied. And the template filler (``render`` in
deploy/lib/common.sh) puts any value in as it is, whatever the shell's options."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from run_job_support import BASH, REPO, REQUIRED, deploy_monitor, run_job

from elastic_channels.landing_table import landing_table
from elastic_channels.monitor.cli import build_parser
from elastic_channels.workload.load import shipped_text

yaml = pytest.importorskip("yaml")
pytestmark = pytest.mark.skipif(BASH is None, reason="needs bash")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MOUNTED = "/etc/elastic-channels/workload.yaml"
RUN = ["--target-bps", "2e6", "--duration-seconds", "60", "--workers", "3"]
#: What a template filler or a shell could take for its own: & (bash 5.2's pattern
#: reference in ${x//p/r}), backslashes, $ and placeholders, quotes, a tab, non-ASCII.
TRICKY = (
    "# & && \\& \\ \\\\ \\n \\u0024 $HOME $1 ${IMAGE} ${WORKLOAD_DATA_LINE} $(id) `id`\n"
    "# \"double\" 'single' \t tab é 😀 ---\n"
)


def rows_file(tmp_path: Path, extra: str = "", newline: str = "\n") -> Path:
    """A valid workload file: iot-telemetry's rows, landing in MINE_ROWS, ``extra`` first;
    written as it is (no newline translation)."""
    text = shipped_text("iot-telemetry").replace("table: IOT_TELEMETRY\n", "table: MINE_ROWS\n")
    assert "table: MINE_ROWS\n" in text
    path = tmp_path / "my rows.yaml"
    path.write_bytes((extra + text).replace("\n", newline).encode("utf-8"))
    return path


def documents(proc: subprocess.CompletedProcess) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.load_all(proc.stdout, Loader=LOADER) if d is not None]
    by_kind = {d["kind"]: d for d in docs}
    assert len(by_kind) == len(docs)
    return by_kind


def monitor(*args: str, **kw: Any) -> dict[str, Any]:
    """The monitor's manifests, rendered by a dry run, by kind."""
    return documents(deploy_monitor("mon-1", *args, *REQUIRED, "--dry-run", **kw))


def pod_spec(objs: dict[str, Any]) -> dict[str, Any]:
    kind = "Job" if "Job" in objs else "Deployment"
    return objs[kind]["spec"]["template"]["spec"]


def command(objs: dict[str, Any]) -> list[str]:
    (container,) = pod_spec(objs)["containers"]
    return container["command"]


def option(words: list[str], name: str) -> str:
    assert words.count(name) == 1, words
    return words[words.index(name) + 1]


def mounted_at(objs: dict[str, Any]) -> str:
    """Where the pod reads the ConfigMap's workload.yaml, checked: one volume of the
    manifests' own ConfigMap with that key alone, mounted read-only."""
    spec = pod_spec(objs)
    (volume,) = [v for v in spec["volumes"] if "configMap" in v]
    assert volume["configMap"]["name"] == objs["ConfigMap"]["metadata"]["name"]
    assert volume["configMap"]["items"] == [{"key": "workload.yaml", "path": "workload.yaml"}]
    (container,) = spec["containers"]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["readOnly"] is True
    return f"{mount['mountPath'].rstrip('/')}/workload.yaml"


def nothing_mounted(objs: dict[str, Any]) -> None:
    assert "workload.yaml" not in objs["ConfigMap"]["data"]
    spec = pod_spec(objs)
    assert [v["name"] for v in spec["volumes"]] == ["snowflake-key", "tmp"]
    (container,) = spec["containers"]
    assert [m["name"] for m in container["volumeMounts"]] == ["snowflake-key", "tmp"]


def test_a_workload_file_reaches_the_monitor_as_it_reaches_the_workers(tmp_path: Path) -> None:
    mine = rows_file(tmp_path)
    objs = monitor("--workload", str(mine), "--workers", "3")
    text = mine.read_bytes().decode("utf-8")
    assert objs["ConfigMap"]["data"]["workload.yaml"] == text
    words = command(objs)
    assert words[:5] == ["elastic-channels", "monitor", "--k8s", "--run-id", "mon-1"]
    assert option(words, "--workload") == MOUNTED == mounted_at(objs)
    assert words[-2:] == ["--workers", "3"]
    # The run's Job carries the same text, mounted at the same path.
    job = documents(run_job("mon-1", "--workload", str(mine), *RUN, *REQUIRED, "--dry-run"))
    assert job["ConfigMap"]["data"]["workload.yaml"] == text
    (worker,) = pod_spec(job)["containers"]
    assert option(worker["args"], "--workload") == MOUNTED == mounted_at(job)
    # In the pod, the monitor's own parser takes the command, and the mounted file names
    # the workload's table and columns.
    args = build_parser().parse_args(words[2:])
    assert (args.k8s, args.run_id, args.workers) == (True, "mon-1", 3)
    pod_file = tmp_path / "pod" / "workload.yaml"
    pod_file.parent.mkdir()
    pod_file.write_text(objs["ConfigMap"]["data"]["workload.yaml"], encoding="utf-8")
    table = landing_table(args.workload.replace(MOUNTED, str(pod_file)))
    assert (table.name, table.send_time, table.run_id) == ("MINE_ROWS", "TS", "RUN_ID")


@pytest.mark.parametrize("version", ["1.29.0", "latest"])
def test_the_monitor_with_a_workload_file_is_valid_kubernetes(tmp_path: Path, version: str) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    version = kv.latest_version() if version == "latest" else version
    for obj in monitor("--workload", str(rows_file(tmp_path, extra=TRICKY))).values():
        kv.validate(obj, version, strict=True)


def test_a_shipped_name_is_passed_as_it_is() -> None:
    objs = monitor("--workload", "clickstream")
    assert option(command(objs), "--workload") == "clickstream"
    nothing_mounted(objs)
    # WORKLOAD (the environment or .env) is the run's workload too; the option wins.
    objs = monitor(settings={"WORKLOAD": "wide-events"})
    assert option(command(objs), "--workload") == "wide-events"
    objs = monitor("--workload", "iot-telemetry", settings={"WORKLOAD": "wide-events"})
    assert option(command(objs), "--workload") == "iot-telemetry"
    # No workload: resort-sales, the monitor's own default, as before.
    objs = monitor()
    assert command(objs) == ["elastic-channels", "monitor", "--k8s", "--run-id", "mon-1"]
    nothing_mounted(objs)


def bad_rows_file(tmp_path: Path) -> tuple[Path, str]:
    """A workload file with a bad range, and how the loader names the place."""
    path = rows_file(tmp_path)
    text = path.read_text().replace("range: {min: -20, max: 45}", "range: {min: 50, max: 40}")
    path.write_text(text)
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "min: 50" in t)
    return path, f"{path}:{line}: columns[4] (TEMP): range.min: must be at most max (50 > 40)"


def test_a_workload_that_cannot_be_used_exits_2_naming_it_and_renders_nothing(
    tmp_path: Path,
) -> None:
    bad, where = bad_rows_file(tmp_path)
    (tmp_path / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    (tmp_path / "huge.yaml").write_bytes(b"#" + b"x" * (130 * 1024) + b"\n")
    refused = {
        str(bad): f"--workload: {where}",
        "missing.yaml": "--workload: missing.yaml: cannot read it",
        "latin1.yaml": "--workload: latin1.yaml: not UTF-8 text",
        "huge.yaml": "bytes, and the pods can be handed at most",
        "nope": "--workload: no shipped workload 'nope'",
        "": "--workload needs a shipped workload's name or a workload file",
    }
    for value, message in refused.items():
        proc = deploy_monitor("mon-1", "--workload", value, *REQUIRED, "--dry-run", cwd=tmp_path)
        assert (proc.returncode, proc.stdout) == (2, ""), value
        assert message in proc.stderr, (value, proc.stderr)
    # The WORKLOAD setting is checked the same way, and named.
    proc = deploy_monitor("mon-1", *REQUIRED, "--dry-run", settings={"WORKLOAD": str(bad)})
    assert (proc.returncode, proc.stdout) == (2, "") and f"WORKLOAD: {where}" in proc.stderr


def test_applying_sends_the_file_and_a_bad_one_applies_nothing(deploy, tmp_path: Path) -> None:
    applied = tmp_path / "applied.yaml"
    deploy.stub("kubectl", f'case "$1 $2" in "apply "*) cp "$IN" "{applied}" ;; esac')
    env = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
    mine = rows_file(tmp_path, extra=TRICKY)
    proc = deploy.run("deploy_monitor", "mon-1", "--workload", str(mine), *REQUIRED, **env)
    assert proc.returncode == 0, proc.stderr
    objs = {d["kind"]: d for d in yaml.load_all(applied.read_text(), Loader=LOADER) if d}
    assert objs["ConfigMap"]["data"]["workload.yaml"] == mine.read_text(encoding="utf-8")
    assert option(command(objs), "--workload") == MOUNTED
    assert f"workload {mine}" in proc.stderr
    assert deploy.calls()[0].startswith("kubectl get secret snowflake-key")
    before = len(deploy.calls())
    bad, _ = bad_rows_file(tmp_path)
    proc = deploy.run("deploy_monitor", "mon-2", "--workload", str(bad), *REQUIRED, **env)
    assert proc.returncode == 2 and "range.min" in proc.stderr
    assert len(deploy.calls()) == before  # not even the Secret was looked up


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("script", ["deploy_monitor", "run_job"])
def test_ampersands_backslashes_and_the_rest_arrive_unchanged(
    tmp_path: Path, script: str, newline: str
) -> None:
    """bash 5.2 turns patsub_replacement on by default: ${text//pattern/value} would put
    the pattern in place of each & in the value and take backslashes as escapes."""
    path = rows_file(tmp_path, extra=TRICKY, newline=newline)
    if script == "run_job":
        objs = documents(run_job("mon-1", "--workload", str(path), *RUN, *REQUIRED, "--dry-run"))
    else:
        objs = monitor("--workload", str(path))
    assert objs["ConfigMap"]["data"]["workload.yaml"] == path.read_bytes().decode("utf-8")
    assert mounted_at(objs) == MOUNTED


def render_in_bash(template: str, tmp_path: Path, **values: str) -> subprocess.CompletedProcess:
    """``render`` of lib/common.sh, sourced into a bash that has patsub_replacement on
    (where it has one), with the template's placeholders filled from ``values``."""
    assert BASH is not None
    (tmp_path / "template.yaml").write_text(template)
    script = 'shopt -s patsub_replacement 2>/dev/null || true; . "$1"; shift; render "$@"'
    common = REPO / "deploy" / "lib" / "common.sh"
    return subprocess.run(
        [BASH, "-euc", script, "render", str(common), str(tmp_path / "template.yaml"), *values],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **values},
        timeout=60,
    )


def test_render_puts_each_value_in_as_it_is_whatever_the_shells_options(tmp_path: Path) -> None:
    one = "& \\& \\\\ \\n $HOME ${TWO} ${1} \"dq\" 'sq'\nsecond line\n\n"
    two = "&&\\\\"
    template = "a: ${ONE}\nb: ${TWO}\n# ${ONE}${TWO}\n"
    proc = render_in_bash(template, tmp_path, ONE=one, TWO=two)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"a: {one}\nb: {two}\n# {one}{two}\n"
    # A placeholder with no value is an error, not left in.
    proc = render_in_bash(template, tmp_path, ONE=one)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "unfilled placeholder ${TWO}" in proc.stderr


def test_help_says_what_workload_takes() -> None:
    proc = deploy_monitor("--help")
    assert proc.returncode == 0
    assert "--workload NAME|FILE" in proc.stdout
    for word in ("workload.yaml", MOUNTED, "run_job.sh", "WORKLOAD"):
        assert word in proc.stdout, word
