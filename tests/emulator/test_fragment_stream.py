"""Fragments checked as a stream (issue #30 item 1): a fragment is inflated and counted in
pieces, so one over the inline bodies' 64 MiB is taken and none is held raw; a staged file
is read once per call however many fragments name it; what a call declares is bounded
before anything is read; the lander inflates a file fragment under a cap of its own size.
Hand-made files, FileRegistrations with a stage and a lander of its own."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import secrets
import tracemalloc
from pathlib import Path

import pytest
import zstandard
from file_mode_support import encrypt

from elastic_channels.emulator.api.files import FileRegistrations
from elastic_channels.emulator.api.fragments import (
    MAX_CALL_FILE_BYTES,
    MAX_UNCOMPRESSED_BYTES,
    LineCounter,
)
from elastic_channels.emulator.api.pipe_keys import PipeKeys
from elastic_channels.emulator.api.stats import Stats
from elastic_channels.emulator.http.bodies import MAX_RAW_BYTES, BodyTooLarge
from elastic_channels.emulator.http.errors import ApiError
from elastic_channels.emulator.landing.lander import read_raw
from elastic_channels.emulator.landing.spool import Spool, SpoolEntry

LOCATION = "emulator-stage-test/streaming/"
CHANNEL = ("DB", "PUBLIC", "PIPE", "ELASTIC")
#: A row of 100 bytes: 700,000 of them are ~70 MB raw, a few hundred KB in zstd.
ROW = b'{"k":"' + b"x" * 90 + b'"}\n'


class Stage:
    """The stage as registration sees it: files by path, reads counted."""

    location = LOCATION

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.reads: list[str] = []

    def read(self, file_path: str) -> bytes:
        self.reads.append(file_path)
        return self.files[file_path]

    def remove(self, file_path: str) -> bool:
        return self.files.pop(file_path, None) is not None

    def check_owner(self, file_path: str, user: str) -> None:
        """Every file here is the (one) client's own."""


class Lander:
    """What registration spools: (request id, frame bytes, raw bytes) per fragment."""

    def __init__(self) -> None:
        self.put_calls: list[tuple[str, int, int]] = []

    def put(self, channel, request_id, body, encoding, raw_bytes, **_) -> None:
        self.put_calls.append((request_id, len(body), raw_bytes))


@pytest.fixture
def parts(tmp_path):
    stage, lander, keys = Stage(), Lander(), PipeKeys(tmp_path)
    files = FileRegistrations(stage, keys, lander, Stats())  # type: ignore[arg-type]
    return stage, lander, keys, files


def _stage(stage: Stage, keys: PipeKeys, name: str, plains: list[bytes]) -> list[dict]:
    """A file of one zstd frame per plaintext, each sealed under its own IV; its
    fragments, as SDK 1.9.1 registers them (one chunk per plaintext)."""
    key_id, _ = keys.current()
    key = keys.key(key_id)
    sealed, frags, start = [], [], 0
    for plain in plains:
        iv = secrets.token_bytes(16)
        frame = zstandard.ZstdCompressor(level=1).compress(plain)
        sealed.append(encrypt(key, iv, frame))
        rows = sum(1 for line in plain.split(b"\n") if line.strip())
        frags.append({
            "file_path": LOCATION + name, "content_type": "application/x-ndjson",
            "fragment_length_bytes": len(sealed[-1]),
            "fragment_length_uncompressed_bytes": len(plain) + max(rows - 1, 0),
            "fragment_row_count": rows, "fragment_start_byte_offset": start,
            "master_key_id": key_id, "iv_base64": base64.b64encode(iv).decode(),
            "encryption_version": "AES-CTR-128.1",
        })  # fmt: skip
        start += len(sealed[-1])
    data = b"".join(sealed)
    stage.files[LOCATION + name] = data
    etag = hashlib.md5(data, usedforsecurity=False).hexdigest()
    return [{**f, "file_etag": etag, "file_length_bytes": len(data)} for f in frags]


def _register(files: FileRegistrations, frags: list[dict]) -> int:
    return files.register(CHANNEL, "r", json.dumps(frags).encode())


