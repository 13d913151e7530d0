#!/usr/bin/env bash
# Installs the project and everything its tests need, with the project's own files.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "install: cargo not found; install the Rust toolchain (rustup) first" >&2
    exit 1
fi
if command -v rustup >/dev/null; then
    rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
python3 -m pip install --quiet --disable-pip-version-check --upgrade pip
python3 -m pip install --quiet --disable-pip-version-check ".[test,sdk,emulator]"
python3 -c "import elastic_native, elastic_channels; print('installed elastic_native', elastic_native.__version__)"
