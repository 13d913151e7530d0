"""elastic-channels runs: the recorded results, newest first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elastic_channels import results
from elastic_channels.cli import main

T0 = 1_800_000_000.0


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout read
    return tmp_path / "home"


def _record(home: Path, make_result, run_id: str, started_at: float, **extra) -> Path:
    return results.record(make_result(run_id, started_at=started_at, **extra), home)


def test_runs_lists_newest_first_with_what_each_was(home: Path, make_result, capsys) -> None:
    scenario = {"name": "step", "hash": "0123456789abcdef" * 4, "file": "s.yaml", "resolved": {}}
    # recorded out of order: the listing is by start time, not by when each was recorded
    _record(home, make_result, "run-mid", T0 + 60, thresholds={"mb_per_s": {"min": 1}})
    outcome = {"outcome": "interrupted", "exit_code": 105, "reasons": ["stopped by SIGINT"]}
    _record(home, make_result, "run-new", T0 + 120, scenario=scenario, outcome=outcome,
            thresholds={"mb_per_s": {"min": 99}})  # fmt: skip
    _record(home, make_result, "run-old", T0)
    assert main(["runs", "--home", str(home), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [x["run_id"] for x in listed] == ["run-new", "run-mid", "run-old"]
    new, mid, old = listed
    assert new["scenario"] == {"name": "step", "hash": scenario["hash"]}
    assert (new["workers"], new["mb_per_s"]) == (2, 5.455)
    assert new["ack_p99_ms"] == pytest.approx(10.0, rel=1e-3)
    assert new["thresholds_held"] is False
    assert new["thresholds_failed"] == ["mb_per_s 5.455 is under its min 99"]
    assert (mid["thresholds_held"], old["thresholds_held"]) == (True, None)
    assert old["started_at_utc"] == "2027-01-15T08:00:00.000Z"

    assert main(["runs", "--home", str(home)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "started", "(UTC)", "run", "id", "outcome", "scenario", "workload", "seconds",
        "workers", "target", "MB/s", "MB/s", "ack", "p99", "ms", "billable", "GB", "ingest",
    ]  # fmt: skip
    body = lines[2:]
    assert [line.split()[2] for line in body] == ["run-new", "run-mid", "run-old"]
    cells = body[0].split()
    assert cells[:6] == ["2027-01-15", "08:02:00", "run-new", "interrupted", "step", "01234567"]
    assert cells[-4:-2] == ["5.46", "10"]
    assert cells[-2:] == ["-", "-"]  # recorded with no billable bytes counted
    # written before outcomes were recorded: nothing in them tells an interrupted run
    assert body[1].split()[3] == "unknown" and body[2].split()[3] == "unknown"
    assert (new["outcome"]["outcome"], mid["outcome"]["outcome"]) == ("interrupted", "unknown")


def test_a_file_that_is_not_a_result_is_skipped_and_named(home: Path, make_result, capsys) -> None:
    _record(home, make_result, "run-ok", T0)
    bad = home / "results" / "20990101T000000Z-broken.json"
    bad.write_text("{not json")
    assert main(["runs", "--home", str(home), "--json"]) == 0
    out, err = capsys.readouterr()
    assert [x["run_id"] for x in json.loads(out)] == ["run-ok"]
    assert f"elastic-channels runs: skipped {bad}: not a JSON document" in err


def test_no_results_says_where_it_looked(home: Path, capsys) -> None:
    assert main(["runs", "--home", str(home)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and f"no results in {home / 'results'}" in err
    assert main(["runs", "--home", str(home), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
