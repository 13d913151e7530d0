"""File mode's registration endpoint (``POST .../channels/ELASTIC/filebuffer``), called by
hand over HTTPS: a good registration lands its rows once however often it is sent, each
bad fragment is refused with a 400 naming the problem and nothing of its call lands, and
the pipe key and staged files outlive a restart."""

from __future__ import annotations

import base64
import json
import re
import secrets

import pytest
from emulator_support import EmulatorProcess, make_emulator
from file_mode_support import FileModeClient, landed, seal

ROWS = 40


def _client(emu) -> FileModeClient:
    return FileModeClient(emu.info(), emu.tokens.issue("EMULATOR_USER", "localhost"))


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    emulator = make_emulator(tmp_path_factory.mktemp("fragments"))
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture(scope="module")
def client(emu) -> FileModeClient:
    return _client(emu)


def test_a_registration_lands_its_rows_once_however_often_it_is_sent(emu, client):
    frag = client.stage_file("good.ndjson", "frag-good", ROWS)
    before = emu.stats_snapshot()["file_fragments"]
    status, reply = client.register([frag])
    assert status == 200 and reply["next_continuation_token"], reply
    assert landed(emu, "frag-good") == ROWS
    status, again = client.register([frag])  # the SDK retrying a call whose ack it lost
    assert status == 200 and again["next_continuation_token"], again
    assert landed(emu, "frag-good") == ROWS
    assert emu.stats_snapshot()["file_fragments"] == before + 1


def test_a_file_of_two_fragments_lands_both_once(emu, client):
    first, second = seal("frag-two", ROWS, client.key), seal("frag-two-b", 7, client.key)
    data = first.data + second.data
    path, etag = client.upload("two.ndjson", data)
    frags = [
        client.fragment(path, etag, first, file_length=len(data)),
        client.fragment(path, etag, second, file_length=len(data), start=len(first.data)),
    ]
    assert client.register(frags)[0] == 200
    assert client.register(frags[1:])[0] == 200  # a retry of part of it
    assert (landed(emu, "frag-two"), landed(emu, "frag-two-b")) == (ROWS, 7)


# --- refused: 400, a message naming the problem, nothing of the call landed ----------


#: A bad body: the body, and a regex its error message matches.
BODY_CASES = {
    "not JSON": (b"nope", "not JSON"),
    "not a list": ({"file_path": "x"}, "non-empty JSON list"),
    "empty list": ([], "non-empty JSON list"),
}
#: A good fragment with fields changed: (its fragment, its sealed file) -> the changes,
#: and a regex the error message matches.
FIELD_CASES = {
    "wrong file_length_bytes": (
        lambda f, s: {"file_length_bytes": len(s.data) + 1}, "registration says"),
    "wrong etag": (lambda f, s: {"file_etag": "0" * 32}, "file_etag .* is not the staged file's"),
    "range past the end": (lambda f, s: {"fragment_start_byte_offset": 1}, "not inside the file"),
    "range longer than the file": (
        lambda f, s: {"fragment_length_bytes": len(s.data) + 1}, "not inside the file"),
    "empty range": (lambda f, s: {"fragment_length_bytes": 0}, "not inside the file"),
    "iv not base64": (lambda f, s: {"iv_base64": "not base64!"}, "iv_base64 is not 16 bytes"),
    "iv of 8 bytes": (
        lambda f, s: {"iv_base64": base64.b64encode(bytes(8)).decode()},
        "iv_base64 is not 16 bytes"),
    "unknown master_key_id": (
        lambda f, s: {"master_key_id": "2"}, "master_key_id '2' is not a key of this pipe"),
    "one row too many": (
        lambda f, s: {"fragment_row_count": ROWS + 1,
                      "fragment_length_uncompressed_bytes": len(s.plain)},
        f"fragment_row_count is {ROWS + 1}, the fragment holds {ROWS} rows"),
    "one row too few": (
        lambda f, s: {"fragment_row_count": ROWS - 1,
                      "fragment_length_uncompressed_bytes": len(s.plain)},
        f"fragment_row_count is {ROWS - 1}, the fragment holds {ROWS} rows"),
    "uncompressed below the plaintext": (
        lambda f, s: {"fragment_length_uncompressed_bytes": len(s.plain) - 1},
        "fragment_length_uncompressed_bytes is"),
    "uncompressed above plaintext + rows - 1": (
        lambda f, s: {"fragment_length_uncompressed_bytes": len(s.plain) + ROWS},
        "fragment_length_uncompressed_bytes is"),
    "wrong encryption_version": (
        lambda f, s: {"encryption_version": "AES-CTR-256.1"}, "encryption_version 'AES-CTR-256.1'"),
    "row count not an integer": (
        lambda f, s: {"fragment_row_count": str(ROWS)},
        "fragment_row_count must be a non-negative integer"),
    "file_path with ..": (
        lambda f, s: {"file_path": f["file_path"].replace("/bad-", "/x/../bad-")},
        r"'\.\.' segment"),
    "absolute file_path": (lambda f, s: {"file_path": "/" + f["file_path"]}, "is absolute"),
}  # fmt: skip
OTHER_CASES = (
    "missing file", "wrong key", "not zstd after decryption", "a fragment listed twice",
    "one good and one bad fragment",
)  # fmt: skip
BAD_CASES = (*BODY_CASES, *FIELD_CASES, *OTHER_CASES)


