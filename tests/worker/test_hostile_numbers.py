"""A worker's rates and durations have a top (measures.MAX_MBPS, MAX_RUN_SECONDS): a
number past it (1e300 bytes/s, 1e30 s) is one error naming the flag, where the worker
used to take it and die of an OverflowError."""

from __future__ import annotations

import pytest

from elastic_channels.setting import SettingError
from elastic_channels.worker.config import load_config

ACCOUNT = ["--account", "a", "--user", "u", "--database", "d"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--target-bps", "1e300"], "--target-bps (TARGET_BPS) must be at most 1e+11, got 1e+300"),
        (["--duration-seconds", "1e30"],
         "--duration-seconds (DURATION_SECONDS) must be at most 2592000 (30 days), got 1e+30"),
        (["--stages", '[{"seconds": 1, "from_bps": 1e300, "to_bps": 1}]'],
         "--stages (STAGES): stages[0].from_bps must be at most 1e+11, got 1e+300"),
        (["--stages", '[{"seconds": 1e30, "from_bps": 1, "to_bps": 1}]'],
         "--stages (STAGES): stages[0].seconds must be at most 2592000 (30 days), got 1e+30"),
    ],
)  # fmt: skip
def test_a_number_past_its_top_is_one_error_naming_the_flag(argv: list[str], said: str) -> None:
    with pytest.raises(SettingError) as caught:
        load_config([*argv, *ACCOUNT], {})
    assert str(caught.value) == said


def test_the_top_itself_is_taken() -> None:
    cfg = load_config(["--target-bps", "1e11", "--duration-seconds", "2592000", *ACCOUNT], {})
    assert (cfg.target_bps, cfg.duration_s) == (1e11, 2_592_000)
