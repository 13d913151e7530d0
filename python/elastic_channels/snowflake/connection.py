"""Running the setup SQL on an account: key-pair credentials, one connector session."""

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


def execute(stmts: Sequence[str], params: dict[str, Any], out: Any = sys.stdout) -> None:
    """Run ``stmts`` in order on one connection from snowflake-connector-python."""
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
            for stmt in stmts:
                first_line = stmt.splitlines()[0]
                try:
                    cur.execute(stmt)
                except errors as e:
                    raise SetupError(f"{first_line}: {e}") from e
                print(f"ok: {first_line}", file=out)
        finally:
            cur.close()
    finally:
        conn.close()
