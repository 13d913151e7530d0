"""A damaged data dir stops ``serve`` with one line that names the damaged file (issue
#23 item 5), never a traceback or a bare ``KeyError``: a spool meta file that is not
JSON, lacks or mistypes a field; a database whose bookkeeping tables lost a column; a
database file that is not DuckDB's; a user's public key or the CA's key that is not
PEM. On main a damaged meta file gave an error naming no file or a ``KeyError``, and a
renamed bookkeeping column a DuckDB traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import duckdb
import pytest
from emulator_support import child_env

from elastic_channels.emulator.landing.spool import Spool, SpoolEntry, SpoolError

GOOD_META = {
    "seq": 1, "data_file": "000000000001.ndjson", "channel": ["DB", "PUBLIC", "PIPE", "CH"],
    "request_id": "r1", "wire_bytes": 3, "raw_bytes": 3, "encoding": "identity",
    "offset_token": None,
}  # fmt: skip
DAMAGED_META = {
    "truncated": b'{"seq": 1, "data_fi',
    "not-an-object": b"[1, 2]",
    "no-channel": json.dumps({k: v for k, v in GOOD_META.items() if k != "channel"}).encode(),
    "no-seq": json.dumps({k: v for k, v in GOOD_META.items() if k != "seq"}).encode(),
    "channel-text": json.dumps({**GOOD_META, "channel": "DB.PUBLIC"}).encode(),
    "seq-text": json.dumps({**GOOD_META, "seq": "1"}).encode(),
    "encoding": json.dumps({**GOOD_META, "encoding": "brotli"}).encode(),
    "data-file-path": json.dumps({**GOOD_META, "data_file": "../../etc/passwd"}).encode(),
    "unknown-field": json.dumps({**GOOD_META, "raw": "held"}).encode(),
    "not-utf8": b'{"seq": 1, "request_id": "\xff"}',
}


def _serve(data_dir, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "elastic_channels.emulator", "serve", "--data-dir",
         str(data_dir), "--duration-seconds", "0.2"],
        env=child_env(), capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.fixture(scope="module")
def clean_dir(tmp_path_factory):
    """A data dir an emulator made and stopped (with a landed file)."""
    data_dir = tmp_path_factory.mktemp("damaged") / "emu"
    done = _serve(data_dir)
    assert done.returncode == 0, done.stderr
    return data_dir


def _copy(clean_dir, tmp_path):
    target = tmp_path / "emu"
    shutil.copytree(clean_dir, target)
    return target


def _one_line_naming(done: subprocess.CompletedProcess, path) -> str:
    assert done.returncode == 1, done.stderr
    err = done.stderr.strip()
    assert "Traceback" not in err and "KeyError" not in err, err
    assert err.startswith("error: ") and str(path) in err, err
    return err


@pytest.mark.parametrize("damage", list(DAMAGED_META))
def test_a_damaged_spool_meta_file_is_named_in_spool_recovery(tmp_path, damage):
    spool = Spool(tmp_path / "spool", fsync=False)
    (spool.dir / "000000000001.ndjson").write_bytes(b"{}\n")
    meta = spool.dir / "000000000001.meta.json"
    meta.write_bytes(DAMAGED_META[damage])
    with pytest.raises(SpoolError, match="is damaged") as e:
        spool.recover()
    assert str(meta) in str(e.value) and "acked" in str(e.value)


def test_a_good_meta_file_still_recovers(tmp_path):
    spool = Spool(tmp_path / "spool", fsync=False)
    entry = SpoolEntry(**{**GOOD_META, "channel": tuple(GOOD_META["channel"])})
    spool.write(entry, b"{}\n")
    assert spool.recover() == [entry]


@pytest.mark.parametrize("damage", ["truncated", "no-channel"])
def test_serve_stops_naming_the_meta_file(clean_dir, tmp_path, damage):
    data_dir = _copy(clean_dir, tmp_path)
    meta = data_dir / "spool" / "000000000001.meta.json"
    (data_dir / "spool" / "000000000001.ndjson").write_bytes(b"{}\n")
    meta.write_bytes(DAMAGED_META[damage])
    err = _one_line_naming(_serve(data_dir), meta)
    assert "spool meta file" in err


@pytest.mark.parametrize(
    ("table", "column"), [("_EMULATOR_LANDED", "SEQ"), ("_EMULATOR_FILES", "NAME"),
                          ("_EMULATOR_ERRORS", "MESSAGE")],
)  # fmt: skip
def test_serve_stops_naming_a_database_whose_bookkeeping_lost_a_column(
    clean_dir, tmp_path, table, column
):
    data_dir = _copy(clean_dir, tmp_path)
    db = data_dir / "emulator.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"ALTER TABLE {table} RENAME COLUMN {column} TO GONE")
    con.close()
    err = _one_line_naming(_serve(data_dir), db)
    assert table in err and "damaged" in err


@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_serve_stops_naming_a_database_file_that_is_not_duckdbs(clean_dir, tmp_path, how):
    data_dir = _copy(clean_dir, tmp_path)
    db = data_dir / "emulator.duckdb"
    if how == "garbage":
        db.write_bytes(b"\x17" * 100_000)
    else:
        db.write_bytes(db.read_bytes()[:5000])
    _one_line_naming(_serve(data_dir), db)


@pytest.mark.parametrize("name", ["users/EMULATOR_USER.pub.pem", "tls/ca.key"])
def test_serve_stops_naming_a_damaged_key_file(clean_dir, tmp_path, name):
    data_dir = _copy(clean_dir, tmp_path)
    (data_dir / name).write_text("not a key\n")
    if name == "tls/ca.key":  # read only when the leaf is issued again
        (data_dir / "tls" / "server-names.json").write_text("{")
    _one_line_naming(_serve(data_dir), data_dir / name)
