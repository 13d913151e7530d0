"""Runs INSIDE a private network and mount namespace (``unshare --net --mount``), as root:
the account path as a user configures it, against the emulator standing in for an account.

    python account_path_driver.py WORK_DIR

- brings up loopback, the only interface there is, and bind-mounts an /etc/hosts in which
  the account's host (``myorg-myacct.snowflakecomputing.com``) is 127.0.0.1;
- serves the emulator on port 443 with a certificate for that name, the account
  MYORG-MYACCT and the user's public key;
- runs ``elastic-channels setup`` and ``elastic-channels run`` with ONLY the documented
  ``SNOWFLAKE_*`` variables (no host, port or profile) and ``--database`` (a flag: the
  in-run monitor takes it as the workers do, issue #29), the CA as ``SSL_CERT_FILE`` (a
  public CA's stand-in) and the stage's endpoint as ``AWS_ENDPOINT_URL`` (the cloud storage
  an account's stage lives in): nothing else of the emulator's;
- stops the emulator and writes what it saw to ``WORK_DIR/result.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HOST = "myorg-myacct.snowflakecomputing.com"
RUN_ID = "acct-path"


def sh(*cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def main(work: Path) -> int:
    result: dict = {}
    sh("ip", "link", "set", "lo", "up").check_returncode()
    hosts = work / "hosts"
    hosts.write_text(Path("/etc/hosts").read_text() + f"\n127.0.0.1 {HOST}\n")
    sh("mount", "--bind", str(hosts), "/etc/hosts").check_returncode()
    emu_dir, info_file = work / "emu", work / "info.json"
    cli = [sys.executable, "-m", "elastic_channels.cli"]
    serve = subprocess.Popen(
        [*cli, "emulator", "serve", "--data-dir", str(emu_dir), "--info-file", str(info_file),
         "--port", "443", "--server-name", HOST, "--account", "myorg-myacct",
         "--user", "STREAMER", "--public-key", f"STREAMER={work / 'user.pub.pem'}",
         "--database", "BENCH_DB", "--schema", "PUBLIC", "--append-buffer-ms", "50",
         "--duration-seconds", "600"],
        stdout=subprocess.DEVNULL, stderr=open(work / "serve.log", "w"),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not info_file.exists():
            if serve.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"serve did not start: {(work / 'serve.log').read_text()}")
            time.sleep(0.1)
        info = json.loads(info_file.read_text())
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SNOWFLAKE_", "SNOWPIPE_", "AWS_", "ELASTIC_"))}  # fmt: skip
        env.update(
            SNOWFLAKE_ACCOUNT="myorg-myacct",
            SNOWFLAKE_USER="streamer",
            SNOWFLAKE_PRIVATE_KEY_FILE=str(work / "user.p8"),
            SNOWFLAKE_SCHEMA="PUBLIC",
            SSL_CERT_FILE=info["ssl_cert_file"],  # the account's CA, as a system's would be
            AWS_ENDPOINT_URL=info["client_env"]["AWS_ENDPOINT_URL"],  # the stage's storage
        )
        result["resolves"] = sh("getent", "hosts", HOST).stdout.split()
        setup = sh(*cli, "setup", "--database", "BENCH_DB", env=env, cwd=work)
        result["setup"] = {"rc": setup.returncode, "out": setup.stdout[-3000:],
                           "err": setup.stderr[-3000:]}  # fmt: skip
        run = sh(*cli, "run", "--workers", "2", "--target-bps", "10e6", "--duration-seconds",
                 "6", "--run-id", RUN_ID, "--json", "--database", "BENCH_DB",
                 env=env, cwd=work)  # fmt: skip
        result["run"] = {"rc": run.returncode, "out": run.stdout,
                         "err": run.stderr[-6000:]}  # fmt: skip
        stats = sh(*cli, "emulator", "stats", "--data-dir", str(emu_dir))
        result["stats"] = json.loads(stats.stdout) if stats.returncode == 0 else stats.stderr
    finally:
        serve.terminate()
        serve.wait(timeout=120)
    q = [*cli, "emulator", "query", "--data-dir", str(emu_dir)]
    landed = sh(*q, f"SELECT count(*) AS n, count(DISTINCT TXID) AS txids FROM RESORT_SALES "
                    f"WHERE RUN_ID = '{RUN_ID}'")  # fmt: skip
    result["landed"] = [json.loads(x) for x in landed.stdout.splitlines() if x.strip()]
    metrics = sh(*q, f"SELECT count(*) AS n FROM ELASTIC_K8S_METRICS WHERE RUN_ID = '{RUN_ID}'")
    result["metrics"] = [json.loads(x) for x in metrics.stdout.splitlines() if x.strip()]
    result["metrics_err"] = metrics.stderr[-2000:]
    result["serve_log"] = (work / "serve.log").read_text()[-3000:]
    (work / "result.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    shutil.which("ip") or sys.exit("needs ip (iproute2)")
    sys.exit(main(Path(sys.argv[1])))
