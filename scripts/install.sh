#!/usr/bin/env bash
# Installs the project and everything its tests need, with the project's own files.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
    -h|--help)
        cat <<'TXT'
usage: bash scripts/install.sh

Installs the project (builds the native wheel with maturin through pip) with every
extra its tests need, and the Debian packages they need (a headless Chromium for the
dashboard's browser test; root and apt-get, as in CI). Needs Python 3.10+, pip and
the Rust toolchain (rustup).
TXT
        exit 0 ;;
esac

if ! command -v cargo >/dev/null; then
    echo "install: cargo not found; install the Rust toolchain (rustup) first" >&2
    exit 1
fi
if command -v rustup >/dev/null; then
    rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
python3 -m pip install --quiet --disable-pip-version-check --upgrade pip
python3 -m pip install --quiet --disable-pip-version-check ".[test,sdk,emulator,iceberg,chart,dashboard,monitor]"
bash scripts/install_browser.sh
python3 -c "import elastic_native, elastic_channels; print('installed elastic_native', elastic_native.__version__)"
