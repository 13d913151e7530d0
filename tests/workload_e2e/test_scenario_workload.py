"""A scenario's workload key: any shipped workload or a workload file, checked when the
scenario loads (errors at the key), overridden by run --workload (or WORKLOAD in the
flags-only form), and handed to every worker as --workload (a file by its absolute
path); resort-sales, the default, adds no flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_channels.cli import main
from elastic_channels.scenario import ScenarioError, load_text, with_overrides, worker_flags

STAGES = "stages:\n  - {seconds: 2, mbps: 1}\n"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("TARGET_BPS", "DURATION_SECONDS", "SNOWFLAKE_ACCOUNT", "WORKLOAD"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _workload_flag(flags: list[str]) -> str | None:
    return flags[flags.index("--workload") + 1] if "--workload" in flags else None


def test_a_shipped_workload_and_a_file(here: Path) -> None:
    s = load_text("name: x\nworkload: iot-telemetry\n" + STAGES)
    assert _workload_flag(worker_flags(s)) == "iot-telemetry"
    (here / "mine.yaml").write_text(
        "name: mine\ndescription: d\ntable: MINE\ncolumns:\n"
        "  - {name: ID, type: VARCHAR, unique_id: {}}\n"
    )
    s = load_text("name: x\nworkload: mine.yaml\n" + STAGES)
    assert _workload_flag(worker_flags(s)) == str(here / "mine.yaml")  # absolute
    assert _workload_flag(worker_flags(load_text("name: x\n" + STAGES))) is None


def test_a_bad_workload_file_is_named_at_the_key(here: Path) -> None:
    (here / "bad.yaml").write_text(
        "name: bad\ndescription: d\ntable: T\ncolumns:\n"
        "  - {name: A, type: NUMBER(3,0), range: {min: 0, max: 5000}}\n"
    )
    with pytest.raises(ScenarioError) as caught:
        load_text("name: x\nworkload: bad.yaml\n" + STAGES, "s.yaml")
    (line,) = str(caught.value).splitlines()
    assert line.startswith("s.yaml:2: workload: bad.yaml:5: columns[0]"), line


def test_run_workload_overrides_the_scenarios(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "s.yaml").write_text("name: s\nworkload: clickstream\n" + STAGES)
    assert main(["run", "s.yaml", "--workload", "wide-events", "--print-scenario"]) == 0
    assert "\nworkload: wide-events\n" in capsys.readouterr().out
    assert main(["run", "s.yaml", "--print-scenario"]) == 0
    assert "\nworkload: clickstream\n" in capsys.readouterr().out
    s = with_overrides(load_text("name: s\n" + STAGES), {"workload": "iot-telemetry"})
    assert s.workload == "iot-telemetry"


def test_the_flags_only_form_takes_the_environment(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKLOAD", "iot-telemetry")
    assert main(["run", "--target-bps", "1e6", "--duration-seconds", "2", "--print-scenario"]) == 0
    assert "\nworkload: iot-telemetry\n" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["--workload", "cars"],
            "the command line: --workload or WORKLOAD: no shipped workload 'cars'",
        ),
        (["smoke", "--workload", "x.yaml"], "the command line: --workload: x.yaml: cannot read"),
    ],
)
def test_a_bad_workload_flag_starts_nothing(
    here: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    assert main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert f"elastic-channels run: error: {said}" in err, err
    assert not (here / ".elastic-channels").exists()