def test_lines_are_counted_across_pieces_as_a_whole_body_would_be():
    rng = random.Random(30)
    print("seed 30")
    pieces = [b"a", b"\n", b" \t", b"\r\n", b"{}", b"\n\n", b"x\ny", b"  \n  z", b"\x0b\n"]
    for _ in range(300):
        raw = b"".join(rng.choices(pieces, k=rng.randint(0, 12)))
        want = sum(1 for line in raw.split(b"\n") if line.strip())
        cuts = sorted(rng.sample(range(len(raw) + 1), min(len(raw) + 1, rng.randint(0, 4))))
        counter = LineCounter()
        for lo, hi in zip([0, *cuts], [*cuts, len(raw)], strict=True):
            counter.feed(raw[lo:hi])
        assert counter.rows() == want, (raw, cuts)


def test_a_fragment_over_64_mib_is_taken_without_holding_it_raw(parts):
    stage, lander, keys, files = parts
    rows = 700_000
    frags = _stage(stage, keys, "big.ndjson", [ROW * rows + b"\n"])
    assert frags[0]["fragment_length_uncompressed_bytes"] > MAX_RAW_BYTES
    tracemalloc.start()
    try:
        assert _register(files, frags) == rows
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak} bytes allocated at the peak to check {len(ROW) * rows}"
    ((_, frame_bytes, raw_bytes),) = lander.put_calls
    assert (frame_bytes, raw_bytes) == (frags[0]["fragment_length_bytes"], len(ROW) * rows + 1)


def test_one_call_of_nine_fragments_holds_none_raw_and_reads_the_file_once(parts):
    stage, lander, keys, files = parts
    blank = b" " * (12 << 20) + b"\n"  # 12 MB that inflate to no row: 108 MB in all
    frags = _stage(stage, keys, "nine.ndjson", [blank] * 8 + [ROW * 10])
    tracemalloc.start()
    try:
        assert _register(files, frags) == 10
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"{peak} bytes allocated at the peak for 9 fragments"
    assert stage.reads == [LOCATION + "nine.ndjson"]
    assert len(lander.put_calls) == 9


def test_a_fragment_inflating_past_its_declared_size_is_refused(parts):
    stage, lander, keys, files = parts
    (frag,) = _stage(stage, keys, "liar.ndjson", [ROW * 1000])
    frag["fragment_length_uncompressed_bytes"] = 5000
    with pytest.raises(ApiError, match="uncompressed_bytes is 5000, the fragment inflates to more"):
        _register(files, [frag])
    assert lander.put_calls == []


def _declared(frags: list[dict], **change: int) -> list[dict]:
    return [{**f, **change} for f in frags]


@pytest.mark.parametrize(
    "case, why",
    [
        ("fragment", f"at most {MAX_UNCOMPRESSED_BYTES} a fragment"),
        ("call", f"at most {MAX_UNCOMPRESSED_BYTES} in one call"),
        ("files", f"at most {MAX_CALL_FILE_BYTES} in one call"),
    ],
)
def test_what_a_call_declares_is_bounded_before_any_file_is_read(parts, case, why):
    stage, lander, keys, files = parts
    (a,) = _stage(stage, keys, "a.ndjson", [ROW])
    (b,) = _stage(stage, keys, "b.ndjson", [ROW * 2])
    if case == "fragment":
        body = _declared([a], fragment_length_uncompressed_bytes=MAX_UNCOMPRESSED_BYTES + 1)
    elif case == "call":
        body = _declared([a, b], fragment_length_uncompressed_bytes=MAX_UNCOMPRESSED_BYTES // 2 + 1)
    else:
        body = _declared([a, b], file_length_bytes=MAX_CALL_FILE_BYTES // 2 + 1)
    with pytest.raises(ApiError, match=why) as e:
        _register(files, body)
    assert e.value.status == 400
    assert stage.reads == [] and lander.put_calls == []


def _spooled(tmp_path: Path, request_id: str, raw: bytes) -> tuple[Spool, SpoolEntry]:
    spool = Spool(tmp_path / "spool", fsync=False)
    entry = SpoolEntry(1, Spool.data_name(1, "zstd"), CHANNEL, request_id, 0, len(raw))
    spool.write(entry, zstandard.ZstdCompressor(level=1).compress(raw))
    return spool, entry


def test_the_lander_inflates_a_file_fragment_under_its_own_size(tmp_path):
    raw = ROW * 700_000
    spool, entry = _spooled(tmp_path, "file:streaming/c/0.ndjson@0+9:ab:700000", raw)
    assert read_raw(spool, entry) == raw  # over MAX_RAW_BYTES: its own size is the cap
    spool, entry = _spooled(tmp_path / "rows", "rows-request", raw)
    with pytest.raises(BodyTooLarge):  # an inline body keeps the inline cap
        read_raw(spool, entry)
