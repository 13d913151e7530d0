#!/usr/bin/env bash
# Install Python requirements, built for a target Linux architecture, into a directory:
# what the image's build stage runs (and scripts/ci_arm64.sh, on an x86-64 machine).
#
#   deploy/image/install_target.sh [--dry-run] ARCH DEST REQUIREMENT...
#   PIP=/opt/build/bin/pip deploy/image/install_target.sh aarch64 /opt/app \
#       /wheels/elastic_native-*.whl snowpipe-streaming==1.9.1
#
# ARCH is aarch64 or x86_64. pip takes binary wheels only, for CPython 3.11 on manylinux
# up to glibc 2.36 (Debian bookworm, the runtime). A requirement PyPI has no such wheel
# of (hdrhistogram has none for aarch64) is built here from its sdist into a wheel for
# ARCH: natively, or with the GNU cross compiler ($ARCH-linux-gnu-gcc) and the target's
# Python headers and sysconfig data from Debian's libpython3.11-dev:<arch> (multiarch),
# so PIP must belong to Debian's own python3.11, whose include path dispatches to the
# target's pyconfig.h. Then the install is tried again, at most 5 times.
#   --dry-run   print the first pip command; run nothing
#   PIP         the pip to use [pip]
set -euo pipefail

case "${1:-}" in -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
DRY_RUN=0
if [ "${1:-}" = --dry-run ]; then
    DRY_RUN=1
    shift
fi
[ $# -ge 3 ] || { echo "install_target: usage: install_target.sh ARCH DEST REQUIREMENT... (see --help)" >&2; exit 2; }
ARCH=$1
DEST=$2
shift 2
case "$ARCH" in aarch64 | x86_64) ;; *)
    echo "install_target: ARCH must be aarch64 or x86_64, got '$ARCH'" >&2
    exit 2
    ;;
esac
read -ra PIP <<<"${PIP:-pip}"
TRIPLET=$ARCH-linux-gnu
LOCAL=$(mktemp -d)
trap 'rm -rf "$LOCAL"' EXIT

plat=()
for glibc in $(seq 36 -1 17); do plat+=(--platform "manylinux_2_${glibc}_$ARCH"); done
plat+=(--platform "linux_$ARCH") # the wheels built below

build_sdist() { # requirement -> a wheel for ARCH in $LOCAL
    if [ "$ARCH" = "$(uname -m)" ]; then
        "${PIP[@]}" wheel --quiet --no-cache-dir --use-pep517 --no-deps --no-binary :all: \
            -w "$LOCAL" "$1"
        return
    fi
    local data
    data=$(ls /usr/lib/python3.11/_sysconfigdata__"$TRIPLET".py 2>/dev/null) || {
        echo "install_target: no sysconfig data for $TRIPLET: install libpython3.11-dev:$ARCH" \
            "(dpkg --add-architecture) and gcc-${ARCH//_/-}-linux-gnu" >&2
        return 1
    }
    command -v "$TRIPLET-gcc" >/dev/null || { echo "install_target: $TRIPLET-gcc not found" >&2; return 1; }
    # setuptools takes the compiler, the flags and the extension suffix from the target's
    # sysconfig data, and the wheel's platform tag from _PYTHON_HOST_PLATFORM.
    _PYTHON_HOST_PLATFORM=linux-$ARCH _PYTHON_SYSCONFIGDATA_NAME=$(basename "$data" .py) \
        "${PIP[@]}" wheel --quiet --no-cache-dir --use-pep517 --no-deps --no-binary :all: \
        -w "$LOCAL" "$1"
}

install=("${PIP[@]}" install --no-cache-dir --disable-pip-version-check --target "$DEST"
    --only-binary=:all: --implementation cp --python-version 3.11 "${plat[@]}"
    --find-links "$LOCAL" "$@")
if [ "$DRY_RUN" = 1 ]; then
    printf '%q ' "${install[@]}"
    echo
    exit 0
fi
for _ in 1 2 3 4 5; do
    if out=$("${install[@]}" 2>&1); then
        printf '%s\n' "$out" | grep -E '^Successfully installed' || true
        exit 0
    fi
    missing=$(printf '%s\n' "$out" | sed -n 's/^ERROR: No matching distribution found for \(.*\)$/\1/p' | head -1)
    if [ -z "$missing" ]; then
        printf '%s\n' "$out" >&2
        echo "install_target: pip could not install for linux/$ARCH (CPython 3.11, manylinux up to glibc 2.36)" >&2
        exit 1
    fi
    echo "install_target: PyPI has no linux/$ARCH wheel of $missing: building it from its sdist"
    build_sdist "$missing"
done
echo "install_target: still missing wheels after 5 builds" >&2
exit 1
