"""Exactly once across the emulator's own crashes: kill it at each named step of spooling
and landing (the ELASTIC_EMULATOR_CRASH_AT hook), restart it on the same data dir, and
count (issue #12 item 4)."""

from __future__ import annotations

import pytest
from crash_support import EXPECTED, ROWS, restarted_after_crash

from elastic_channels.emulator.landing.crashpoints import POINTS


def test_every_point_is_covered():
    assert set(EXPECTED) == set(POINTS)


@pytest.mark.parametrize("point", POINTS)
def test_killed_at_a_step_then_restarted_lands_exactly_once(tmp_path, point):
    data = tmp_path / "emu"
    run_id = "crash-" + point.replace(":", "-")
    _acked, times = EXPECTED[point]
    with restarted_after_crash(data, point, run_id, exit_timeout=30) as again:
        got = again.query(f"SELECT count(*) AS n FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")
        assert got == [{"n": ROWS * times}]
