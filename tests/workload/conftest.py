"""Shared fixtures: the shipped workloads resolved once per session, and generator
factories for both backends over any workload."""

from __future__ import annotations

from types import ModuleType

import pytest

from elastic_channels import rows
from elastic_channels.workload import WorkloadReplay, load_workload, shipped_names


@pytest.fixture(scope="session")
def replays() -> dict[str, WorkloadReplay]:
    """Every shipped workload, resolved when a test first asks for it."""
    return {name: WorkloadReplay(load_workload(name)) for name in shipped_names()}


@pytest.fixture(scope="session")
def make_pair(native: ModuleType):
    """``make_pair(replay, run_id, worker_id, start_seq)``: (native generator, msgspec
    generator) of ``replay`` from the same inputs."""

    def make(replay: WorkloadReplay, run_id: str, worker_id: int, start_seq: int = 0):
        resolved = replay.resolved()  # first, so that the native table is made from it
        table = replay.native_table()
        return (
            native.WorkloadGenerator(table, run_id, worker_id, start_seq=start_seq),
            rows.WorkloadGenerator(resolved, run_id, worker_id, start_seq=start_seq),
        )

    return make
