"""The in-run monitor on an account takes the run's account flags (issue #29: ``run
--database DEMO`` printed "monitor off: no database"): the database, schema and pipe the
run was given reach its sink as they reach the workers, before SNOWFLAKE_* and the
profile. The emulator stands in for the account, named by an SDK profile (an account,
not its info file), its CA trusted the system's way (SSL_CERT_FILE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from emulator_support import make_emulator

from elastic_channels.monitor.in_run import RunMonitor
from elastic_channels.monitor.target import TargetError

pytest.importorskip("jwt")


def test_the_runs_database_flag_reaches_the_monitors_sink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emu = make_emulator(tmp_path)
    try:
        info = emu.info()
        monkeypatch.setenv("SSL_CERT_FILE", info["ssl_cert_file"])
        profile = tmp_path / "profile.json"
        profile.write_text(json.dumps({
            "account": info["properties"]["account"], "user": info["properties"]["user"],
            "private_key_file": info["private_key_file"], "host": "localhost",
            "port": emu.port,
        }))  # fmt: skip
        with pytest.raises(TargetError, match="no database"):  # the flags are the run's
            RunMonitor("flags", 1, profile=str(profile), environ={}, visible=False)
        flags = {"database": info["database"], "schema": info["schema"], "pipe": None}
        mon = RunMonitor("flags", 1, profile=str(profile), flags=flags, environ={}, visible=False)
        assert mon.monitor.sink.client._context["database"] == info["database"]
        assert mon.finish(visible_wait_s=0) == []  # the table is there, the run had no line
    finally:
        emu.stop()
