"""File mode's parts, started beside the emulator's server: the stage the SDK uploads its
encrypted files to (S3 on loopback, ``stage/``), the pipe's keys, and the registration
endpoint's state (``api/files.py``)."""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .api.files import FileRegistrations, taken_ids
from .api.pipe_keys import PipeKeys
from .api.streaming import StageInfo
from .stage import FaultDecision, Stage

if TYPE_CHECKING:
    from .api.drop_sink import DropSink
    from .api.stats import Stats
    from .http.faults import FaultTable
    from .landing.lander import Lander
    from .storage.store import Store

__all__ = ["FileMode", "start_file_mode"]

STAGE_DIR = "stage"


@dataclass
class FileMode:
    stage: Stage
    keys: PipeKeys
    files: FileRegistrations

    @property
    def info(self) -> StageInfo:
        def grant(user: str) -> tuple[str, dict[str, str]]:
            granted = self.stage.grant(user)
            return granted.location, granted.creds

        return StageInfo(grant)

    def stop(self) -> None:
        self.stage.stop()


def bucket_name(stage_dir: Path) -> str:
    """The stage's bucket: named once per data dir and kept, so staged files keep their
    paths across restarts, and two emulators in one process (moto's buckets are global
    to a process) never share one."""
    path = stage_dir / "BUCKET"
    if not path.exists():
        stage_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(f"emulator-stage-{secrets.token_hex(6)}\n")
        os.replace(tmp, path)
    name = path.read_text().strip()
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{2,62}", name):
        raise ValueError(f"{path}: {name!r} is not an S3 bucket name; delete the file")
    return name


def start_file_mode(
    data_dir: Path,
    *,
    chain: Path,
    key_file: Path,
    host: str,
    fsync: bool,
    faults: FaultTable,
    stats: Stats,
    lander: Lander,
    store: Store,
    sink: DropSink | None,
    body_timeout_s: float = 30.0,
    max_connections: int = 256,
    header_timeout_s: float = 10.0,
) -> FileMode:
    """The pipe's keys (made once, kept in ``data_dir``), the stage started (on the port it
    kept in its directory, with the header and body deadlines and the connection cap of
    the emulator's server), and the fragments already taken before this start (spooled, or landed)
    known."""
    keys = PipeKeys(data_dir)

    def fault_for(endpoint: str) -> FaultDecision | None:
        fault = faults.take(endpoint)
        if fault is None:
            return None
        stats.fault(endpoint, fault.action)
        if fault.action not in ("status", "delay", "drop", "lose_ack"):
            return FaultDecision("status", status=500)  # malformed: no 200 body to spoil
        return FaultDecision(fault.action, status=fault.status, delay_s=fault.delay_s)

    stage = Stage(
        data_dir / STAGE_DIR, cert_chain=chain, key_file=key_file, host=host, fsync=fsync,
        faults=fault_for, bucket=bucket_name(data_dir / STAGE_DIR),
        body_timeout_s=body_timeout_s, max_connections=max_connections,
        header_timeout_s=header_timeout_s,
    )  # fmt: skip
    stage.start()
    try:  # the stage holds the data dir's port: never leave it running on a failure
        taken = taken_ids(lander.queued_request_ids(), store.landed_request_ids("file:"))
        files = FileRegistrations(stage, keys, lander, stats, taken=taken, sink=sink)
    except BaseException:
        stage.stop()
        raise
    return FileMode(stage, keys, files)
