"""deploy/create_secret.sh: the key Secret from a PKCS#8 key file, refusing other keys."""

from __future__ import annotations

from pathlib import Path

import pytest

BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"


def _key(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind.replace(' ', '_') or 'none'}.pem"
    path.write_text(f"-----BEGIN {kind}-----\n{BODY}-----END {kind}-----\n")
    return path


def test_dry_run_prints_an_idempotent_create(deploy, tmp_path: Path) -> None:
    key = _key(tmp_path, "PRIVATE KEY")
    proc = deploy.run("create_secret", "--key-file", str(key), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    (cmd,) = deploy.commands(proc.stdout)
    assert cmd.startswith(
        f"kubectl create secret generic snowflake-key --namespace default "
        f"--from-file=rsa_key.p8={key} --dry-run=client -o yaml | "
    )
    assert cmd.endswith("| kubectl apply -f -")
    assert "app.kubernetes.io/part-of=elastic-native" in cmd  # so teardown finds it
    assert BODY.strip() not in proc.stdout  # the key itself is never printed


def test_namespace_and_name_and_env(deploy, tmp_path: Path) -> None:
    key = _key(tmp_path, "PRIVATE KEY")
    proc = deploy.run(
        "create_secret",
        "--dry-run",
        SNOWFLAKE_PRIVATE_KEY_FILE=str(key),
        K8S_NAMESPACE="bench",
        K8S_SECRET="sf-key",
    )
    assert proc.returncode == 0, proc.stderr
    ns, secret = deploy.commands(proc.stdout)
    assert ns.startswith("kubectl create namespace bench --dry-run=client -o yaml |")
    assert "create secret generic sf-key --namespace bench" in secret


def test_missing_key_file_is_a_placeholder_in_a_dry_run(deploy) -> None:
    proc = deploy.run("create_secret", "--dry-run")
    assert proc.returncode == 0
    assert "SNOWFLAKE_PRIVATE_KEY_FILE" in proc.stderr
    assert "--from-file=rsa_key.p8=<SNOWFLAKE_PRIVATE_KEY_FILE>" in proc.stdout
    proc = deploy.run("create_secret")
    assert proc.returncode == 2 and "SNOWFLAKE_PRIVATE_KEY_FILE" in proc.stderr
    assert deploy.calls() == []


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("ENCRYPTED PRIVATE KEY", "openssl pkcs8 -in"),
        ("RSA PRIVATE KEY", "openssl pkcs8 -topk8 -nocrypt"),
        ("CERTIFICATE", "is not a PEM private key"),
    ],
)
def test_keys_the_worker_cannot_use_are_refused(deploy, tmp_path, kind, message) -> None:
    proc = deploy.run("create_secret", "--key-file", str(_key(tmp_path, kind)), "--dry-run")
    assert proc.returncode == 2
    assert message in proc.stderr


def test_unreadable_key_file(deploy, tmp_path: Path) -> None:
    proc = deploy.run("create_secret", "--key-file", str(tmp_path / "nope.p8"), "--dry-run")
    assert proc.returncode == 2 and "nope.p8" in proc.stderr


def test_real_run_pipes_the_secret_into_apply(deploy, tmp_path: Path) -> None:
    key = _key(tmp_path, "PRIVATE KEY")
    # create prints a manifest, label passes it on, apply reads it.
    deploy.stub(
        "kubectl",
        'case "$1" in create) echo "kind: Secret" ;; label) cat "$IN" ;; esac',
    )
    proc = deploy.run("create_secret", "--key-file", str(key))
    assert proc.returncode == 0, proc.stderr
    verbs = [c.split()[1] for c in deploy.calls()]
    assert sorted(verbs) == ["apply", "create", "label"]  # one pipeline: any order
    assert deploy.stdin_of(verbs.index("apply"), "kubectl") == "kind: Secret\n"
