"""Hostile bodies against a real emulator process over HTTPS: decompression bombs, every
frame of a multi-frame body, rows that cannot be read (issue #12 items 1-3)."""

from __future__ import annotations

import gzip
import json
import time
import zlib

import pytest
import zstandard
from emulator_support import ROWS_PATH, EmulatorProcess

from elastic_channels.rows import ResortGenerator

T_US = 1_700_000_000_000_000
STATUS_PATH = (
    "/v2/streaming/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
    ":bulk-channel-status?requestId=s"
)


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(tmp_path_factory.mktemp("hostile-bodies") / "emu").start()
    proc.token = proc.scoped_token()
    yield proc
    assert proc.stop() == 0, proc.stderr()


def _append(emu, body: bytes, encoding: str, rid: str, **headers: str):
    h = {"Authorization": f"Bearer {emu.token}", "Content-Type": "application/x-ndjson",
         "Content-Encoding": encoding, **headers}  # fmt: skip
    return emu.request("POST", ROWS_PATH.format(rid=rid), body, h)


def _count(emu, run_id: str) -> int:
    assert emu.wait_landed(60)
    return emu.query(f"SELECT count(*) AS n FROM RESORT_SALES WHERE RUN_ID = '{run_id}'")[0]["n"]


def _status(emu) -> dict:
    h = {"Authorization": f"Bearer {emu.token}", "Content-Type": "application/json"}
    body = json.dumps({"channel_names": ["ELASTIC"]}).encode()
    status, _, out = emu.request("POST", STATUS_PATH, body, h)
    assert status == 200
    return json.loads(out)["channel_statuses"]["ELASTIC"]


def test_a_gzip_bomb_is_413_and_the_emulator_stays_small(emu):
    bomb = gzip.compress(b"\0" * (200 << 20), compresslevel=9)  # ~200 KB on the wire
    status, _, body = _append(emu, bomb, "gzip", "bomb")
    assert status == 413 and b"inflates past" in body
    rss_kb = _peak_rss_kb(emu)
    assert rss_kb < 1_000_000, f"peak RSS {rss_kb} kB: the bomb was inflated whole"


def _zstd_zeros_bomb(size: int, declare_size: bool) -> bytes:
    z = zstandard.ZstdCompressor(level=1, write_content_size=declare_size)
    obj = z.compressobj(size=size if declare_size else -1)
    step = b"\0" * (64 << 20)
    return b"".join([obj.compress(step) for _ in range(size // len(step))] + [obj.flush()])


def _peak_rss_kb(emu) -> int:
    with open(f"/proc/{emu.proc.pid}/status") as f:
        return int(next(line.split()[1] for line in f if line.startswith("VmHWM:")))


@pytest.mark.parametrize("declare_size", [False, True], ids=["undeclared", "declared"])
def test_a_zstd_bomb_is_413_lands_nothing_and_the_emulator_stays_small(emu, declare_size):
    bomb = _zstd_zeros_bomb(2 << 30, declare_size)  # one frame, 2 GiB of zeros, ~64 KB
    run_id = f"zstd-bomb-{declare_size}"
    status, _, body = _append(emu, bomb, "zstd", run_id)
    assert status == 413 and b"inflates past" in body
    rss_kb = _peak_rss_kb(emu)
    assert rss_kb < 1_000_000, f"peak RSS {rss_kb} kB: the bomb was inflated whole"
    assert _count(emu, run_id) == 0


@pytest.mark.parametrize("encoding", ["gzip", "zstd", "deflate"])
def test_every_frame_or_member_of_a_body_lands(emu, encoding):
    run_id = f"frames-{encoding}"
    gen = ResortGenerator(run_id, 0)
    parts = [gen.next_batch(100, T_US) for _ in range(3)]
    if encoding == "gzip":
        wire = b"".join(gzip.compress(p) for p in parts)
    elif encoding == "zstd":
        wire = b"".join(zstandard.ZstdCompressor().compress(p) for p in parts)
    else:
        wire = zlib.compress(b"".join(parts))
    raw_len = sum(map(len, parts))
    status, _, body = _append(
        emu, wire, encoding, run_id, **{"X-Snowflake-Uncompressed-Content-Length": str(raw_len)}
    )
    assert status == 200, body
    assert _count(emu, run_id) == 300


def test_a_damaged_second_frame_is_400_and_lands_nothing(emu):
    gen = ResortGenerator("damaged", 0)
    z = zstandard.ZstdCompressor()
    wire = z.compress(gen.next_batch(50, T_US)) + z.compress(gen.next_batch(50, T_US))[:-7]
    status, _, body = _append(emu, wire, "zstd", "damaged")
    assert status == 400 and b"zstd" in body
    assert _count(emu, "damaged") == 0


def test_a_row_with_invalid_utf8_is_reported_and_nothing_else_stops(emu):
    before = _status(emu)["rows_error_count"]
    gen = ResortGenerator("utf8", 0)
    good = gen.next_batch(40, T_US).splitlines(keepends=True)
    row = json.loads(gen.next_batch(1, T_US))
    bad = json.dumps(row).encode().replace(b'"RESORT": "', b'"RESORT": "\xff\xfe', 1)
    body = b"".join(good[:20]) + bad + b"\n" + b"".join(good[20:])
    status, _, reply = _append(emu, body, "identity", "utf8-bad")
    assert status == 200, reply
    after_it = ResortGenerator("utf8-after", 0).next_batch(30, T_US)
    assert _append(emu, zstandard.ZstdCompressor().compress(after_it), "zstd", "after")[0] == 200
    assert _count(emu, "utf8") == 40
    assert _count(emu, "utf8-after") == 30
    st = _status(emu)
    assert st["rows_error_count"] == before + 1
    assert "invalid UTF-8" in st["last_error_message"]
    assert "line 21" in st["last_error_message"]
    kept = emu.query(
        "SELECT LINE_NUMBER, MESSAGE FROM _EMULATOR_ERRORS WHERE REQUEST_ID = 'utf8-bad'"
    )
    assert kept == [{"LINE_NUMBER": 21, "MESSAGE": kept[0]["MESSAGE"]}]
    # and it stops promptly, nothing left to land
    t0 = time.monotonic()
    assert emu.stop(timeout=30) == 0
    assert time.monotonic() - t0 < 20
    assert not list((emu.data_dir / "spool").glob("*.meta.json"))
    emu.start()
    emu.token = emu.scoped_token()
    assert _count(emu, "utf8") == 40, "nothing lands twice after the restart"
