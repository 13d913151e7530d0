"""The fleet's view of a load shape: a fleet window adds the workers' targets up and
keeps their stage and warmup; the windows table shows both and leaves warmup out of
the run's line; the progress line says them."""

from __future__ import annotations

from typing import Any

import pytest

from elastic_channels.fleet.report import (
    aggregate_window,
    format_window,
    mean_target_mb,
    windows_table,
)

T0 = 1_700_000_000.0


def line(wid: int, k: int, *, target: float | None, stage: int | None, warmup: bool) -> dict:
    """Worker ``wid``'s line of window ``k`` (1 s windows from T0), 1 MB sent."""
    out: dict[str, Any] = {
        "type": "window", "run_id": "r", "worker_id": wid, "window_start": T0 + k,
        "window_seconds": 1.0, "partial": False, "start": T0 + k, "end": T0 + k + 1,
        "rows": 1000, "bytes": 1_000_000, "acked_rows": 1000, "acked_bytes": 1_000_000,
        "acks": 1, "scenario": "step", "scenario_hash": "ab",
    }  # fmt: skip
    if target is not None:
        out.update(target_bps=target, stage=stage, warmup=warmup)
    return out


def fleet(k: int, targets: tuple[float, float], stage: int, warmup: bool) -> dict:
    return aggregate_window(
        [line(w, k, target=t, stage=stage, warmup=warmup) for w, t in enumerate(targets)]
    )


def test_a_fleet_window_adds_the_targets_and_keeps_stage_warmup_and_scenario() -> None:
    f = fleet(3, (2e6, 2.5e6), 1, False)
    assert (f["target_bps"], f["stage"], f["warmup"]) == (4.5e6, 1, False)
    assert (f["scenario"], f["scenario_hash"]) == ("step", "ab")
    assert fleet(0, (1e6, 1e6), -1, True)["warmup"] is True


def test_lines_without_a_target_make_a_window_without_one() -> None:
    f = aggregate_window([line(0, 0, target=None, stage=None, warmup=False)])
    assert (f["target_bps"], f["stage"], f["warmup"]) == (None, None, False)


def test_the_windows_table_marks_warmup_and_leaves_it_out_of_the_run() -> None:
    windows = [fleet(0, (1e6, 1e6), -1, True), fleet(1, (1e6, 1e6), 0, False)]
    windows += [fleet(2, (3e6, 3e6), 1, False)]
    text = windows_table(windows, {"mb_per_s": 3.9, "rows_per_s": 2000.0})
    lines = text.splitlines()
    assert "stage" in lines[0] and "target MB/s" in lines[0]
    warm, first, second = lines[2], lines[3], lines[4]
    assert "warmup" in warm and " 2.0 " in warm
    assert first.split()[1] == "0" and " 6.0 " in second
    run = lines[-1]
    assert run.split()[:2] == ["run", "after"]
    assert "4,000" in run  # rows of the two windows after warmup, not 6,000
    assert " 4.0 " in run  # the mean target after warmup: (2 + 6) / 2 MB/s
    assert mean_target_mb(windows[1:]) == pytest.approx(4.0)


def test_a_run_without_a_schedule_shows_no_stage() -> None:
    windows = [aggregate_window([line(0, 0, target=None, stage=None, warmup=False)])]
    text = windows_table(windows, {"mb_per_s": 1.0})
    assert "warmup" not in text and "after warmup" not in text
    assert text.splitlines()[-1].split()[:2] == ["run", "-"]


def test_the_progress_line_says_the_target_and_warmup() -> None:
    f = {**fleet(0, (1e6, 1e6), -1, True), "t": 1.0}
    text = format_window(f)
    assert "(target 2.0)" in text and "warmup (outside the run's figures)" in text
    plain = {**aggregate_window([line(0, 0, target=None, stage=None, warmup=False)]), "t": 1.0}
    assert "target" not in format_window(plain) and "warmup" not in format_window(plain)


def sliver(covered: float) -> dict:
    """A fleet window of 1 s whose one worker sent 1 MB in its first ``covered`` s."""
    w = {**line(0, 5, target=None, stage=None, warmup=False), "partial": True}
    w["end"] = w["start"] + covered
    return {**aggregate_window([w]), "t": 6.0}


def test_a_sliver_of_a_window_shows_no_rate_where_a_longer_partial_one_does() -> None:
    short, longer = sliver(0.002), sliver(0.5)
    assert short["mb_per_s"] == pytest.approx(500.0, rel=1e-3)  # 1 MB in 2 ms
    text = format_window(short)
    assert "MB/s" in text and "500" not in text and "partial window of 2 ms: no rate" in text
    assert "  2.0 MB/s" in format_window(longer)
    assert "rates over the part it covers" in format_window(longer)
    table = windows_table([short, longer], {"mb_per_s": 1.0}).splitlines()
    assert " 500" not in table[2] and " 2.0 " in table[3]
    assert table[2].split()[4:6] == ["-", "-"]  # MB/s and rows/s of the sliver
