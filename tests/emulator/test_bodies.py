"""bodies.inflate: every zstd frame (and gzip member) decompressed in bounded steps under
one cap; damaged, cut-off and trailing bytes refused (issue #12 item 2)."""

from __future__ import annotations

import tracemalloc

import pytest
import zstandard

from elastic_channels.emulator.http.bodies import MAX_RAW_BYTES, BadBody, BodyTooLarge, inflate

SKIPPABLE = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"


def _zstd(data: bytes, **kwargs) -> bytes:
    return zstandard.ZstdCompressor(**kwargs).compress(data)


def zstd_zeros_bomb(size: int, declare_size: bool) -> bytes:
    """One zstd frame of ``size`` zero bytes (2 GiB is ~64 KiB on the wire)."""
    z = zstandard.ZstdCompressor(level=1, write_content_size=declare_size)
    obj = z.compressobj(size=size if declare_size else -1)
    step = b"\0" * (64 << 20)
    return b"".join([obj.compress(step) for _ in range(size // len(step))] + [obj.flush()])


@pytest.mark.parametrize("declare_size", [True, False], ids=["declared", "undeclared"])
def test_a_zstd_frame_of_2_gib_of_zeros_stops_at_the_cap(declare_size):
    bomb = zstd_zeros_bomb(2 << 30, declare_size)
    assert len(bomb) < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge, match="inflates past"):
            inflate(bomb, "zstd")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_RAW_BYTES, f"{peak} bytes allocated at the peak"


def test_the_cap_counts_every_frame_together():
    frame = _zstd(b"x" * (1 << 20), write_content_size=False)
    assert len(inflate(frame * 4, "zstd", cap=4 << 20)) == 4 << 20
    with pytest.raises(BodyTooLarge):
        inflate(frame * 5, "zstd", cap=4 << 20)
    declared = _zstd(b"x" * (1 << 20))
    with pytest.raises(BodyTooLarge):
        inflate(declared * 5, "zstd", cap=4 << 20)


@pytest.mark.parametrize(
    "body, size",
    [
        (_zstd(b"a" * 100_000) + _zstd(b"b" * 10), 100_010),
        (_zstd(b"c" * 5000, write_checksum=True) + _zstd(b"a" * 10), 5010),
        (_zstd(b"d" * 300_000, write_content_size=False) + _zstd(b"a" * 7), 300_007),
        (SKIPPABLE + _zstd(b"a" * 100) + SKIPPABLE, 100),
    ],
    ids=["two-frames", "checksum", "undeclared-size", "skippable"],
)
def test_every_frame_lands(body, size):
    assert len(inflate(body, "zstd")) == size


def _lying(declared: int) -> bytes:
    frame = bytearray(_zstd(b"a" * 100_000))
    assert frame[4] == 0xA0  # 4-byte content size at bytes 5..8
    frame[5:9] = declared.to_bytes(4, "little")
    return bytes(frame)


ONE = _zstd(b"a" * 100_000, write_checksum=True)


@pytest.mark.parametrize(
    "body",
    [
        ONE[:-2],
        ONE + ONE[:10],
        ONE + b"xx",
        ONE + SKIPPABLE[:-1],
        b"not zstd at all",
        ONE[:20] + bytes([ONE[20] ^ 0xFF]) + ONE[21:],
        _lying(1000),
        _lying(200_000),
    ],
    ids=[
        "cut-checksum",
        "cut-second",
        "trailing",
        "cut-skippable",
        "garbage",
        "corrupt",
        "declares-less",
        "declares-more",
    ],
)
def test_a_damaged_or_cut_off_zstd_body_is_bad(body):
    with pytest.raises(BadBody, match="zstd body"):
        inflate(body, "zstd")
