"""elastic-channels compare: figures side by side with their change, and one chart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_channels import results
from elastic_channels.cli import main
from elastic_channels.results.compare import delta

T0 = 1_800_000_000.0
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout read
    return tmp_path / "home"


def _write(home: Path, make_result, run_id: str, started_at: float, **figures) -> Path:
    """A result file whose figures are set by hand (the rest derived as record does)."""
    doc = results.document(make_result(run_id, started_at=started_at))
    doc["figures"].update(figures)
    return results.write(doc, home)


@pytest.fixture
def two(home: Path, make_result) -> tuple[Path, Path]:
    a = _write(home, make_result, "run-a", T0, mb_per_s=10.0, ack_p99_ms=200.0, errors=0,
               visible_p99_ms=None, lost=0, cpu_s_per_gb=4.0)  # fmt: skip
    b = _write(home, make_result, "run-b", T0 + 600, mb_per_s=12.5, ack_p99_ms=150.0, errors=3,
               visible_p99_ms=80.0, lost=0, cpu_s_per_gb=3.0)  # fmt: skip
    return a, b


def test_delta_against_the_first() -> None:
    assert delta(10.0, 12.5) == (2.5, 25.0)
    assert delta(200.0, 150.0) == (-50.0, -25.0)
    assert delta(0, 0) == (0, 0.0)
    assert delta(0, 3) == (3, None)  # no % of a change from nothing
    assert delta(None, 80.0) == (None, None) and delta(5.0, None) == (None, None)


def test_the_json_holds_each_change_hand_computed(home: Path, two, capsys) -> None:
    a, b = two
    chart = home / "c.png"
    assert main(["compare", "run-a", str(b), "--home", str(home), "--chart", str(chart),
                 "--json"]) == 0  # fmt: skip
    comp = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in comp["runs"]] == ["run-a", "run-b"]
    assert comp["runs"][0]["path"] == str(a) and comp["chart"] == str(chart)
    by = {line["figure"]: line for line in comp["figures"]}
    expect = {
        "mb_per_s": ([10.0, 12.5], [0.0, 2.5], [0.0, 25.0]),
        "ack_p99_ms": ([200.0, 150.0], [0.0, -50.0], [0.0, -25.0]),
        "cpu_s_per_gb": ([4.0, 3.0], [0.0, -1.0], [0.0, -25.0]),
        "errors": ([0, 3], [0, 3], [0.0, None]),
        "lost": ([0, 0], [0, 0], [0.0, 0.0]),
        "visible_p99_ms": ([None, 80.0], [None, None], [None, None]),
    }
    for figure, (values, change, pct) in expect.items():
        assert (by[figure]["values"], by[figure]["change"], by[figure]["change_pct"]) == (
            values, change, pct,
        ), figure  # fmt: skip
    # both runs had two stages: each stage's figures are lines of their own
    assert by["stages.1.target_mb_per_s"]["values"] == [8.0, 8.0]
    assert chart.read_bytes()[:8] == PNG and chart.stat().st_size > 1000


def test_the_table_shows_values_and_changes(home: Path, two, make_result, capsys) -> None:
    _write(home, make_result, "run-c", T0 + 1200, mb_per_s=5.0)
    assert main(["compare", "run-a", "run-b", "latest", "--home", str(home)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("A: run-a  scenario -  started 2027-01-15 08:00:00 UTC")
    assert lines[2].startswith("C: run-c")
    table = {line[:30].strip(): line[30:].split() for line in lines[4:]}
    assert table["figure"] == ["A", "B", "B-A", "%", "C", "C-A", "%"]
    assert table["MB/s (acked, sending window)"] == [
        "10.000", "12.500", "+2.500", "+25.0%", "5.000", "-5.000", "-50.0%",
    ]  # fmt: skip
    assert table["ack p99 ms"][:4] == ["200.0", "150.0", "-50.0", "-25.0%"]
    assert table["errors"][:4] == ["0", "3", "+3", "-"]
    assert table["ingest-to-visible p99 ms"][:4] == ["-", "80.0", "-", "-"]
    a1, b1 = table["stage 1 ack p99 ms"][:2]
    assert a1 == b1 and float(a1) == pytest.approx(500.0, rel=1e-3)
    chart = home / "compare-run-a-vs-run-b-and-1-more.png"
    assert f"chart: {chart}" in err and chart.read_bytes()[:8] == PNG


@pytest.mark.parametrize(
    ("refs", "said"),
    [
        (["run-a", "nope"], "no result for run id 'nope' in "),
        (["latest~2", "latest"], "no result 'latest~2': "),
        (["missing/x.json", "latest"], "no result file 'missing/x.json'"),
        (["run-a"], "give two runs or more to compare, got 1: 'run-a'"),
    ],
)
def test_a_run_not_found_is_named_and_exits_2(home: Path, two, refs, said, capsys) -> None:
    assert main(["compare", *refs, "--home", str(home)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("elastic-channels compare: error: ") and said in err
    assert not list(home.glob("*.png"))


def test_a_run_id_recorded_twice_asks_for_a_path(home: Path, two, make_result, capsys) -> None:
    again = results.record(make_result("run-a", started_at=T0 + 5), home)
    assert main(["compare", "run-a", "run-b", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert "run id 'run-a' has 2 results" in err and str(again) in err and str(two[0]) in err
