"""Loading scenarios: every shipped one, YAML's scalars as a scenario reads them, and
every kind of error named by file, line and key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_channels.scenario import (
    FIGURES,
    SHIPPED_DIR,
    ScenarioError,
    find_scenario,
    load_file,
    load_text,
    run_seconds,
    shipped_names,
)
from elastic_channels.scenario.yaml_source import parse
from elastic_channels.worker.settings import BY_NAME

CHECKOUT = Path(__file__).resolve().parents[2]
OK_STAGES = "stages:\n  - {seconds: 10, mbps: 5}\n"


def test_the_shipped_scenarios_are_the_five_the_issue_names() -> None:
    assert shipped_names() == ["reference", "smoke", "soak", "spike", "step"]
    # scenarios/ at the top of the checkout is the package's directory (a link to it),
    # and what is installed (editable or not) holds the same files
    package_dir = CHECKOUT / "python" / "elastic_channels" / "scenario" / "shipped"
    assert (CHECKOUT / "scenarios").resolve() == package_dir.resolve()
    for f in package_dir.glob("*.yaml"):
        assert (SHIPPED_DIR / f.name).read_bytes() == f.read_bytes(), f.name


@pytest.mark.parametrize("name", ["reference", "smoke", "soak", "spike", "step"])
def test_every_shipped_scenario_loads_and_says_what_it_is(name: str) -> None:
    s = load_file(find_scenario(name))
    assert s.name == name
    assert len(s.description) > 20
    assert all(figure in FIGURES for figure in s.thresholds)
    assert s.destination.target == "emulator"
    assert find_scenario(f"{name}.yaml") == find_scenario(name) == SHIPPED_DIR / f"{name}.yaml"


def test_the_shipped_shapes_are_the_ones_described() -> None:
    reference = load_file(find_scenario("reference"))
    assert [(st.seconds, st.mbps) for st in reference.stages] == [(60.0, 92.0)]
    assert reference.warmup_seconds == 10 and reference.workers == 1
    smoke = load_file(find_scenario("smoke"))
    assert smoke.workers == 1 and run_seconds(smoke) == 10
    step = load_file(find_scenario("step"))
    rates = [st.mbps for st in step.stages]
    assert rates == sorted(rates) and len(set(rates)) == len(rates) >= 4
    spike = load_file(find_scenario("spike"))
    base, burst, after = spike.stages
    assert burst.mbps == 3 * base.mbps == 3 * after.mbps and burst.seconds == 10
    soak = load_file(find_scenario("soak"))
    assert run_seconds(soak) >= 1800 and soak.peak_mbps < reference.peak_mbps


def test_what_a_scenario_leaves_out_is_the_workers_default() -> None:
    s = load_text("name: bare\n" + OK_STAGES)
    assert s.batch_bytes == BY_NAME["batch_bytes"].default
    assert s.max_inflight_bytes == BY_NAME["max_inflight_bytes"].default
    assert s.window_seconds == BY_NAME["window_seconds"].default
    assert (s.workers, s.channels, s.warmup_seconds) == (1, 1, 0.0)
    assert (s.destination.target, s.destination.table_format) == ("emulator", "native")


def test_yaml_scalars_are_read_as_yaml_1_2_not_pyyaml_1_1() -> None:
    data, _, problems = parse(
        "a: 92e6\nb: 1.5e6\nc: on\nd: 010\ne: 2024-01-01\nf: true\ng: 1_000\nh: no\n"
    )
    assert problems == []
    assert data == {
        "a": 92_000_000, "b": 1_500_000.0, "c": "on", "d": 10, "e": "2024-01-01",
        "f": True, "g": 1000, "h": "no",
    }  # fmt: skip
    assert isinstance(data["a"], int)  # whole, so an int-typed key takes it
    s = load_text("name: x\nbatch_bytes: 1e6\nstages: [{seconds: 1e1, mbps: 5e-1}]\n")
    assert s.batch_bytes == 1_000_000 and s.stages[0].seconds == 10 and s.stages[0].mbps == 0.5


BAD = [
    # (what is wrong, the file's text, the line, the text the error must hold)
    ("a rate that is text",
     "name: x\nstages:\n  - {seconds: 10, mbps: 5}\n  - {seconds: 10, mbps: 5}\n"
     "  - {seconds: 10, mbps: fast}\n",
     5, 'stages[2].mbps: expected a number > 0, got "fast"'),
    ("a rate of zero", "name: x\nstages:\n  - {seconds: 10, mbps: 0}\n",
     3, "stages[0].mbps: expected a number > 0, got 0"),
    ("a negative duration", "name: x\nstages:\n  - seconds: -1\n    mbps: 3\n",
     3, "stages[0].seconds: expected a number > 0, got -1"),
    ("an unknown key, close to one", "name: x\nstages:\n  - {seconds: 10, mpbs: 5}\n",
     3, "stages[0].mpbs: unknown key (did you mean 'mbps'?)"),
    ("an unknown top-level key", "name: x\n" + OK_STAGES + "wrokers: 3\n",
     4, "wrokers: unknown key (did you mean 'workers'?)"),
    ("an unknown key, nothing close", "name: x\n" + OK_STAGES + "zzz: 1\n",
     4, "zzz: unknown key (known: name, description, workers,"),
    ("both a rate and a ramp", "name: x\nstages:\n  - {seconds: 1, mbps: 1}\n"
     "  - {seconds: 1, mbps: 2, from_mbps: 1, to_mbps: 3}\n",
     4, "stages[1]: has both mbps and from_mbps/to_mbps"),
    ("half a ramp", "name: x\nstages:\n  - {seconds: 1, from_mbps: 2}\n",
     3, "stages[0]: a ramp needs both from_mbps and to_mbps; to_mbps is missing"),
    ("a stage with no rate", "name: x\nstages:\n  - {seconds: 1}\n",
     3, "stages[0]: needs mbps (a constant rate) or from_mbps and to_mbps (a ramp)"),
    ("no stages", "name: x\nworkers: 2\n", 1, "stages: missing (it is required)"),
    ("empty stages", "name: x\nstages: []\n", 2,
     "stages: expected a list of 1 to 1000 items, got an empty list"),
    ("stages not a list", "name: x\nstages:\n  seconds: 3\n", 2,
     "stages: expected a list of 1 to 1000 items, got a mapping"),
    ("no workers", "name: x\nworkers: 0\n" + OK_STAGES, 2,
     "workers: expected a whole number >= 1, got 0"),
    ("a fraction of a worker", "name: x\nworkers: 1.5\n" + OK_STAGES, 2,
     "workers: expected a whole number >= 1, got 1.5"),
    ("too many channels", "name: x\nchannels: 65\n" + OK_STAGES, 2,
     "channels: expected a whole number from 1 to 64, got 65"),
    ("a name with a space", "name: my run\n" + OK_STAGES, 1,
     'name: expected 1 to 64 letters, digits, _ . or -, got "my run"'),
    ("an unknown workload", "name: x\nworkload: cars\n" + OK_STAGES, 2,
     "workload: no shipped workload 'cars': choose one of resort-sales, clickstream"),
    ("a workload file that is not there", "name: x\nworkload: ./no-such.yaml\n" + OK_STAGES,
     2, "workload: ./no-such.yaml: cannot read it"),
    ("an unknown target", "name: x\n" + OK_STAGES + "destination:\n  target: acount\n", 5,
     'destination.target: expected one of account, emulator, got "acount"'),
    ("iceberg on an account",
     "name: x\n" + OK_STAGES + "destination:\n  target: account\n  table_format: iceberg\n",
     6, "destination.table_format: iceberg needs target emulator"),
    ("a profile for the emulator",
     "name: x\n" + OK_STAGES + "destination:\n  profile: p.json\n",
     5, "destination.profile: is an account's connection profile; it needs target account"),
    ("a channel limit on an account",
     "name: x\n" + OK_STAGES + "destination:\n  target: account\n  channel_limit_mbps: 20\n",
     6, "destination.channel_limit_mbps: is the embedded emulator's limit"),
    ("in flight below one batch",
     "name: x\nbatch_bytes: 2000000\nmax_inflight_bytes: 1000000\n" + OK_STAGES,
     3, "max_inflight_bytes: 1000000 is less than batch_bytes (2000000)"),
    ("a warmup over a day", "name: x\nwarmup_seconds: 1e6\n" + OK_STAGES, 2,
     "warmup_seconds: expected a number from 0 to 86400, got 1000000"),
    ("a threshold on no figure",
     "name: x\n" + OK_STAGES + "thresholds:\n  ack_p99: {max: 2000}\n",
     5, "thresholds.ack_p99: not a figure a threshold can name (did you mean 'ack_p99_ms'?)"),
    ("a threshold with no bound", "name: x\n" + OK_STAGES + "thresholds:\n  lost: {}\n",
     5, "thresholds.lost: needs max or min (or both)"),
    ("a threshold that is text",
     "name: x\n" + OK_STAGES + "thresholds:\n  errors:\n    max: none\n",
     6, 'thresholds.errors.max: expected a number, got "none"'),
    ("a threshold no value holds",
     "name: x\n" + OK_STAGES + "thresholds:\n  mb_per_s: {min: 10, max: 5}\n",
     5, "thresholds.mb_per_s: min (10) is above max (5)"),
    ("an SDK property that is a list",
     "name: x\n" + OK_STAGES + "sdk_properties:\n  compression: zstd\n  bad: [1]\n",
     6, "sdk_properties.bad: expected a string, a number or true or false, got a list of 1 item"),
    ("a search that cannot rise", "name: x\n" + OK_STAGES + "search:\n  start_mbps: 10\n"
     "  max_mbps: 5\n", 6, "search.max_mbps: 5 is below start_mbps (10)"),
    ("a search nothing stops", "name: x\n" + OK_STAGES + "search:\n  bounds:\n"
     "    behind_p99_ms: null\n    errors: null\n",
     5, "search.bounds: every bound is null: nothing would stop the search"),
    ("a key given twice", "name: x\nworkers: 2\n" + OK_STAGES + "workers: 3\n",
     5, "workers: given twice (first on line 2)"),
    ("a YAML syntax error", "name: x\nstages: [{seconds: 1, mbps: 2}\n", 3, "not valid YAML"),
    ("an infinite number", "name: x\nstages: [{seconds: 1, mbps: !!float .inf}]\n", 2,
     "not valid YAML: '.inf' is not a finite number"),
    ("not a mapping", "- name: x\n", 1, "expected a mapping of keys (name, stages, ...)"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "said"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_an_error_names_the_file_the_line_and_the_key(
    tmp_path: Path, text: str, line: int, said: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as caught:
        load_file(path)
    assert f"{path}:{line}: {said}" in str(caught.value).splitlines()[0], str(caught.value)
    assert "Traceback" not in str(caught.value)


def test_every_problem_across_keys_is_reported_not_only_the_first() -> None:
    text = (
        "name: x\nstages:\n  - {seconds: 1}\n  - {seconds: 1, from_mbps: 1}\n"
        "thresholds:\n  nope: {max: 1}\n"
    )
    with pytest.raises(ScenarioError) as caught:
        load_text(text, "f.yaml")
    lines = str(caught.value).splitlines()
    assert [line.split(": ")[0] for line in lines] == ["f.yaml:3", "f.yaml:4", "f.yaml:6"]
    assert len(caught.value.problems) == 3


def test_every_unknown_key_is_reported_at_once() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_text("name: x\nstages: [{seconds: 1, mbps: 1, sconds: 2}]\nwrkers: 1\n", "f.yaml")
    assert str(caught.value).splitlines() == [
        "f.yaml:2: stages[0].sconds: unknown key (did you mean 'seconds'?)",
        "f.yaml:3: wrkers: unknown key (did you mean 'workers'?)",
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [("", "the scenario is empty: it needs at least name and stages"),
     ("# only a comment\n", "the scenario is empty")],
)  # fmt: skip
def test_an_empty_file_says_so(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=said):
        load_file(path)


def test_a_missing_or_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"nope\.yaml: no such file, nor a shipped scenario"):
        find_scenario(str(tmp_path / "nope.yaml"))
    with pytest.raises(ScenarioError, match="shipped: reference, smoke, soak, spike, step"):
        find_scenario("stepp")
    with pytest.raises(ScenarioError, match="not a file"):
        find_scenario(str(tmp_path))
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(ScenarioError, match=r"b\.yaml: not UTF-8 text"):
        load_file(binary)


def test_a_file_in_the_working_directory_wins_over_a_shipped_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "step").write_text("name: mine\n" + OK_STAGES)
    assert load_file(find_scenario("step")).name == "mine"
