"""``deploy/run_job.sh --scenario``: a scenario rendered into the Job, so every pod of a
455-pod fleet follows the same stages from one agreed start (issue #24 item 7)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from run_job_support import REQUIRED, run_job

from elastic_channels.scenario import (
    find_scenario,
    load_file,
    load_text,
    scenario_hash,
    stages_bps,
    with_overrides,
)

yaml = pytest.importorskip("yaml")
_manifests = __import__("importlib.util").util.spec_from_file_location(
    "deploy_manifests", Path(__file__).with_name("test_manifests.py")
)


def _render(*args: str) -> tuple[dict, dict]:
    proc = run_job("step-1", *args, *REQUIRED, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    docs = {d["kind"]: d for d in yaml.safe_load_all(proc.stdout) if d is not None}
    return docs["ConfigMap"], docs["Job"]


def _flag(args: list[str], name: str) -> str:
    assert args.count(name) == 1, f"{name} given {args.count(name)} times"
    return args[args.index(name) + 1]


@pytest.fixture(scope="module")
def step_455() -> tuple[dict, dict, float]:
    before = time.time()
    config_map, job = _render("--scenario", "step", "--workers", "455")
    return config_map, job, before


def test_every_pod_gets_the_scenarios_stages_and_one_start(step_455) -> None:
    config_map, job, before = step_455
    expected = with_overrides(load_file(find_scenario("step")), {"workers": 455})
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 455
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert json.loads(_flag(args, "--stages")) == stages_bps(expected)
    assert _flag(args, "--scenario-name") == "step"
    assert _flag(args, "--scenario-hash") == scenario_hash(expected)
    assert float(_flag(args, "--warmup-seconds")) == expected.warmup_seconds
    assert float(_flag(args, "--window-seconds")) == expected.window_seconds
    # One agreed start for all: the default 120 s ahead, on a window boundary.
    start_at = float(_flag(args, "--start-at"))
    assert before + 120 <= start_at <= time.time() + 120 + expected.window_seconds
    assert start_at % expected.window_seconds == 0
    # The ConfigMap holds the resolved scenario the pods follow: it loads back to it.
    shown = load_text(config_map["data"]["scenario.yaml"], "scenario.yaml")
    assert scenario_hash(shown) == scenario_hash(expected)
    # The Job's deadline covers warmup and every stage.
    total = expected.warmup_seconds + sum(s.seconds for s in expected.stages)
    assert job["spec"]["activeDeadlineSeconds"] >= total + 900


@pytest.mark.parametrize("version", ["1.29.0", "latest"])
def test_the_scenario_job_is_valid_kubernetes(step_455, version: str) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    config_map, job, _ = step_455
    if version == "latest":
        version = kv.latest_version()
    for doc in (config_map, job):
        kv.validate(doc, version, strict=True)


def test_overrides_and_start_delay(tmp_path: Path) -> None:
    _, job = _render(
        "--scenario", "spike", "--channels", "2", "--max-inflight-bytes", "50e6",
        "--start-delay-seconds", "0",
    )  # fmt: skip
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert _flag(args, "--channels") == "2"
    assert _flag(args, "--max-inflight-bytes") == "50000000"
    assert float(_flag(args, "--start-at")) <= time.time() + 60


def test_a_scenario_text_cannot_reach_the_template(tmp_path: Path) -> None:
    """A description holding quotes, newlines and ${PLACEHOLDER}s lands as data."""
    f = tmp_path / "odd.yaml"
    f.write_text(
        'name: odd\ndescription: "a \\"q\\" ${IMAGE} $x\\n2"\nstages:\n  - {seconds: 5, mbps: 1}\n',
        encoding="utf-8",
    )
    config_map, job = _render("--scenario", str(f))
    shown = load_text(config_map["data"]["scenario.yaml"], "scenario.yaml")
    assert shown.description == 'a "q" ${IMAGE} $x\n2'
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == REQUIRED[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenario", "nope"], "no such file, nor a shipped scenario"),
        (["--scenario", "step", "--target-bps", "1e6"], "leave out --target-bps"),
        (["--scenario", "step", "--start-delay-seconds", "soon"], "--start-delay-seconds"),
        (["--scenario", "step", "--workers", "0"], "--workers must be a positive integer"),
    ],
)
def test_bad_scenario_arguments_name_what_is_wrong(args: list[str], message: str) -> None:
    proc = run_job("step-1", *args, *REQUIRED, "--dry-run")
    assert proc.returncode == 2, proc.stdout
    assert message in proc.stderr and proc.stdout == ""


def test_a_bad_scenario_file_is_named_with_its_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("name: bad\nstages:\n  - {seconds: 5, mbps: fast}\n", encoding="utf-8")
    proc = run_job("step-1", "--scenario", str(f), *REQUIRED, "--dry-run")
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{f}:3" in proc.stderr and "stages[0].mbps" in proc.stderr
