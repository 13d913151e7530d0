"""An emulator that fails part-way through starting closes what it opened (issue #23:
the database stayed open when the lander could not be made), and the data dir starts
afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elastic_channels.emulator import Emulator, EmulatorConfig
from elastic_channels.emulator import emulator as emulator_module


def test_a_failed_start_closes_the_store_and_the_dir_starts_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Any] = []
    real_open = emulator_module._open_store_nicer

    def recording_open(*args: Any, **kwargs: Any) -> Any:
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    def failing_lander(*args: Any, **kwargs: Any) -> Any:
        raise OSError("no room for the spool")

    monkeypatch.setattr(emulator_module, "_open_store_nicer", recording_open)
    monkeypatch.setattr(emulator_module, "Lander", failing_lander)
    config = EmulatorConfig(data_dir=tmp_path / "emu", append_buffer_ms=20)
    emu = Emulator(config)
    with pytest.raises(OSError, match="no room for the spool"):
        emu.start()
    assert len(opened) == 1 and emu.store is None and emu.lander is None
    with pytest.raises(Exception, match=r"(?i)closed"):
        opened[0].connection.execute("SELECT 1")  # closed, not leaked
    monkeypatch.undo()
    with Emulator(EmulatorConfig(data_dir=tmp_path / "emu", append_buffer_ms=20)) as again:
        assert again.query("SELECT count(*) FROM RESORT_SALES") == [(0,)]
