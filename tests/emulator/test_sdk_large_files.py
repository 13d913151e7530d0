"""The SDK's own files at its defaults are taken (issue #30 item 1): a worker with no
parameter_overrides makes files of ~68 MB uncompressed (the SDK cuts a file past 64 MiB),
over the 64 MiB the emulator once refused them at (400, the channel lost), and every
row of them lands once.

HEAVY, kept as short as it can be: the smallest run seen to make a file over 64 MiB,
one worker at 80 MB/s for 1.5 s (~120 MB of rows through the SDK and landed; ~15 s on a
loaded 2-core machine). The file sizes are read as the emulator takes each fragment.
"""

from __future__ import annotations

import json

import pytest
from emulator_support import sdk_available
from worker_checks import landed
from worker_support import run_worker, worker_args

from elastic_channels.emulator import Emulator, EmulatorConfig

pytestmark = pytest.mark.skipif(not sdk_available(), reason="snowpipe-streaming not installed")

INLINE_CAP = 64 << 20


def test_a_worker_whose_files_exceed_64_mib_lands_every_row_once(tmp_path):
    run_id = "sdk-large-files"
    sizes: list[int] = []
    with Emulator(EmulatorConfig(data_dir=tmp_path / "emu", fsync=False)) as emu:
        assert emu.info()["parameter_overrides"] == {}  # the SDK's own defaults
        take = emu.stats.file_fragment

        def fragment_taken(wire: int, raw: int) -> None:
            sizes.append(raw)
            take(wire, raw)

        emu.stats.file_fragment = fragment_taken  # type: ignore[method-assign]
        profile = tmp_path / "info.json"
        profile.write_text(json.dumps(emu.info()))
        args = worker_args(profile, run_id, target_bps=80e6, duration_s=1.5)
        result = run_worker(args, tmp_path, timeout_s=120)
        assert result.returncode == 0, str(result)
        summary = result.summary
        assert summary["rows_sent"] == summary["rows_acked"] > 0, summary
        assert summary["channel_reopens"] == 0, summary
        got = landed(emu, run_id, 0, summary)
        assert (got.rows, got.duplicates, got.lost()[:5]) == (summary["rows_acked"], 0, [])
    assert max(sizes) > INLINE_CAP, f"no file over 64 MiB (uncompressed sizes {sizes})"
