#!/usr/bin/env bash
# Every check and test the project has, as CI runs them (.ci/run calls this).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    cat <<'TXT'
usage: bash scripts/test.sh [PYTEST_ARGS...]

Every check and test the project has, in the order CI runs them (.ci/run calls this):
install (scripts/install.sh: the package with its extras, Debian packages such as a
headless browser), codegen staleness, cargo fmt/clippy, ruff, mypy, the stub check,
Rust unit tests and benches in test mode, the fleet checks (hadolint, shellcheck,
manifest renders, deploy dry runs), the arm64 cross-build under qemu-aarch64, and
pytest (extra arguments go to pytest).

Needs Linux with Python 3.10+, pip and rustup; root for apt-get (as in CI).
Takes about 15 minutes on 2 cores.
TXT
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

step() { printf '\n==> %s\n' "$*"; }

step "install: the package (builds the native wheel) + test, SDK and emulator deps"
bash scripts/install.sh

step "codegen: src/tables.rs matches the Python model"
python3 codegen/generate_tables.py --check

step "lint: cargo fmt, clippy (with and without the python feature), ruff"
cargo fmt --all --check
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --features python -- -D warnings
ruff check .
ruff format --check .

step "types: mypy over the package, against the minimum Python (3.10)"
python3 -m mypy --python-version 3.10 --ignore-missing-imports python/elastic_channels

step "stubs: the hand-written .pyi matches the native module"
python3 -m mypy.stubtest elastic_native

step "rust: unit tests, and the criterion benches run once in test mode"
cargo test --locked --lib
cargo test --locked --benches

step "fleet: hadolint, shellcheck, manifest renders"
bash scripts/ci_fleet.sh --no-tests

step "arm64: cross-build the wheel; Rust tests, benches and Python parity under qemu-aarch64"
bash scripts/ci_arm64.sh

step "python: pytest"
python3 -m pytest -q -p no:cacheprovider "$@"
