#!/usr/bin/env bash
# Installs headless Chromium and its WebDriver from Debian's packages, for the dashboard's
# browser test (tests/dashboard/test_browser.py). Idempotent: does nothing when both are
# already on PATH. Needs root (or sudo) and Debian/Ubuntu's apt.
set -euo pipefail

case "${1:-}" in
    -h|--help)
        cat <<'TXT'
usage: bash scripts/install_browser.sh

Installs headless Chromium and its WebDriver (Debian's chromium and chromium-driver
packages) for the dashboard's browser test, tests/dashboard/test_browser.py. Does
nothing when both are already on PATH. Needs root (or sudo) and apt-get; scripts/test.sh
and scripts/install.sh call it.
TXT
        exit 0 ;;
esac

have_browser() {
    command -v chromedriver >/dev/null 2>&1 &&
        { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }
}

if have_browser; then
    echo "install_browser: chromium and chromedriver already installed"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_browser: apt-get not found; install chromium and chromium-driver" \
        "with this system's package manager" >&2
    exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install_browser: run as root (or install sudo) to apt-get install chromium" >&2
        exit 1
    fi
    SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends chromium chromium-driver
if ! have_browser; then
    echo "install_browser: apt-get finished but chromium/chromedriver are not on PATH" >&2
    exit 1
fi
echo "install_browser: $(chromedriver --version)"
