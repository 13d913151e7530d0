"""Exactly once by content, not by spelling (issue #30 item 4): a fragment is one byte range
of one stage object however its ``file_path`` spells the object (``<bucket>/<key>`` or the
key relative to the stage location), and a registration that disagrees with a taken one
over an overlapping range (another length, rows or etag) is refused with 409, never
acked. Hand-made files over HTTPS, and the ledger on its own."""

from __future__ import annotations

import threading

import pytest
import zstandard
from emulator_support import make_emulator
from file_mode_support import FileModeClient, SealedFile, encrypt, landed, ndjson, seal

from elastic_channels.emulator.api.fragment_ledger import FragmentLedger, Span, fragment_id
from elastic_channels.emulator.http.errors import ApiError

ROWS = 30


def _client(emu) -> FileModeClient:
    return FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    emulator = make_emulator(tmp_path_factory.mktemp("content"))
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture(scope="module")
def client(emu) -> FileModeClient:
    return _client(emu)


def _relative(emu, file_path: str) -> str:
    """The same object's path relative to the stage location (the other spelling)."""
    location = emu.file_mode.stage.location
    assert file_path.startswith(location), (file_path, location)
    return file_path.removeprefix(location)


def _conflict(status: int, reply: dict) -> str:
    assert status == 409, (status, reply)
    assert reply["code"] == "ERR_FILE_FRAGMENT_CONFLICT", reply
    return reply["message"]


# --- two spellings, one object -------------------------------------------------------


def test_both_spellings_in_one_call_are_one_fragment_listed_twice(emu, client):
    frag = client.stage_file("one-call.ndjson", "spell-one-call", ROWS)
    other = {**frag, "file_path": _relative(emu, frag["file_path"])}
    status, reply = client.register([frag, other])
    assert status == 400 and "listed twice" in reply["message"], reply
    assert landed(emu, "spell-one-call") == 0
    assert client.register([other])[0] == 200
    assert landed(emu, "spell-one-call") == ROWS


def test_the_other_spelling_after_the_first_is_its_retry(emu, client):
    frag = client.stage_file("after.ndjson", "spell-after", ROWS)
    assert client.register([frag])[0] == 200
    status, reply = client.register([{**frag, "file_path": _relative(emu, frag["file_path"])}])
    assert status == 200 and reply["next_continuation_token"], reply  # acked, not again
    assert landed(emu, "spell-after") == ROWS


def test_racing_the_two_spellings_lands_each_file_once(emu, client):
    rounds = 5  # today's main landed it twice 6 times of 6
    for n in range(rounds):
        run_id = f"spell-race-{n}"
        frag = client.stage_file(f"race-{n}.ndjson", run_id, ROWS)
        bodies = [[frag], [{**frag, "file_path": _relative(emu, frag["file_path"])}]]
        statuses: list[int] = []
        start = threading.Barrier(2, timeout=10)

        def send(body, start=start, statuses=statuses):
            start.wait()
            statuses.append(client.register(body)[0])

        threads = [threading.Thread(target=send, args=(b,)) for b in bodies]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads), "a registration did not return in 30 s"
        assert statuses == [200, 200], (n, statuses)
        assert landed(emu, run_id) == ROWS, f"round {n}"


# --- a range registered again, otherwise: 409 ----------------------------------------


def _two_frames_one_stream(client: FileModeClient, run_id: str) -> tuple[SealedFile, bytes]:
    """Two zstd frames encrypted as one AES-CTR stream from one IV: the first frame alone,
    and both frames together, are each a fragment that checks. (The first frame as a
    SealedFile, the whole file's bytes.)"""
    first, second = ndjson(run_id, ROWS), ndjson(run_id + "-more", 7)
    frame1, frame2 = (zstandard.ZstdCompressor().compress(p) for p in (first, second))
    sealed = seal(run_id, ROWS, client.key)  # for its IV only
    data = encrypt(client.key, sealed.iv, frame1 + frame2)
    return SealedFile(data[: len(frame1)], first, ROWS, sealed.iv), data


