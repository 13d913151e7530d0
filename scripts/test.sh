#!/usr/bin/env bash
# Every check and test the project has, as CI runs them (.ci/run calls this).
# Installs what it needs first, so it works on a fresh machine with Python 3.11 + pip
# and the Rust toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

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
