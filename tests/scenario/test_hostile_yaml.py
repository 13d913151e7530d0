"""Scenario files that are not what a person writes: alias bombs, a million entries,
nesting thousands deep, a NUL byte, numbers no run can hold. Each is one error naming
the file (and the line or key), found in bounded time, and nothing starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from elastic_channels.cli import main
from elastic_channels.scenario import ScenarioError, load_file, load_text, yaml_source
from elastic_channels.scenario.yaml_source import MAX_DEPTH, MAX_NODES, parse

OK = "name: ok\nstages:\n  - {seconds: 10, mbps: 5}\n"


def _bomb(levels: int) -> str:
    """A billion-laughs document: 9**levels strings from a few lines."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "name: bomb\nstages: [{seconds: 1, mbps: 1}]\nsdk_properties:\n" + "\n".join(
        "  " + line for line in lines
    )


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout; nothing written elsewhere
    for name in ("TARGET_BPS", "DURATION_SECONDS", "SNOWFLAKE_ACCOUNT", "SNOWFLAKE_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _one_error(path: Path) -> str:
    with pytest.raises(ScenarioError) as caught:
        load_file(path)
    text = str(caught.value)
    assert "\n" not in text, text
    return text


def test_an_alias_bomb_is_refused_before_it_is_expanded(here: Path) -> None:
    path = here / "bomb.yaml"
    path.write_text(_bomb(6))  # 531,441 strings once expanded
    said = _one_error(path)
    assert said.startswith(f"{path}:")
    assert f"more than {MAX_NODES:,} values (aliases counted as what they stand for)" in said


def test_aliases_within_the_bound_still_work() -> None:
    s = load_text("name: a\nstages:\n  - &s {seconds: 10, mbps: 5}\n  - *s\n")
    assert [st.seconds for st in s.stages] == [10, 10]


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    data, _, problems = parse("a: &x [1, *x]\n")
    assert data is None
    assert [(p.message, p.line) for p in problems] == [("the alias *x is inside its own anchor", 1)]


def test_a_million_entries_are_refused_by_the_file_size(here: Path) -> None:
    path = here / "million.yaml"
    path.write_text("name: big\nstages: [" + ", ".join(["{seconds: 1, mbps: 1}"] * 10**6) + "]\n")
    assert f"{path}: " in _one_error(path)
    assert "over the 1 MiB such a file may hold" in _one_error(path)


def test_entries_past_the_bound_are_refused_with_their_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(yaml_source, "MAX_NODES", 1000)
    text = "name: many\nstages:\n" + "  - {seconds: 1, mbps: 1}\n" * 400
    _, _, problems = parse(text)
    assert [p.message for p in problems] == [
        "more than 1,000 values (aliases counted as what they stand for)"
    ]
    assert problems[0].line == 2 + 1000 // 5  # five values a stage, after name: and stages:


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("stages: " + "[" * 5000 + "]" * 5000, 2),
        ("stages:\n" + "".join("  " * i + "-\n" for i in range(1, 200)), MAX_DEPTH + 2),
    ],
    ids=["flow", "block"],
)
def test_nesting_thousands_deep_is_one_error(here: Path, text: str, line: int) -> None:
    path = here / "deep.yaml"
    path.write_text("name: deep\n" + text)
    said = _one_error(path)
    assert said.startswith(f"{path}:{line}: ")
    assert said.endswith(f"nested deeper than {MAX_DEPTH} levels")


def test_a_nul_byte_is_one_error_with_its_line(here: Path) -> None:
    path = here / "nul.yaml"
    path.write_text(OK + "description: a\x00b\n")
    assert _one_error(path) == f"{path}: holds a NUL byte (line 4)"
    with pytest.raises(ScenarioError) as caught:
        load_text(OK + "description: a\x00b\n", "text")
    assert str(caught.value) == "text:4: not valid YAML: the character U+0000 is not allowed"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("stages: [{seconds: 1e30, mbps: 5}]",
         "stages[0].seconds: 1e+30 is out of range: give 0.001 to 2,592,000 s"),
        ("stages: [{seconds: 10, mbps: 1e300}]",
         "stages[0].mbps: 1e+300 is out of range: give 0.001 to 100,000 MB/s"),
        ("stages: [{seconds: 10, from_mbps: 1, to_mbps: 1e6}]",
         "stages[0].to_mbps: 1,000,000 is out of range: give 0.001 to 100,000 MB/s"),
        ("workers: 1e9\nstages: [{seconds: 10, mbps: 5}]",
         "workers: 1,000,000,000 is out of range: give 1 to 10,000 workers"),
        ("stages: [{seconds: 10, mbps: 5}]\ndestination: {channel_limit_mbps: 1e-300}",
         "destination.channel_limit_mbps: 1e-300 is out of range: give 0.001 to 100,000 MB/s"),
        ("stages: [{seconds: 10, mbps: 5}]\nwindow_seconds: 0.001",
         "window_seconds: 0.001 is out of range: give 0.1 to 3,600 s"),
        ("stages: [{seconds: 10, mbps: 5}]\nbatch_bytes: 1e12\nmax_inflight_bytes: 1e12",
         "batch_bytes: 1,000,000,000,000 is out of range: give 1,000 to 1,000,000,000 bytes"),
        ("stages: [{seconds: 10, mbps: 5}]\nsearch: {max_mbps: 1e9}",
         "search.max_mbps: 1,000,000,000 is out of range: give 0.001 to 100,000 MB/s"),
        ("stages: [{seconds: 2e6, mbps: 5}, {seconds: 2e6, mbps: 5}]",
         "stages: last 4,000,000 s together, over the 2,592,000 s (30 days) a run may last"),
    ],
)  # fmt: skip
def test_numbers_out_of_range_name_their_key(
    here: Path, capsys: pytest.CaptureFixture[str], body: str, said: str
) -> None:
    (here / "wild.yaml").write_text("name: wild\n" + body + "\n")
    # --print-scenario: were the file taken, nothing would start either
    assert main(["run", "wild.yaml", "--print-scenario"]) == 2
    out, err = capsys.readouterr()
    errors = [x for x in err.splitlines() if x.startswith("elastic-channels run: error: ")]
    assert len(errors) == 1, err
    assert errors[0].startswith("elastic-channels run: error: wild.yaml:"), err
    assert errors[0].endswith(said), err
    assert out == "" and not (here / ".elastic-channels").exists()


def test_a_flag_out_of_range_names_the_flag(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--target-bps", "1e306", "--duration-seconds", "10", "--print-scenario"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--target-bps" in err and "out of range: give 0.001 to 100,000 MB/s" in err
