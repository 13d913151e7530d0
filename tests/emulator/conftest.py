"""Every landing behaviour test runs on both parse paths (``--parse native|sql``), and
the store-level ones on both ways the native table is stored (``store_kind``: Parquet
files, the default, and the DuckDB table an older data dir holds).

``parse`` is parametrised over the native row parser and the SQL path; the native case
is skipped only when it is not built, and then only outside CI (``CI=true``: a failure),
as the root conftest does for the generator's backends.
"""

from __future__ import annotations

import pytest
from emulator_support import require_native_parse

from elastic_channels.emulator.landing.parse_backends import PARSE_BACKENDS


@pytest.fixture(params=PARSE_BACKENDS)
def parse(request) -> str:
    """The landing parse path, by name."""
    if request.param == "native":
        require_native_parse()
    return request.param


@pytest.fixture(params=("files", "table"))
def store_kind(request) -> str:
    """How the native table is stored: Parquet files + a view, or a DuckDB table."""
    return request.param
