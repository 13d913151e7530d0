"""Running SQL on an account: key-pair credentials, one connector session, and the
statements of a SQL file (``elastic-channels setup --sql-file``)."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .ddl import SetupError


def _load_private_key_der(pem: bytes, passphrase: str | None) -> bytes:
    try:
        from cryptography.hazmat.primitives import serialization
    except ModuleNotFoundError as e:  # pragma: no cover - cryptography comes with the connector
        raise SetupError("reading the private key needs 'cryptography'") from e
    try:
        key = serialization.load_pem_private_key(
            pem, password=passphrase.encode() if passphrase else None
        )
    except (ValueError, TypeError) as e:
        raise SetupError(f"the private key is not a usable PEM private key: {e}") from e
    return key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def connection_params(args: argparse.Namespace) -> dict[str, Any] | None:
    """Connector keyword arguments from flags, env and ``--profile``; None if no account."""
    profile: dict[str, Any] = {}
    if args.profile:
        try:
            profile = json.loads(Path(args.profile).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise SetupError(f"--profile {args.profile}: cannot read it as JSON: {e}") from e
        if not isinstance(profile, dict):
            raise SetupError(f"--profile {args.profile}: expected a JSON object")
    account = args.account or profile.get("account")
    if not account:
        return None
    user = args.user or profile.get("user")
    if not user:
        raise SetupError("--user (or SNOWFLAKE_USER, or 'user' in --profile) is required")
    pem: bytes | None = None
    if args.private_key_file:
        try:
            pem = Path(args.private_key_file).read_bytes()
        except OSError as e:
            raise SetupError(f"--private-key-file {args.private_key_file}: {e}") from e
    elif os.environ.get("SNOWFLAKE_PRIVATE_KEY"):
        pem = os.environ["SNOWFLAKE_PRIVATE_KEY"].encode()
    elif profile.get("private_key_file"):
        pem = Path(profile["private_key_file"]).read_bytes()
    elif profile.get("private_key"):
        text = str(profile["private_key"])
        if "-----BEGIN" not in text:  # the SDK's profile holds the bare base64 body
            text = f"-----BEGIN PRIVATE KEY-----\n{text}\n-----END PRIVATE KEY-----\n"
        pem = text.encode()
    if pem is None:
        raise SetupError(
            "no private key: give --private-key-file, SNOWFLAKE_PRIVATE_KEY (PEM text) "
            "or a --profile with private_key"
        )
    params: dict[str, Any] = {
        "account": account,
        "user": user,
        "private_key": _load_private_key_der(pem, os.environ.get("SNOWFLAKE_PRIVATE_KEY_PWD")),
    }
    role = args.role or profile.get("role")
    if role:
        params["role"] = role
    if args.warehouse:
        params["warehouse"] = args.warehouse
    return params


def execute(
    stmts: Sequence[str],
    params: dict[str, Any],
    out: Any = None,
    labels: Sequence[str] | None = None,
) -> None:
    """Run ``stmts`` in order on one connection from snowflake-connector-python.

    ``labels[i]``, when given, says where statement ``i`` came from in an error (for
    example ``file.sql statement 2 of 3, line 5``). Progress goes to ``out`` (stdout)."""
    out = sys.stdout if out is None else out
    try:
        connector = importlib.import_module("snowflake.connector")
    except ImportError as e:
        raise SetupError(
            "executing the setup needs snowflake-connector-python: "
            "pip install '.[setup]' in a checkout (or use --print and run the SQL yourself)"
        ) from e
    errors = getattr(connector, "Error", Exception)
    try:
        conn = connector.connect(**params)
    except errors as e:
        raise SetupError(f"cannot connect to account {params.get('account')!r}: {e}") from e
    try:
        cur = conn.cursor()
        try:
            for i, stmt in enumerate(stmts):
                first_line = stmt.splitlines()[0]
                try:
                    cur.execute(stmt)
                except errors as e:
                    where = f"{labels[i]}: " if labels else ""
                    raise SetupError(f"{where}{first_line}: {e}") from e
                print(f"ok: {first_line}", file=out)
        finally:
            cur.close()
    finally:
        conn.close()


def split_statements(text: str) -> list[tuple[int, str]]:
    """The statements of a SQL script as ``(line, statement)``, in order.

    Statements end at ``;`` outside quotes; comments (``--``, ``//``, ``/* */``) outside
    quotes are dropped; ``'...'`` (with ``''`` or a backslash escaping a quote),
    ``"..."`` and ``$$...$$`` are kept whole. ``line`` is where the statement starts
    (1-based); empty statements are skipped."""
    found: list[tuple[int, str]] = []
    buf: list[str] = []
    line = start = 1
    started = False  # a non-blank character of the current statement seen
    i, n = 0, len(text)
    while i < n:
        c, pair = text[i], text[i : i + 2]
        if pair in ("--", "//"):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif pair == "/*":
            end = text.find("*/", i + 2)
            if end < 0:
                raise SetupError(f"line {line}: a /* comment is never closed")
            line += text.count("\n", i, end)
            buf.append(" ")
            i = end + 2
        elif c == ";":
            if stmt := "".join(buf).strip():
                found.append((start, stmt))
            buf.clear()
            started = False
            i += 1
        else:
            quoted = c in "'\"" or (pair == "$$" and not _in_identifier(text, i))
            end = _quote_end(text, i, line) if quoted else i + 1
            if not started and not c.isspace():
                start, started = line, True
            buf.append(text[i:end])
            line += text.count("\n", i, end)
            i = end
    if stmt := "".join(buf).strip():
        found.append((start, stmt))
    return found


def _in_identifier(text: str, i: int) -> bool:
    """True if ``text[i]`` continues a word (``A$$B`` is a name, not a ``$$`` string)."""
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_$")


def _quote_end(text: str, i: int, line: int) -> int:
    """The index just past the quoted text that starts at ``i``."""
    if text.startswith("$$", i):
        end = text.find("$$", i + 2)
        if end < 0:
            raise SetupError(f"line {line}: a $$ string is never closed")
        return end + 2
    quote, j = text[i], i + 1
    while j < len(text):
        if quote == "'" and text[j] == "\\":
            j += 2
        elif text[j] == quote and text.startswith(quote * 2, j):
            j += 2
        elif text[j] == quote:
            return j + 1
        else:
            j += 1
    raise SetupError(f"line {line}: a {quote} quote is never closed")


def read_sql_file(path: str) -> list[tuple[int, str]]:
    """The statements of the SQL file at ``path`` (see :func:`split_statements`)."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise SetupError(f"--sql-file {path}: cannot read it: {e.strerror or e}") from e
    try:
        stmts = split_statements(text)
    except SetupError as e:
        raise SetupError(f"--sql-file {path}: {e}") from e
    if not stmts:
        raise SetupError(f"--sql-file {path}: no SQL statement in it (only blanks or comments)")
    return stmts
