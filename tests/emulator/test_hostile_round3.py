"""Hostile input, round 3 (issue #23 item 5), against a real emulator process where the
case is about the wire: statements sqlglot cannot translate answer 400 with a plain
reason (main: 500 with sqlglot's internals), key-pair JWTs whose ``exp``/``iat`` are not
whole numbers are refused (main: ``exp: NaN`` never expired, ``iat: NaN`` lifted the
lifetime cap)."""

from __future__ import annotations

import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from emulator_support import EmulatorProcess
from sql_api_support import sql_statement

from elastic_channels.emulator.http.auth import public_key_fingerprint


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    proc = EmulatorProcess(tmp_path_factory.mktemp("round3") / "emu").start()
    yield proc
    assert proc.stop() == 0, proc.stderr()


UNTRANSLATABLE = [
    ("SELECT * FROM IDENTIFIER('/etc/passwd')", 400, "IDENTIFIER(...) is not available"),
    ("UNDROP TABLE ELASTIC_K8S_METRICS", 400, "UNDROP statements are not available"),
    ("SELECT " + "(" * 2000 + "1" + ")" * 2000, 400, "nests expressions too deeply"),
    ("SELECT " + "NOT " * 3000 + "TRUE", 400, "nests expressions too deeply"),
    # sqlglot reads this one; DuckDB's parser refuses it, a compilation error
    ("SELECT " + "1 + " * 6000 + "1", 422, "Max expression depth limit of 1000 exceeded"),
]


@pytest.mark.parametrize(("statement", "code", "reason"), UNTRANSLATABLE)
def test_what_sqlglot_cannot_translate_is_400_with_a_plain_reason(emu, statement, code, reason):
    status, reply = sql_statement(emu, statement)
    assert status == code, reply
    assert reason in reply["message"], reply
    for internal in ("sqlglot", "<class", "Traceback", "RecursionError", "emulator error"):
        assert internal not in reply["message"], reply
    status, reply = sql_statement(emu, "SELECT 1 AS ONE")  # and the emulator goes on
    assert status == 200 and reply["data"] == [["1"]]


def test_a_statement_that_does_not_tokenize_is_a_compilation_error(emu):
    status, reply = sql_statement(emu, "SELECT $$never closed")
    assert status == 422 and reply["code"] == "001003", reply
    assert "SQL compilation error" in reply["message"]


# --- key-pair JWTs ----------------------------------------------------------------------


def _jwt(emu, **claims) -> str:
    """The default user's key-pair JWT with these ``iat``/``exp`` (JSON NaN allowed)."""
    props = emu.info["properties"]
    key = serialization.load_pem_private_key(Path(props["private_key_file"]).read_bytes(), None)
    who = f"{props['account']}.{props['user']}"
    fp = public_key_fingerprint(key.public_key())  # type: ignore[arg-type]
    return jwt.encode({"iss": f"{who}.{fp}", "sub": who, **claims}, key, algorithm="RS256")  # type: ignore[arg-type]


# Each case is a function of the time the test runs: computed at import, the valid
# ones expire before the test reaches them on a slow box (CI took >10 minutes).
TEN_YEARS = 10 * 365 * 86400
BAD_TIMES = [
    (lambda now: {"iat": now, "exp": float("nan")}, "exp must be a whole number"),
    (lambda now: {"iat": float("nan"), "exp": now + TEN_YEARS}, "iat must be a whole number"),
    (lambda now: {"iat": now, "exp": float("inf")}, "exp must be a whole number"),
    (lambda now: {"iat": float("-inf"), "exp": now + 600}, "iat must be a whole number"),
    (lambda now: {"iat": now, "exp": str(now + 600)}, "exp must be a whole number"),
    (lambda now: {"iat": now, "exp": now + 600.5}, "exp must be a whole number"),
    (lambda now: {"iat": True, "exp": now + 600}, "iat must be a whole number"),
    (lambda now: {"iat": now}, "no exp claim"),
    (lambda now: {"iat": now, "exp": now + TEN_YEARS}, "lifetime"),
]


@pytest.mark.parametrize(("claims", "why"), BAD_TIMES)
def test_a_jwt_whose_times_are_not_whole_numbers_is_refused(emu, claims, why):
    status, reply = sql_statement(emu, "SELECT 1", token=_jwt(emu, **claims(int(time.time()))))
    assert status == 401, reply
    assert why in reply["message"], reply


def test_whole_number_times_in_seconds_or_milliseconds_pass(emu):
    now = int(time.time())
    for claims in ({"iat": now, "exp": now + 600}, {"iat": now * 1000, "exp": (now + 600) * 1000},
                   {"iat": float(now), "exp": float(now + 600)}):  # fmt: skip
        status, reply = sql_statement(emu, "SELECT 1", token=_jwt(emu, **claims))
        assert status == 200, (claims, reply)


# --- JSON bodies nested too deep ----------------------------------------------------------

_PIPE = "/v2/streaming/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
_DATA_PIPE = "/v2/streaming/data/databases/EMULATOR_DB/schemas/PUBLIC/pipes/RESORT_SALES_PIPE"
_DEEP = b"[" * 100_000 + b"]" * 100_000
# (endpoint, method, path, whose token, body): every JSON body the emulator decodes
DEEP_BODIES = [
    ("sql api", "POST", "/api/v2/statements", "jwt", _DEEP),
    ("sql api (inside)", "POST", "/api/v2/statements", "jwt", b'{"statement": ' + _DEEP + b"}"),
    ("channel status", "POST", _PIPE + ":bulk-channel-status", "scoped",
     b'{"channel_names": ' + _DEEP + b"}"),
    ("open channel", "PUT", _PIPE + "/channels/C1", "scoped", _DEEP),
    ("filebuffer", "POST", _DATA_PIPE + "/channels/ELASTIC/filebuffer?requestId=deep", "scoped",
     _DEEP),
    ("control query", "POST", "/_emulator/query", "control", _DEEP),
    ("control wait", "POST", "/_emulator/wait-landed", "control", _DEEP),
    ("control faults", "POST", "/_emulator/faults", "control", _DEEP),
]  # fmt: skip


@pytest.mark.parametrize(("name", "method", "path", "who", "body"), DEEP_BODIES,
                         ids=[c[0] for c in DEEP_BODIES])  # fmt: skip
def test_a_json_body_nested_too_deep_is_400_with_a_plain_reason(emu, name, method, path, who, body):
    token = {"jwt": emu.keypair_jwt, "scoped": emu.scoped_token, "control": lambda: emu.secret}
    headers = {"Authorization": f"Bearer {token[who]()}", "Content-Type": "application/json"}
    if who == "jwt":
        headers["X-Snowflake-Authorization-Token-Type"] = "KEYPAIR_JWT"
    status, _, out = emu.request(method, path, body, headers, timeout=60)
    assert status == 400, (status, out[:300])
    assert b"nested too deep" in out, out[:300]
    for internal in (b"recursion", b"Recursion", b"emulator error", b"Traceback"):
        assert internal not in out, out[:300]
    status, reply = sql_statement(emu, "SELECT 1 AS ONE")  # and the emulator goes on
    assert status == 200 and reply["data"] == [["1"]]