def test_a_greater_length_at_the_same_start_is_refused_not_acked(emu, client):
    run_id = "longer"
    head, data = _two_frames_one_stream(client, run_id)
    path, etag = client.upload("longer.ndjson", data)
    short = client.fragment(path, etag, head, file_length=len(data))
    assert client.register([short])[0] == 200
    more = len(ndjson(run_id + "-more", 7))
    longer = {
        **short, "fragment_length_bytes": len(data), "fragment_row_count": ROWS + 7,
        "fragment_length_uncompressed_bytes": len(head.plain) + more + ROWS + 7 - 2,
    }  # fmt: skip
    message = _conflict(*client.register([longer]))
    assert f"bytes 0..{len(data)}" in message and f"bytes 0..{len(head.data)}" in message
    assert (landed(emu, run_id), landed(emu, run_id + "-more")) == (ROWS, 0)


def test_another_row_count_or_etag_over_a_taken_range_is_refused(emu, client):
    frag = client.stage_file("rows.ndjson", "other-rows", ROWS)
    assert client.register([frag])[0] == 200
    message = _conflict(*client.register([{**frag, "fragment_row_count": ROWS + 1}]))
    assert f"{ROWS + 1} rows" in message and f"{ROWS} rows" in message, message
    again = seal("other-etag", ROWS, client.key)  # new content uploaded under the same name
    path, etag = client.upload("rows.ndjson", again.data)
    message = _conflict(*client.register([client.fragment(path, etag, again)]))
    assert f"etag {etag}" in message and f"etag {frag['file_etag']}" in message, message
    assert (landed(emu, "other-rows"), landed(emu, "other-etag")) == (ROWS, 0)


def test_overlapping_fragments_of_one_call_are_refused_whole(emu, client):
    head, data = _two_frames_one_stream(client, "overlap")
    path, etag = client.upload("overlap.ndjson", data)
    short = client.fragment(path, etag, head, file_length=len(data))
    late = {**short, "fragment_start_byte_offset": 5, "fragment_length_bytes": 10}
    message = _conflict(*client.register([short, late]))
    assert "fragment 0 of this call" in message, message
    assert landed(emu, "overlap") == 0


def test_the_ledger_outlives_a_restart(tmp_path):
    first = make_emulator(tmp_path)
    try:
        client = _client(first)
        head, data = _two_frames_one_stream(client, "restarted")
        path, etag = client.upload("restarted.ndjson", data)
        short = client.fragment(path, etag, head, file_length=len(data))
        assert client.register([short])[0] == 200
        assert landed(first, "restarted") == ROWS
    finally:
        first.stop()
    again = make_emulator(tmp_path)
    try:
        client = _client(again)
        _conflict(*client.register([{**short, "fragment_row_count": ROWS - 1}]))
        relative = {**short, "file_path": _relative(again, short["file_path"])}
        assert client.register([relative])[0] == 200  # the same, spelt otherwise: a retry
        assert landed(again, "restarted") == ROWS
    finally:
        again.stop()


# --- the ledger ----------------------------------------------------------------------


def test_ids_name_the_object_and_the_range_and_read_back():
    span = Span(100, 50, "ab" * 16, 7)
    assert fragment_id("streaming/c/0.ndjson", span) == (
        f"file:streaming/c/0.ndjson@100+50:{'ab' * 16}:7"
    )
    ledger = FragmentLedger.from_ids([fragment_id("streaming/c/0.ndjson", span)], str)
    assert ledger.fresh([("streaming/c/0.ndjson", span)]) == [False]
    assert ledger.fresh([("streaming/c/0.ndjson", Span(150, 10, span.etag, 1))]) == [True]
    assert ledger.fresh([("streaming/c/1.ndjson", span)]) == [True]
    with pytest.raises(ApiError) as e:
        ledger.fresh([("streaming/c/0.ndjson", Span(120, 10, span.etag, 1))])
    assert e.value.status == 409


def test_ids_of_the_older_form_are_known_by_start_and_etag():
    etag = "cd" * 16
    old = f"file:stage-b/streaming/c/0.ndjson@0:{etag}"
    ledger = FragmentLedger.from_ids([old], lambda p: p.removeprefix("stage-b/"))
    assert ledger.fresh([("streaming/c/0.ndjson", Span(0, 99, etag, 5))]) == [False]
    with pytest.raises(ApiError):
        ledger.fresh([("streaming/c/0.ndjson", Span(0, 99, "ee" * 16, 5))])
