"""Where ``run`` sends: the embedded emulator (started here, for the run's length) or an
account (its settings checked once, before any worker starts)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..account import account_settings
from ..landing_table import LandingTable, landing_table
from ..measures import MB
from ..scenario import Scenario
from ..setting import SettingError
from ..worker.settings import flag_args
from .verify import rows_of_run

__all__ = [
    "Target", "TargetError", "account_problem", "default_data_dir", "open_target", "write_info",
]  # fmt: skip


class TargetError(Exception):
    """The target cannot be used; the message says why (one line)."""


@dataclass
class Target:
    #: The flags every worker gets to reach it (the account's settings and the run id).
    worker_args: list[str]
    #: What the run's banner calls it.
    text: str
    #: The profile the monitor writes the metrics with (None: the environment's).
    profile: str | None
    #: The embedded emulator, or None for an account.
    emulator: Any = None

    def stop(self) -> None:
        if self.emulator is not None:
            self.emulator.stop()


def default_data_dir(home: Path, land: LandingTable, table_format: str) -> Path:
    """Where the embedded emulator keeps its data under ``home``: ``emulator`` for resort
    sales as before, ``emulator-<table>`` for another workload's table (a data dir holds
    one landing table), then ``-iceberg`` for an Iceberg table."""
    suffix = "-iceberg" if table_format == "iceberg" else ""
    if land.is_default:
        return home / f"emulator{suffix}"
    slug = re.sub(r"[^a-z0-9_-]+", "_", land.name.lower()).strip("_") or "table"
    return home / f"emulator-{slug}{suffix}"


def open_target(
    s: Scenario, account: dict[str, Any], data_dir: Path, land: LandingTable | None = None
) -> Target:
    """The scenario's destination, ready for workers: ``account`` holds the run id and
    the account's settings as resolved (the scenario's profile, if any, wins); ``land``
    the workload's landing table (None: resort sales), which the emulator is made with."""
    land = land or landing_table()
    if s.destination.target == "account":
        account = {**account, "profile": s.destination.profile or account["profile"]}
        error = account_problem(account) or account_unreachable(account)
        if error:  # once, here: no worker is started to find it
            raise TargetError(error)
        return Target(flag_args(account), "Snowflake", account["profile"])
    from ..emulator import Emulator, EmulatorConfig
    from ..emulator.storage.store import StoreError

    limit = s.destination.channel_limit_mbps
    table_format = s.destination.table_format
    try:
        config = EmulatorConfig(
            data_dir=data_dir,
            pipe=land.pipe,
            table=land.name,
            columns=land.columns,
            table_format=table_format,
            channel_limit_bps=None if limit is None else limit * MB,
        )
        emu = Emulator(config).start()
    except (ValueError, OSError, StoreError) as e:
        raise TargetError(f"the emulator did not start: {e}") from None
    taken = run_id_taken(emu, account["run_id"], data_dir, land)
    if taken:
        emu.stop()
        raise TargetError(taken)
    info_file = data_dir / "info.json"
    write_info(info_file, emu.info())
    kind = "an Iceberg table" if table_format == "iceberg" else "a native table"
    text = f"the embedded emulator at {emu.url} ({kind}, data in {data_dir})"
    if limit is not None:
        text += f", {limit:g} MB/s a channel at most"
    worker_args = flag_args({**account, "profile": str(info_file)})
    return Target(worker_args, text, account["profile"], emu)


def account_problem(v: dict[str, Any]) -> str | None:
    """What keeps the account settings from starting a worker (the first missing or bad
    one, named), checked as every worker and the monitor will resolve them; or None."""
    flags = {name: v[name] for name in ("profile", "database", "schema", "pipe")}
    try:
        account_settings(flags).check("account", "user", "private_key", "database")
    except SettingError as e:
        return str(e)
    return None


def account_unreachable(v: dict[str, Any]) -> str | None:
    """Why the account cannot be reached or logged in to, in one line naming the host
    and what failed (a few seconds at most: account/reach.py); or None."""
    from ..account.reach import Unreachable, check_reachable

    flags = {name: v[name] for name in ("profile", "database", "schema", "pipe")}
    try:
        check_reachable(account_settings(flags))
    except (Unreachable, SettingError) as e:
        return str(e)
    return None


def run_id_taken(
    emu: Any, run_id: str, data_dir: Path, land: LandingTable | None = None
) -> str | None:
    """Why ``run_id`` cannot be used in this emulator (its tables hold rows of it), or
    None: a second run with an id would count the first one's rows as its own."""
    held = rows_of_run(emu, run_id, land)
    if not held:
        return None
    rows = " and ".join(f"{n:,} row(s) in {table}" for table, n in held.items())
    return (
        f"--run-id {run_id!r} is taken: the emulator's data in {data_dir} holds {rows} of "
        "it, which this run would count as its own (as duplicates); pick another --run-id "
        "(or leave it out for a fresh one), or use another --data-dir"
    )


def write_info(path: Path, info: dict[str, Any]) -> None:
    """The emulator's connection info for the workers, readable by this user only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(info, f)
