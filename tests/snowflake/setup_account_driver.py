"""Runs INSIDE a private network and mount namespace (``unshare --net --mount``), as root:
``elastic-channels setup`` as a user configures it, against an emulator standing in for
the account at its account URL.

    python setup_account_driver.py WORK_DIR

Brings up loopback, bind-mounts an /etc/hosts in which ``myorg-myacct.snowflakecomputing.com``
is 127.0.0.1, serves an emulator on 443 with a certificate for that name (account
MYORG-MYACCT, the user's public key ``WORK_DIR/user.pub.pem``), runs ``setup`` with ONLY
``SNOWFLAKE_ACCOUNT``, ``_USER``, ``_PRIVATE_KEY_FILE``, ``_DATABASE`` and ``_SCHEMA`` (and
the emulator's CA as ``SSL_CERT_FILE``, a public CA's stand-in), then writes what setup
said, the SQL API requests the emulator served and the metrics table's columns to
``WORK_DIR/result.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HOST = "myorg-myacct.snowflakecomputing.com"


def sh(*cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def main(work: Path) -> int:
    from elastic_channels.emulator import Emulator, EmulatorConfig

    sh("ip", "link", "set", "lo", "up").check_returncode()
    hosts = work / "hosts"
    hosts.write_text(Path("/etc/hosts").read_text() + f"\n127.0.0.1 {HOST}\n")
    sh("mount", "--bind", str(hosts), "/etc/hosts").check_returncode()
    cfg = EmulatorConfig(
        data_dir=work / "emu", port=443, server_names=(HOST,), account="myorg-myacct",
        public_keys={"SETUP_ADMIN": [work / "user.pub.pem"]}, database="BENCH_DB",
    )  # fmt: skip
    result: dict = {}
    with Emulator(cfg) as emu:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SNOWFLAKE_", "SSL_"))}
        env.update(
            SNOWFLAKE_ACCOUNT="myorg-myacct",
            SNOWFLAKE_USER="setup_admin",
            SNOWFLAKE_PRIVATE_KEY_FILE=str(work / "user.p8"),
            SNOWFLAKE_DATABASE="BENCH_DB",
            SNOWFLAKE_SCHEMA="PUBLIC",
            SSL_CERT_FILE=emu.info()["ssl_cert_file"],
        )
        setup = sh(sys.executable, "-m", "elastic_channels", "setup", env=env, cwd=work)
        result["setup"] = {"rc": setup.returncode, "out": setup.stdout, "err": setup.stderr}
        result["sql_api_requests"] = emu.stats_snapshot()["requests"].get("sql_statements", 0)
        try:
            result["metrics_columns"] = [r[0] for r in emu.query("DESCRIBE ELASTIC_K8S_METRICS")]
        except Exception as e:  # setup failed before creating it
            result["metrics_columns"] = f"{type(e).__name__}: {e}"
    (work / "result.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
