"""The account path as a user configures it (issue #21 item 3), end to end.

In a private network and mount namespace (``unshare --net --mount``: loopback only, an
/etc/hosts of its own) the account's host ``myorg-myacct.snowflakecomputing.com`` is
127.0.0.1 and the emulator serves HTTPS on 443 with a certificate for that name. Given
only the documented ``SNOWFLAKE_*`` variables (no host, port or profile), ``setup`` creates
the objects and ``run`` streams with 2 workers and its monitor, the SDK in file mode as on
an account: every row lands once, and the metrics rows arrive through the SQL API at the
account URL. The driver (tests/support/account_path_driver.py) runs inside the namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

DRIVER = Path(__file__).resolve().parents[1] / "support" / "account_path_driver.py"

pytestmark = pytest.mark.skipif(
    shutil.which("unshare") is None or shutil.which("ip") is None or os.geteuid() != 0,
    reason="needs unshare and ip (util-linux, iproute2) and root, for a private network "
    "namespace in which the account's host name resolves to 127.0.0.1",
)


def _user_key(work: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (work / "user.p8").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (work / "user.pub.pem").write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def test_setup_and_run_reach_the_account_from_the_documented_variables(tmp_path):
    _user_key(tmp_path)
    proc = subprocess.run(
        ["unshare", "--net", "--mount", sys.executable, str(DRIVER), str(tmp_path)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads((tmp_path / "result.json").read_text())
    assert got["resolves"][0] == "127.0.0.1"
    assert got["setup"]["rc"] == 0, got["setup"]
    assert got["run"]["rc"] == 0, got["run"]
    summary = json.loads(got["run"]["out"].strip().splitlines()[-1])  # --json's document
    workers = summary["worker_summaries"]
    assert len(workers) == 2, summary
    acked = sum(w["rows_acked"] for w in workers)
    assert acked > 0 and all(w["unacked_rows"] == 0 for w in workers)
    assert got["landed"] == [{"n": acked, "txids": acked}], got  # every row once
    stats = got["stats"]
    assert stats["file_fragments"] > 0, stats  # the SDK ran in file mode, as on an account
    assert stats["stage"]["uploads"] >= stats["file_fragments"]
    assert got["metrics"][0]["n"] > 0, got  # the monitor's rows, through the SQL API
