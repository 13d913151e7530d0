"""A UTF-8 byte order mark at the start of an NDJSON line lands alike on both parse paths
(issue #23 item 5): RFC 8259 lets a parser ignore one before a JSON text, and each line
is one. On main a BOM before line 2 landed on ``--parse native`` and was refused on
``--parse sql`` (DuckDB's line reader skips one only at the start of a file). A BOM
anywhere else in a line is still malformed JSON, on both, with the same line number."""

from __future__ import annotations

import pytest
from emulator_support import require_native_parse

from elastic_channels.emulator.api.stats import Stats
from elastic_channels.emulator.landing.lander import Lander
from elastic_channels.emulator.landing.rowcheck import RowChecker
from elastic_channels.emulator.storage.parquet_store import ParquetStore
from elastic_channels.model import COLUMNS
from elastic_channels.rows import ResortGenerator

BOM = b"\xef\xbb\xbf"
T_US = 1_700_000_000_000_000
L1, L2, L3 = ResortGenerator("bom", 0).next_batch(3, T_US).splitlines()

#: body -> (rows landed, line numbers refused)
CASES = {
    "before-line-2": (L1 + b"\n" + BOM + L2 + b"\n" + L3 + b"\n", 3, []),
    "before-line-1": (BOM + L1 + b"\n" + L2 + b"\n", 2, []),
    "before-every-line": (BOM + L1 + b"\n" + BOM + L2 + b"\n" + BOM + L3 + b"\n", 3, []),
    "two-before-line-2": (L1 + b"\n" + BOM + BOM + L2 + b"\n", 2, []),
    "crlf-lines": (L1 + b"\r\n" + BOM + L2 + b"\r\n", 2, []),
    "after-a-space": (L1 + b"\n " + BOM + L2 + b"\n", 1, [2]),
    "inside-the-object": (L1 + b"\n" + L2[:1] + BOM + L2[1:] + b"\n", 1, [2]),
    "at-the-end": (L1 + b"\n" + L2 + BOM + b"\n" + L3 + b"\n", 2, [2]),
}


@pytest.fixture(scope="module")
def checkers():
    require_native_parse()
    return {parse: RowChecker(COLUMNS, parse=parse) for parse in ("native", "sql")}


@pytest.mark.parametrize("case", list(CASES))
def test_both_parse_paths_land_and_refuse_alike(checkers, case):
    body, landed, refused = CASES[case]
    got = {}
    for parse, checker in checkers.items():
        good, _, errors = checker.check(body)
        got[parse] = (len(good.splitlines()), [e.line for e in errors])
    assert got["native"] == got["sql"] == (landed, refused), got


def test_a_bom_before_line_2_lands_through_the_lander(tmp_path, parse):
    work = tmp_path / "spool-work"
    work.mkdir()
    store = ParquetStore(tmp_path / "db.duckdb", "RESORT_SALES", COLUMNS, threads=1,
                         work_dir=work, parse=parse, fsync=False)  # fmt: skip
    lander = Lander(tmp_path / "spool", store, Stats(), fsync=False)
    lander.start()
    try:
        body = CASES["before-line-2"][0]
        lander.put(("DB", "PUBLIC", "PIPE", "CH"), "bom", body, "identity", len(body))
        assert lander.wait_idle(30)
        assert store.query("SELECT count(*) FROM RESORT_SALES")[1] == [(3,)]
        assert store.query("SELECT count(*) FROM _EMULATOR_ERRORS")[1] == [(0,)]
    finally:
        lander.stop(10)
        store.close()
