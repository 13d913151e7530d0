"""An account's defaults (issue #30 item 2): pipe-info tells the SDK to change nothing
unless the user asked (``append_buffer_ms`` / ``serve --append-buffer-ms``), for ``serve``
and for ``run``'s embedded emulator alike; an override asked for is named in info(),
in stats and in serve's startup line."""

from __future__ import annotations

import pytest
from emulator_support import EmulatorProcess
from file_mode_support import PIPE, FileModeClient

from elastic_channels.emulator import Emulator, EmulatorConfig
from elastic_channels.emulator.cli_serve import overrides_text
from elastic_channels.fleet.run_target import open_target
from elastic_channels.scenario import load_text

BUFFER = {"max_append_request_buffer_duration_ms": 250}


def _pipe_info(emu: Emulator) -> dict:
    client = FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))
    status, body = client.call("POST", PIPE + ":pipe-info", b"{}")
    assert status == 200, body
    return body


@pytest.mark.parametrize("asked, sent", [(None, {}), (250, BUFFER)], ids=["default", "asked"])
def test_pipe_info_overrides_only_what_was_asked_and_says_so(tmp_path, asked, sent):
    with Emulator(EmulatorConfig(data_dir=tmp_path / "emu", append_buffer_ms=asked)) as emu:
        assert _pipe_info(emu).get("parameter_overrides", {}) == sent
        assert emu.info()["parameter_overrides"] == sent
        assert emu.stats_snapshot()["parameter_overrides"] == sent


def test_runs_embedded_emulator_keeps_the_sdks_defaults(tmp_path):
    scenario = load_text("name: defaults\nstages:\n  - {seconds: 1, mbps: 1}\n")
    target = open_target(scenario, {"run_id": "defaults-1", "profile": None}, tmp_path / "emu")
    try:
        assert target.emulator.info()["parameter_overrides"] == {}
        assert _pipe_info(target.emulator).get("parameter_overrides", {}) == {}
    finally:
        target.stop()


@pytest.mark.parametrize("value", [-1, 600_001, 2.5, True])
def test_an_override_out_of_range_is_refused_naming_it(tmp_path, value):
    with pytest.raises(ValueError, match="append_buffer_ms must be"):
        EmulatorConfig(data_dir=tmp_path / "emu", append_buffer_ms=value)


def test_serve_names_the_override_in_its_startup_line(tmp_path):
    proc = EmulatorProcess(tmp_path / "emu").start()  # serve --append-buffer-ms 20
    try:
        assert proc.info["parameter_overrides"] == {"max_append_request_buffer_duration_ms": 20}
    finally:
        assert proc.stop() == 0, proc.stderr()
    # read once it exited: the line follows the info file
    assert "overrides the SDK's defaults: max_append_request_buffer_duration_ms=20" in (
        proc.stderr()
    )
    assert "no parameter_overrides" in overrides_text({})