def _bad_body(client: FileModeClient, case: str, run_id: str) -> tuple[object, str]:
    """The registration body of one bad case, and a regex its error message matches."""
    if case in BODY_CASES:
        return BODY_CASES[case]
    key = secrets.token_bytes(32) if case == "wrong key" else client.key
    sealed = seal(run_id, ROWS, key)
    if case == "not zstd after decryption":  # the NDJSON encrypted as it is
        sealed = seal(run_id, ROWS, key, payload=sealed.plain)
    name = f"{run_id}.ndjson"
    if case == "missing file":
        path = f"{client.bucket}/{client.prefix}{name}"  # never uploaded
        return [client.fragment(path, "0" * 32, sealed)], "is not in the stage"
    good = client.fragment(*client.upload(name, sealed.data), sealed)
    if case == "wrong key":
        return [good], "does not decrypt to NDJSON in zstd with key 1"
    if case == "not zstd after decryption":
        return [good], "does not decrypt to NDJSON in zstd"
    if case == "a fragment listed twice":
        return [good, good], "a fragment is listed twice"
    if case == "one good and one bad fragment":
        other = client.stage_file(f"{run_id}-ok.ndjson", run_id, ROWS)
        return [other, {**good, "file_etag": "0" * 32}], "is not the staged file's"
    change, why = FIELD_CASES[case]
    return [{**good, **change(good, sealed)}], why


@pytest.mark.parametrize("case", BAD_CASES)
def test_a_bad_registration_is_refused_whole_naming_the_problem(emu, client, case):
    run_id = "bad-" + "".join(c if c.isalnum() else "-" for c in case)
    body, why = _bad_body(client, case, run_id)
    before = emu.stats_snapshot()["file_fragments"]
    status, reply = client.register(body)
    assert status == 400, (status, reply)
    assert reply["code"].startswith("ERR_"), reply
    assert re.search(why, reply["message"]), reply
    assert landed(emu, run_id) == 0
    assert emu.stats_snapshot()["file_fragments"] == before


def test_the_good_fragment_of_a_refused_call_still_registers_after(emu, client):
    good = client.stage_file("mixed-ok.ndjson", "frag-mixed", ROWS)
    bad = client.stage_file("mixed-bad.ndjson", "frag-mixed-bad", ROWS)
    assert client.register([good, {**bad, "fragment_row_count": 1}])[0] == 400
    assert landed(emu, "frag-mixed") == 0
    assert client.register([good])[0] == 200  # refused whole: nothing of it was taken
    assert landed(emu, "frag-mixed") == ROWS


# --- restarts -------------------------------------------------------------------------


def _rows_of(proc: EmulatorProcess, run_id: str) -> int:
    assert proc.wait_landed(30), "landing did not finish in 30 s"
    (got,) = proc.query(
        "SELECT count(*) AS n, count(DISTINCT TXID) AS d FROM RESORT_SALES "
        f"WHERE RUN_ID = '{run_id}'"
    )
    assert got["n"] == got["d"], f"{run_id}: a TXID landed more than once"
    return got["n"]


def test_the_pipe_key_and_staged_files_outlive_a_restart(tmp_path):
    data = tmp_path / "emu"
    first = EmulatorProcess(data).start()
    try:
        client = FileModeClient(first.info, first.scoped_token())
        landed_before = client.stage_file("before.ndjson", "restart-landed", ROWS)
        assert client.register([landed_before])[0] == 200
        assert _rows_of(first, "restart-landed") == ROWS
        waiting = client.stage_file("waiting.ndjson", "restart-waiting", ROWS)
    finally:
        assert first.stop() == 0, first.stderr()
    keys_file = data / "pipe_keys.json"
    assert keys_file.stat().st_mode & 0o777 == 0o600
    assert base64.b64decode(json.loads(keys_file.read_text())["keys"]["1"]) == client.key
    again = EmulatorProcess(data).start()
    try:
        after = FileModeClient(again.info, again.scoped_token())
        assert after.key == client.key, "pipe-info hands out the same key after a restart"
        assert after.register([waiting])[0] == 200  # uploaded before, registered after
        assert after.register([landed_before])[0] == 200  # landed before: acked, not again
        assert _rows_of(again, "restart-waiting") == ROWS
        assert _rows_of(again, "restart-landed") == ROWS
    finally:
        assert again.stop() == 0, again.stderr()
