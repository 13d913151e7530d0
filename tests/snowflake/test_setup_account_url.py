"""``elastic-channels setup`` at the account URL, configured as a user does (issue #21 item 3).

In a private network and mount namespace (``unshare --net --mount``) the account's host
``myorg-myacct.snowflakecomputing.com`` is 127.0.0.1, where an emulator serves HTTPS on
443 with a certificate for that name. Given only ``SNOWFLAKE_ACCOUNT``, ``_USER``,
``_PRIVATE_KEY_FILE``, ``_DATABASE`` and ``_SCHEMA`` (no host, port or profile), setup
runs every statement through the SQL API at the account URL, and the objects exist
afterwards. The driver (setup_account_driver.py, beside this file) runs inside the
namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from key_files import pem_key

from elastic_channels.snowflake import ddl

DRIVER = Path(__file__).resolve().parent / "setup_account_driver.py"

pytestmark = pytest.mark.skipif(
    shutil.which("unshare") is None or shutil.which("ip") is None or os.geteuid() != 0,
    reason="needs unshare and ip (util-linux, iproute2) and root, for a private network "
    "namespace in which the account's host name resolves to 127.0.0.1",
)


def test_setup_reaches_the_account_url_from_the_documented_variables(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    from cryptography.hazmat.primitives import serialization

    key = pem_key(tmp_path)
    key.rename(tmp_path / "user.p8")
    private = serialization.load_pem_private_key((tmp_path / "user.p8").read_bytes(), None)
    (tmp_path / "user.pub.pem").write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    proc = subprocess.run(
        ["unshare", "--net", "--mount", sys.executable, str(DRIVER), str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads((tmp_path / "result.json").read_text())
    assert got["setup"]["rc"] == 0, got["setup"]
    stmts = ddl.statements("BENCH_DB", "PUBLIC")
    assert got["setup"]["out"].splitlines() == [f"ok: {s.splitlines()[0]}" for s in stmts]
    assert got["sql_api_requests"] == len(stmts)  # every statement, one request each
    assert got["metrics_columns"] == [n for n, _ in ddl.METRICS_COLUMNS]
