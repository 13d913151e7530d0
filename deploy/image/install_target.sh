#!/usr/bin/env bash
# Install Python requirements, built for a target Linux architecture, into a directory:
# what the image's build stage runs (and scripts/ci_arm64.sh, on an x86-64 machine).
#
#   deploy/image/install_target.sh [--dry-run] ARCH DEST REQUIREMENT...
#   PYTHON=/opt/build/bin/python deploy/image/install_target.sh aarch64 /opt/app \
#       /wheels/elastic_native-*.whl snowpipe-streaming==1.9.1
#
# ARCH is aarch64 or x86_64. pip takes binary wheels only, for CPython 3.11 on manylinux
# up to glibc 2.36 (Debian bookworm, the runtime). A requirement PyPI has no such wheel
# of (hdrhistogram has none for aarch64) is built here from its sdist into a wheel for
# ARCH: natively, or with the GNU cross compiler ($ARCH-linux-gnu-gcc) and the target's
# Python headers and sysconfig data from Debian's libpython3.11-dev for ARCH, found
# under TARGET_ROOT. Then the install is tried again, at most 5 times.
#   --dry-run     print the first pip command; run nothing
#   PYTHON        the CPython 3.11 whose pip installs and builds [python3]
#   TARGET_ROOT   a root file system of the target holding libpython3.11-dev (e.g. a
#                 debootstrap --foreign of Debian bookworm) [/: this system's multiarch
#                 libpython3.11-dev:<arch>, as in the image's build container. Not on a
#                 machine that runs qemu-aarch64 -L /usr/aarch64-linux-gnu: its loader
#                 would then mix in the multiarch libc.]
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
PYTHON=${PYTHON:-python3}
PIP=("$PYTHON" -m pip)
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
    local root=${TARGET_ROOT:-/} data name flags=() venv
    root=$(cd "$root" && pwd) || return 1
    root=${root%/}
    data="$root/usr/lib/python3.11/_sysconfigdata__$TRIPLET.py"
    [ -r "$data" ] || {
        echo "install_target: no $data: install libpython3.11-dev for $ARCH there" \
            "(or set TARGET_ROOT to a root file system that has it)" >&2
        return 1
    }
    command -v "$TRIPLET-gcc" >/dev/null || { echo "install_target: $TRIPLET-gcc not found" >&2; return 1; }
    name=$(basename "$data" .py)
    # The build runs in a venv that holds the target's sysconfig data (pip's build
    # isolation would hide it): setuptools takes the compiler, the flags and the
    # extension suffix from it, and the wheel's platform tag from _PYTHON_HOST_PLATFORM.
    venv=$LOCAL/build-venv
    if [ ! -x "$venv/bin/python" ]; then
        "$PYTHON" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
            setuptools wheel
    fi
    cp "$data" "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/"
    # The target's Python.h first; its pyconfig.h dispatches to <$TRIPLET/python3.11/...>.
    [ -z "$root" ] || flags=(CFLAGS="-I$root/usr/include/python3.11 -I$root/usr/include")
    env "${flags[@]}" _PYTHON_HOST_PLATFORM="linux-$ARCH" _PYTHON_SYSCONFIGDATA_NAME="$name" \
        "$venv/bin/python" -m pip wheel --quiet --no-cache-dir --no-build-isolation --no-deps \
        --no-binary :all: -w "$LOCAL" "$1"
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
    # "... found for hdrhistogram<0.11,>=0.10 (from elastic-native)": the requirement
    # without pip's note of who asked for it.
    missing=$(printf '%s\n' "$out" |
        sed -n 's/^ERROR: No matching distribution found for \(.*\)$/\1/p' |
        sed 's/ (from [^)]*)$//' | head -1)
    if [ -z "$missing" ]; then
        printf '%s\n' "$out" >&2
        echo "install_target: pip could not install for linux/$ARCH (CPython 3.11, manylinux up to glibc 2.36)" >&2
        exit 1
    fi
    if [ "$missing" = "${built:-}" ]; then
        printf '%s\n' "$out" >&2
        echo "install_target: built $missing for linux/$ARCH, but pip still takes no wheel of it" \
            "(see the wheel's tags in the pip output above)" >&2
        exit 1
    fi
    echo "install_target: PyPI has no linux/$ARCH wheel of $missing: building it from its sdist"
    build_sdist "$missing"
    built=$missing
done
echo "install_target: still missing wheels after 5 builds" >&2
exit 1
