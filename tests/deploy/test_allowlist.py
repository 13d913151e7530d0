"""deploy/allowlist.sh: the network rule + policy SQL for the cluster's egress addresses."""

from __future__ import annotations

import pytest

SETTINGS = {"SNOWFLAKE_DATABASE": "DEMO", "SNOWFLAKE_USER": "INGEST"}
RULE = "DEMO.PUBLIC.ELASTIC_EKS_EGRESS"


def _sql(deploy, *args: str, **settings: str) -> tuple[str, list[str], str]:
    proc = deploy.run("allowlist", *args, "--dry-run", **{**SETTINGS, **settings})
    assert proc.returncode == 0, proc.stderr
    return deploy.heredoc(proc.stdout, "<<'SQL'"), deploy.commands(proc.stdout), proc.stderr


def test_own_policy_for_the_user(deploy) -> None:
    sql, cmds, err = _sql(deploy, "--ip", "203.0.113.7", "--ip", "198.51.100.0/28")
    assert err == ""
    values = "('203.0.113.7', '198.51.100.0/28')"
    assert f"CREATE NETWORK RULE IF NOT EXISTS {RULE}\n  TYPE = IPV4 MODE = INGRESS" in sql
    assert f"VALUE_LIST = {values}" in sql
    assert f"ALTER NETWORK RULE {RULE} SET VALUE_LIST = {values};" in sql
    policy = "CREATE NETWORK POLICY IF NOT EXISTS ELASTIC_EKS_POLICY\n"
    assert f"{policy}  ALLOWED_NETWORK_RULE_LIST = ('{RULE}')" in sql
    assert sql.rstrip().endswith("ALTER USER INGEST SET NETWORK_POLICY = ELASTIC_EKS_POLICY;")
    assert cmds[-1] == "elastic-channels setup --sql-file /tmp/elastic-allowlist.sql"
    assert not any(c.startswith(("aws ", "vpc=")) for c in cmds)  # addresses were given


def test_the_accounts_policy_gets_the_rule(deploy) -> None:
    sql, _, _ = _sql(deploy, "--policy", "CORP_POLICY", EGRESS_IPS="203.0.113.7, 203.0.113.8")
    assert "VALUE_LIST = ('203.0.113.7', '203.0.113.8')" in sql
    assert f"ALTER NETWORK POLICY CORP_POLICY ADD ALLOWED_NETWORK_RULE_LIST = ('{RULE}');" in sql
    assert "ALTER USER" not in sql and "CREATE NETWORK POLICY" not in sql


def test_addresses_asked_of_aws_when_not_given(deploy) -> None:
    sql, cmds, err = _sql(deploy, "--cluster", "bench", "--region", "eu-west-1")
    assert cmds[0].startswith("vpc=$(aws eks describe-cluster --region eu-west-1 --name bench ")
    assert cmds[1].startswith("aws ec2 describe-nat-gateways --region eu-west-1 ")
    assert '"Name=vpc-id,Values=$vpc"' in cmds[1]
    assert "EGRESS_IPS" in err and "('<EGRESS_IPS>')" in sql


def test_remove_undoes_it(deploy) -> None:
    sql, cmds, _ = _sql(deploy, "--remove")
    assert "ALTER USER INGEST UNSET NETWORK_POLICY;" in sql
    assert sql.rstrip().endswith(f"DROP NETWORK RULE IF EXISTS {RULE};")
    assert not any(c.startswith(("aws ", "vpc=")) for c in cmds)
    sql, _, _ = _sql(deploy, "--remove", "--policy", "CORP_POLICY")
    assert f"ALTER NETWORK POLICY CORP_POLICY REMOVE ALLOWED_NETWORK_RULE_LIST = ('{RULE}');" in sql


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ip", "203.0.113.300/40"], "--ip '203.0.113.300/40'"),
        (["--ip", "1.2.3.4'; DROP"], "--ip"),
        (["--ip", "1.2.3.4", "--policy", "bad-name"], "--policy 'bad-name'"),
        (["--ip", "1.2.3.4", "--rule", "R;"], "--rule"),
    ],
)
def test_bad_values_never_reach_the_sql(deploy, args: list[str], message: str) -> None:
    proc = deploy.run("allowlist", *args, "--dry-run", **SETTINGS)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == ""


def test_real_run_finds_the_nat_address_and_runs_the_sql(deploy) -> None:
    deploy.stub(
        "aws",
        'case "$1 $2" in\n'
        '  "eks describe-cluster") echo vpc-0abc ;;\n'
        '  "ec2 describe-nat-gateways") [[ "$*" == *Values=vpc-0abc* ]] &&\n'
        '    printf "203.0.113.9\\t203.0.113.10\\n" ;;\n'
        "esac",
    )
    deploy.stub("elastic-channels", 'cp "${@: -1}" "$(dirname "$IN")/ran.sql"')
    proc = deploy.run("allowlist", **SETTINGS)
    assert proc.returncode == 0, proc.stderr
    calls = deploy.calls()
    assert calls[0].startswith("aws eks describe-cluster")
    assert calls[1].startswith("aws ec2 describe-nat-gateways")
    assert calls[2].startswith("elastic-channels setup --sql-file /tmp/elastic-allowlist.")
    ran = (deploy.dir / "ran.sql").read_text()
    assert "VALUE_LIST = ('203.0.113.9', '203.0.113.10')" in ran
    # The temporary SQL file is removed afterwards.
    assert not any((deploy.dir / "ran.sql").parent.glob("elastic-allowlist.*"))


def test_real_run_without_nat_addresses_says_what_to_do(deploy) -> None:
    deploy.stub("aws", 'case "$1" in eks) echo vpc-0abc ;; esac')
    proc = deploy.run("allowlist", **SETTINGS)
    assert proc.returncode == 2
    assert "no NAT gateway" in proc.stderr and "--ip" in proc.stderr
