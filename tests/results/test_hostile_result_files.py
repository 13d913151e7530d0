"""Result files that are not what ``record`` writes: nested too deep, too big, not a
file. ``runs`` skips each with one line naming it and lists the rest; ``compare`` of the
good ones works beside them, and ``compare`` of a bad one is one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_channels import results
from elastic_channels.cli import main
from elastic_channels.results import store

T0 = 1_800_000_000.0


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout read
    return tmp_path / "home"


def _two_runs(home: Path, make_result) -> None:
    results.record(make_result("run-a", started_at=T0), home)
    results.record(make_result("run-b", started_at=T0 + 60), home)


def _deep(home: Path, depth: int = 100_000) -> Path:
    """A result whose run holds a list nested ``depth`` deep."""
    path = store.results_dir(home) / "20990101T000000Z-deep.json"
    head = '{"format": 1, "run_id": "deep", "started_at": 1, "figures": {}, "run": '
    path.write_text(head + "[" * depth + "]" * depth + "}")
    return path


def test_runs_and_compare_skip_a_file_nested_past_what_python_reads(
    home: Path, make_result, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_runs(home, make_result)
    deep = _deep(home, 100_000)
    assert main(["runs", "--home", str(home), "--json"]) == 0
    out, err = capsys.readouterr()
    assert [x["run_id"] for x in json.loads(out)] == ["run-b", "run-a"]
    assert err.count("\n") == 1
    assert f"skipped {deep}: nested deeper than the {store.MAX_DEPTH} levels" in err

    chart = home / "c.png"
    assert main(["compare", "latest~1", "latest", "--home", str(home), "--json",
                 "--chart", str(chart)]) == 0  # fmt: skip
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["run_id"] for r in runs] == ["run-a", "run-b"]


@pytest.mark.parametrize("depth", [store.MAX_DEPTH + 1, 100_000])
def test_compare_refuses_a_file_nested_past_the_bound_in_one_line(
    home: Path, make_result, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    _two_runs(home, make_result)
    deep = _deep(home, depth)
    assert main(["compare", str(deep), "run-a", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"error: {deep}: nested deeper than the {store.MAX_DEPTH} levels" in err
    with pytest.raises(results.ResultError, match="nested deeper"):
        results.load(deep)


def test_a_file_over_the_size_bound_is_refused_by_its_size(
    home: Path, make_result, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_runs(home, make_result)
    big = store.results_dir(home) / "20990101T000000Z-big.json"
    with open(big, "wb") as f:  # sparse: refused by its size, never read
        f.truncate(store.MAX_RESULT_BYTES + 1)
    assert main(["runs", "--home", str(home), "--json"]) == 0
    out, err = capsys.readouterr()
    assert [x["run_id"] for x in json.loads(out)] == ["run-b", "run-a"]
    assert f"skipped {big}: {store.MAX_RESULT_BYTES + 1:,} bytes, over the 512 MiB" in err
    with pytest.raises(results.ResultError, match="over the 512 MiB such a file may hold"):
        results.load(big)


def test_load_reads_a_non_regular_file_only_up_to_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store, "MAX_RESULT_BYTES", 1 << 20)
    with pytest.raises(results.ResultError, match="/dev/zero: over the 1 MiB"):
        results.load(Path("/dev/zero"))


def test_runs_skips_what_is_not_a_regular_file(
    home: Path, make_result, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_runs(home, make_result)
    (store.results_dir(home) / "20990101T000000Z-zero.json").symlink_to("/dev/zero")
    assert main(["runs", "--home", str(home), "--json"]) == 0
    out, err = capsys.readouterr()
    assert [x["run_id"] for x in json.loads(out)] == ["run-b", "run-a"]
    assert "zero.json: not a regular file" in err


def test_scan_reads_the_head_and_find_the_whole_document(home: Path, make_result) -> None:
    _two_runs(home, make_result)
    entries, errors = store.scan(home)
    assert not errors
    assert [e.doc["run_id"] for e in entries] == ["run-b", "run-a"]
    assert "run" not in entries[0].doc and entries[0].doc["figures"]["workers"] == 2
    whole = store.find("latest", home)
    assert whole.doc["run"]["run_id"] == "run-b"
    assert whole.doc == results.load(whole.path)
