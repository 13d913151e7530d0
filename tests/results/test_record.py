"""results.record: one self-describing file per run, never written over."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from elastic_channels import results
from elastic_channels.results import store, thresholds

RUN_KEYS = (
    "run_id", "workers", "target_bps", "totals", "landed", "windows", "metrics_windows",
    "worker_summaries", "failed_workers", "chart",
)  # fmt: skip


def test_two_records_of_one_run_id_are_two_files(tmp_path: Path, make_result) -> None:
    result = make_result("run-same")
    first = results.record(result, tmp_path)
    before = first.read_bytes()
    second = results.record(result, tmp_path)
    assert first != second and first.parent == second.parent == tmp_path / "results"
    assert first.name == "20270115T080000Z-run-same.json"
    assert second.name == "20270115T080000Z-run-same-2.json"
    assert first.read_bytes() == before  # the first is untouched
    assert results.load(first)["run_id"] == results.load(second)["run_id"] == "run-same"
    assert not list((tmp_path / "results").glob(".*"))  # no temporary file left behind


def test_a_taken_name_is_not_written_over(tmp_path: Path, make_result) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    taken = folder / store.file_name("run-a", 1_800_000_000.0)
    taken.write_text("someone else's file")
    path = results.record(make_result("run-a", started_at=1_800_000_000.0), tmp_path)
    assert path == folder / store.file_name("run-a", 1_800_000_000.0, 2)
    assert taken.read_text() == "someone else's file"


def test_a_run_id_that_is_no_file_name_is_kept_whole_inside(tmp_path: Path, make_result) -> None:
    path = results.record(make_result("../a b/c"), tmp_path)
    assert path.parent == tmp_path / "results"
    assert path.name == "20270115T080000Z-.._a_b_c.json"
    assert results.load(path)["run_id"] == "../a b/c"


def test_the_file_carries_every_part(tmp_path: Path, make_result) -> None:
    scenario = {
        "name": "step", "hash": "ab" * 32, "file": "scenarios/step.yaml",
        "resolved": {"name": "step", "thresholds": {"ack_p99_ms": {"max": 100},
                                                     "mb_per_s": {"min": 6}}},
    }  # fmt: skip
    result = make_result(scenario=scenario, started_at=1_800_000_000.5, ended_at=1_800_000_020.0)
    doc = json.loads(results.record(result, tmp_path).read_text())
    assert doc["format"] == results.FORMAT == 1
    assert doc["run_id"] == "run-a"
    assert (doc["started_at"], doc["ended_at"]) == (1_800_000_000.5, 1_800_000_020.0)
    assert doc["started_at_utc"] == "2027-01-15T08:00:00.500Z"
    assert doc["ended_at_utc"] == "2027-01-15T08:00:20.000Z"
    assert doc["scenario"] == scenario
    # the run's result as run --json printed it
    assert {k: doc["run"][k] for k in RUN_KEYS} == {k: result[k] for k in RUN_KEYS}
    versions = doc["versions"]
    for key in ("elastic_channels", "elastic_native", "snowpipe_streaming", "python", "msgspec"):
        assert key in versions
    assert versions["python"].count(".") == 2 and versions["msgspec"].startswith("0.")
    machine = doc["machine"]
    assert machine["cpu_count"] >= 1 and machine["memory_bytes"] > 0
    for key in ("platform", "arch", "cpu_model"):
        assert key in machine
    figures = doc["figures"]
    assert set(thresholds.FIGURE_NAMES) <= set(figures)
    # Throughput by measures.run_throughput: 60 MB acked over 11 s of sending.
    assert (figures["seconds"], figures["mb_per_s"], figures["rows_per_s"]) == (
        11.0, 5.455, 54545.5,
    )  # fmt: skip
    # Percentiles off the merged histograms of the non-warmup windows: the 100th of 101
    # acks (10 ms), not the warmup's 5 s, nor the last window's own p99 (500 ms).
    assert figures["ack_p99_ms"] == pytest.approx(10.0, rel=1e-3)
    assert figures["ack_max_ms"] == pytest.approx(500.0, rel=1e-3)
    assert figures["behind_p99_ms"] == pytest.approx(20.0, rel=1e-3)
    # Visible: no histogram; with warmup, the highest non-warmup window's, said so.
    assert (figures["visible_p50_ms"], figures["visible_p99_ms"]) == (103.0, 500.0)
    assert "upper bound" in doc["figure_sources"]["visible_p99_ms"]
    assert (figures["lost"], figures["duplicates"], figures["errors"]) == (0, 0, 0)
    assert (figures["resent_batches"], figures["sdk_retries"]) == (2, 4)
    assert (figures["cpu_s_per_gb"], figures["peak_rss_mib"]) == (33.333, 70.0)
    assert figures["target_mb_per_s"] == pytest.approx(16 / 3, abs=1e-3)
    assert doc["peak_rss_mib_per_worker"] == {"0": 50.0, "1": 70.0}
    assert doc["warmup"] == {"windows": 1, "seconds": 1.0}
    s0, s1 = doc["stages"]
    assert (s0["stage"], s0["windows"], s0["seconds"], s0["target_mb_per_s"]) == (0, 2, 2.0, 4.0)
    assert (s0["mb_per_s"], s0["acked_mb_per_s"]) == (1.0, 1.0)
    assert s0["ack_p99_ms"] == pytest.approx(10.0, rel=1e-3)
    assert (s1["stage"], s1["target_mb_per_s"], s1["mb_per_s"]) == (1, 8.0, 2.0)
    assert s1["ack_p99_ms"] == pytest.approx(500.0, rel=1e-3)
    assert s1["visible_p99_ms"] == 500.0
    # The scenario's thresholds, each with whether it held.
    by_figure = {t["figure"]: t for t in doc["thresholds"]}
    assert by_figure["ack_p99_ms"]["held"] is True
    assert by_figure["mb_per_s"]["held"] is False
    assert by_figure["mb_per_s"]["value"] == 5.455 and by_figure["mb_per_s"]["limit"] == 6
    assert "mb_per_s 5.455 is under its min 6" in by_figure["mb_per_s"]["text"]
    assert doc["thresholds_held"] is False and doc["thresholds_error"] is None


def test_a_run_without_stages_is_one_stage_at_its_target(tmp_path: Path, parts) -> None:
    """Today's windows carry no stage, warmup or target: all count, the target is the
    workers' --target-bps, and with no warmup the emulator's visible figure is used."""
    t0 = parts.T0
    windows = [parts.window(t0 + i, acks_ms=[20.0 + i]) for i in range(3)]
    result = {
        "run_id": "plain", "workers": 2, "target_bps": 1e6, "totals": {}, "windows": windows,
        "landed": {"lost": 0, "duplicates": 0, "visible_p50_ms": 7.0, "visible_p99_ms": 9.0},
        "worker_summaries": [], "failed_workers": [], "metrics_windows": None, "chart": None,
    }  # fmt: skip
    doc = results.document(result)
    assert doc["figures"]["ack_p99_ms"] == pytest.approx(22.0, rel=1e-3)
    assert doc["figures"]["visible_p99_ms"] == 9.0
    assert "every landed row" in doc["figure_sources"]["visible_p99_ms"]
    assert doc["figures"]["target_mb_per_s"] == 2.0
    assert doc["figures"]["mb_per_s"] is None  # no summary says when it sent
    assert [s["stage"] for s in doc["stages"]] == [0]
    assert doc["stages"][0]["target_mb_per_s"] == 2.0 and doc["stages"][0]["windows"] == 3
    assert doc["warmup"] == {"windows": 0, "seconds": 0}
    assert doc["thresholds"] == [] and doc["thresholds_held"] is None
    assert doc["started_at"] == t0  # no started_at given: the first window's start


def test_the_file_is_plain_json(tmp_path: Path, make_result) -> None:
    result = make_result(chart=tmp_path / "x.png")
    result["totals"]["cpu_s_per_gb"] = math.nan
    path = results.record(result, tmp_path)
    doc = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert doc["run"]["chart"] == str(tmp_path / "x.png")
    assert doc["figures"]["cpu_s_per_gb"] is None  # NaN is not JSON: not measured


def test_a_bad_thresholds_block_is_recorded_not_raised(tmp_path: Path, make_result) -> None:
    result = make_result(thresholds={"ack_p98_ms": {"max": 1}})
    doc = results.load(results.record(result, tmp_path))
    assert "unknown figure 'ack_p98_ms'" in doc["thresholds_error"]
    assert doc["thresholds_held"] is False and doc["thresholds"] == []


def test_a_result_without_a_run_id_is_refused(make_result) -> None:
    with pytest.raises(ValueError, match="run_id"):
        results.document(make_result(run_id=""))


def test_load_names_a_file_that_is_not_a_result(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    for text, said in (
        ("{", "not a JSON document"),
        ("[]", "no 'format' key"),
        ('{"format": 2}', "result format 2, and this version reads format 1"),
        ('{"format": 1, "run_id": "a"}', "without 'started_at'"),
    ):
        bad.write_text(text)
        with pytest.raises(results.ResultError, match=said) as e:
            results.load(bad)
        assert str(bad) in str(e.value)
