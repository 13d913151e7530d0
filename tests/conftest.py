"""Shared fixtures: every behaviour test runs on both generator backends.

``backend`` is parametrised over the native module and the pure-Python path. The
native case is skipped only when ``elastic_native`` is not built *and* we are not in
CI: in CI (``CI=true``) a missing native module is a failure, never a silent skip.

Hypothesis profiles: ``ci`` (default; fixed derandomised examples, fast) and ``dev``
(many more, random, seed printed). Pick one with ``HYPOTHESIS_PROFILE=dev``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from elastic_channels import rows

settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

IN_CI = os.environ.get("CI") == "true"

try:
    import elastic_native as _elastic_native
except ImportError as e:  # not built here
    _elastic_native = None
    _NATIVE_IMPORT_ERROR: ImportError | None = e
else:
    _NATIVE_IMPORT_ERROR = None


def require_native() -> ModuleType:
    """The native module; skips the test when it is not built (fails in CI)."""
    if _elastic_native is None:
        why = f"elastic_native is not importable: {_NATIVE_IMPORT_ERROR}"
        if IN_CI:
            pytest.fail(f"{why} (CI=true: the native module must be built)")
        pytest.skip(why)
    return _elastic_native


class GeneratorFactory:
    """``make(run_id, worker_id, start_seq=0)`` for one backend."""

    def __init__(self, name: str, cls: Callable[..., object]) -> None:
        self.name = name
        self._cls = cls

    def __call__(self, run_id: object, worker_id: object, start_seq: object = 0):
        return self._cls(run_id, worker_id, start_seq=start_seq)

    def __repr__(self) -> str:
        return f"<{self.name} ResortGenerator factory>"


def factory_for(name: str) -> GeneratorFactory:
    if name == "native":
        return GeneratorFactory("native", require_native().ResortGenerator)
    return GeneratorFactory("python", rows.ResortGenerator)


@pytest.fixture(params=["native", "python"], ids=["native", "python"])
def backend(request: pytest.FixtureRequest):
    """A generator factory for one backend: ``make(run_id, worker_id, start_seq=0)``."""
    yield factory_for(request.param)


@pytest.fixture(scope="session")
def native() -> ModuleType:
    """The native module (skipped when not built outside CI)."""
    return require_native()
