"""run's scenario on the command line: what it refuses (exit 2, naming the file, line,
key or flag, before any emulator or worker starts) and what --help says first."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_channels.cli import main


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout; nothing written elsewhere
    for name in ("TARGET_BPS", "DURATION_SECONDS", "SNOWFLAKE_ACCOUNT", "SNOWFLAKE_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _errors(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("elastic-channels run: error: ")]


@pytest.mark.parametrize(
    ("argv", "said"),
    [(["nope"], "nope: no such file, nor a shipped scenario of that name (shipped: reference, "
                "smoke, soak, spike, step)"),
     (["step", "--duration-seconds", "3"],
      "the command line: --duration-seconds: scenario step has 6 stages"),
     (["step", "--workers", "0"], "--workers must be >= 1, got 0"),
     (["step", "--target-bps", "-5"], "--target-bps must be a finite number > 0, got -5.0"),
     (["--target-bps", "1e6", "--duration-seconds", "inf"],
      "--duration-seconds must be a finite number > 0, got inf"),
     (["smoke", "--window-seconds", "0"],
      "the command line: --window-seconds: expected a number > 0, got 0.0"),
     (["smoke", "--sdk-property", "compression"],
      "the command line: --sdk-property expects KEY=VALUE, got 'compression'"),
     (["bad.yaml"], "bad.yaml:3: stages[0].mpbs: unknown key (did you mean 'mbps'?)")],
)  # fmt: skip
def test_a_bad_scenario_or_flag_is_one_error_and_nothing_starts(
    here: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    (here / "bad.yaml").write_text("name: bad\nstages:\n  - {seconds: 1, mpbs: 2}\n")
    assert main(["run", *argv]) == 2
    out, err = capsys.readouterr()
    (error,) = _errors(err)
    assert error.startswith(f"elastic-channels run: error: {said}"), err
    assert out == "" and "worker(s)" not in err
    assert not (here / ".elastic-channels").exists()


def test_print_scenario_applies_the_flags_and_starts_nothing(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["run", "spike", "--workers", "5", "--warmup-seconds", "0", "--print-scenario"]) == 0
    )
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("# scenario spike, hash ")
    assert "\nworkers: 5\n" in out and "\nwarmup_seconds: 0.0\n" in out
    assert "- {seconds: 10.0, mbps: 60.0}" in out
    assert not (here / ".elastic-channels").exists()


def test_the_environment_fills_the_flags_only_form_but_not_a_scenario(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TARGET_BPS", "3e6")
    assert main(["run", "--duration-seconds", "4", "--print-scenario"]) == 0
    assert "- {seconds: 4.0, mbps: 3.0}" in capsys.readouterr().out
    assert main(["run", "smoke", "--print-scenario"]) == 0
    assert "- {seconds: 10.0, mbps: 5.0}" in capsys.readouterr().out


def test_help_explains_the_scenario_form_first(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    description = out[out.index("\n\n") :].strip()
    assert description.startswith("Run a scenario")
    options = out[out.index("positional arguments") :]
    assert options.index("SCENARIO ") < options.index("--workers") < options.index("--run-id")
    assert "reference, smoke, soak, spike, step" in out
