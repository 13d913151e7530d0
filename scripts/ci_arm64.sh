#!/usr/bin/env bash
# arm64 (aarch64-unknown-linux-gnu) as a first-class target, on an x86_64 box:
#   1. cross-build the abi3 wheel with maturin and the GNU cross linker,
#   2. run the Rust unit tests and the criterion benches (test mode) under qemu-aarch64,
#   3. run the Python parity suite against that wheel, in Debian's aarch64 CPython 3.11
#      under qemu-aarch64 (the rootfs is unpacked with debootstrap --foreign + dpkg-deb,
#      the test dependencies are pip-installed for the aarch64 platform),
#   4. run the real worker (this wheel + the SDK's aarch64 wheel from PyPI) in that
#      CPython under qemu-aarch64 against the x86-64 emulator on 127.0.0.1 for a few
#      seconds at a low rate, and check that every acked row landed.
#
#   bash scripts/ci_arm64.sh                # everything (installs what it needs, as root)
#   bash scripts/ci_arm64.sh --no-install   # assume the toolchain is already there
#   bash scripts/ci_arm64.sh --no-python    # skip steps 3 and 4
#
# On a real Graviton machine none of this is needed; there the benches run with
#   cargo bench --bench row_writer
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=aarch64-unknown-linux-gnu
SYSROOT=/usr/aarch64-linux-gnu
WHEEL_DIR=target/wheels/$TARGET
PY_ROOT=target/aarch64-python
PARITY_TESTS=(tests/rows/test_parity.py tests/rows/test_golden.py tests/rows/test_errors.py tests/model/test_model.py)
install=1
python_suite=1
for arg in "$@"; do
    case "$arg" in
        --no-install) install=0 ;;
        --no-python) python_suite=0 ;;
        -h | --help)
            sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "ci_arm64: unknown argument '$arg' (expected --no-install, --no-python or --help)" >&2
            exit 2
            ;;
    esac
done

step() { printf '\n==> [arm64] %s (%ss)\n' "$*" "$SECONDS"; }

if [ "$install" = 1 ]; then
    step "install: cross gcc, arm64 libc, qemu-user; the rustup target"
    need=()
    command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
    [ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ] || need+=(libc6-dev-arm64-cross)
    command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
    if [ "$python_suite" = 1 ]; then
        command -v debootstrap >/dev/null || need+=(debootstrap)
    fi
    if [ "${#need[@]}" -gt 0 ]; then
        if [ "$(id -u)" != 0 ]; then
            echo "ci_arm64: missing ${need[*]}; install them (apt-get) or run as root" >&2
            exit 1
        fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${need[@]}" >/dev/null
    fi
    if ! rustup target list --installed | grep -qx "$TARGET"; then
        rustup target add "$TARGET"
    fi
fi

for tool in aarch64-linux-gnu-gcc qemu-aarch64 maturin; do
    if ! command -v "$tool" >/dev/null; then
        echo "ci_arm64: '$tool' not found (run without --no-install, or pip install maturin)" >&2
        exit 1
    fi
done

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $SYSROOT"
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
# pyo3 with abi3-py39 needs no target interpreter: it links against nothing and
# only needs to know it is building for Linux/aarch64 CPython.
export PYO3_CROSS=1

step "wheel: maturin build --release --target $TARGET"
rm -rf "$WHEEL_DIR"
maturin build --release --locked --target "$TARGET" --out "$WHEEL_DIR"
wheel=$(ls "$WHEEL_DIR"/*.whl)
echo "built $wheel"
case "$wheel" in
    *-abi3-*aarch64.whl) ;;
    *)
        echo "ci_arm64: expected an abi3 aarch64 wheel, got $wheel" >&2
        exit 1
        ;;
esac
python3 - "$wheel" <<'PY'
import struct, sys, zipfile

# The extension must be an aarch64 ELF (e_machine 183 = EM_AARCH64).
with zipfile.ZipFile(sys.argv[1]) as z:
    so = [n for n in z.namelist() if n.endswith(".so")]
    assert so == ["elastic_native/_elastic_native.abi3.so"], so
    head = z.read(so[0])[:20]
assert head[:4] == b"\x7fELF", "not an ELF file"
machine = struct.unpack_from("<H", head, 18)[0]
assert machine == 183, f"e_machine {machine}, expected 183 (aarch64)"
print(f"{so[0]}: ELF, e_machine {machine} (aarch64)")
PY
# --release: unoptimised code under emulation is ~20x slower again, and the unit tests
# that walk whole tables then take tens of minutes.
step "rust: unit tests under qemu-aarch64 (release build)"
cargo test --locked --release --target "$TARGET" --lib

step "rust: criterion benches in test mode under qemu-aarch64"
cargo test --locked --target "$TARGET" --benches

if [ "$python_suite" = 1 ]; then
    rootfs=$PY_ROOT/rootfs
    # libpython3.11-dev: the aarch64 headers and sysconfig data that
    # deploy/image/install_target.sh cross-builds with (not multiarch on this machine:
    # qemu-aarch64 -L /usr/aarch64-linux-gnu would then load a mismatched libc).
    if [ ! -x "$rootfs/usr/bin/python3.11" ] ||
        [ ! -e "$rootfs/usr/include/aarch64-linux-gnu/python3.11/pyconfig.h" ]; then
        step "python: Debian's aarch64 CPython 3.11 (debootstrap --foreign + dpkg-deb, no emulated scripts)"
        command -v debootstrap >/dev/null || { echo "ci_arm64: debootstrap not found" >&2; exit 1; }
        mirror=${DEBIAN_MIRROR:-$(
            {
                grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' || true
                grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' || true
            } | grep -v security | head -1 || true
        )}
        [ -n "$mirror" ] || { echo "ci_arm64: no Debian mirror found; set DEBIAN_MIRROR" >&2; exit 1; }
        rm -rf "$rootfs"
        mkdir -p "$PY_ROOT"
        debootstrap --foreign --arch=arm64 --variant=minbase --include=python3,libpython3.11-dev \
            bookworm "$rootfs" "$mirror" >"$PY_ROOT/debootstrap.log" 2>&1 ||
            { tail -20 "$PY_ROOT/debootstrap.log" >&2; exit 1; }
        for deb in "$rootfs"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$rootfs"; done
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb
    fi

    step "python: the aarch64 wheel + test dependencies for linux/aarch64 CPython 3.11"
    site=$PY_ROOT/site
    rm -rf "$site"
    # Binary wheels for linux/aarch64 CPython 3.11 on bookworm's glibc; what PyPI has no
    # aarch64 wheel of (hdrhistogram) is cross-built from its sdist.
    PYTHON=python3 TARGET_ROOT=$rootfs bash deploy/image/install_target.sh aarch64 "$site" \
        "$wheel" "snowpipe-streaming==1.9.1" "pytest>=8" "hypothesis>=6.100" "orjson>=3.9"

    aarch64_python=(qemu-aarch64 -L "$rootfs" "$rootfs/usr/bin/python3.11")
    PYTHONPATH=$site "${aarch64_python[@]}" -c \
        "import platform, elastic_native._elastic_native as n; print('native module on', platform.machine(), n.__file__)"

    step "python: parity suite against the aarch64 wheel under qemu-aarch64"
    PYTHONPATH=$site "${aarch64_python[@]}" -m pytest -q -p no:cacheprovider "${PARITY_TESTS[@]}"
fi

if [ "$python_suite" = 1 ]; then
    step "python: the worker under qemu-aarch64 (real SDK) against the emulator on 127.0.0.1"
    work=$(mktemp -d)
    emu_pid=
    # shellcheck disable=SC2317  # called by the trap
    cleanup() { [ -z "$emu_pid" ] || kill "$emu_pid" 2>/dev/null || true; rm -rf "$work"; }
    trap cleanup EXIT
    # The emulator is this machine's (x86-64) install of the package: python3 here.
    python3 -m elastic_channels.emulator serve --data-dir "$work/emu" --info-file "$work/info.json" \
        --append-buffer-ms 20 --duration-seconds 600 >"$work/emu.log" 2>&1 &
    emu_pid=$!
    for _ in $(seq 120); do [ -s "$work/info.json" ] && break; sleep 0.5; done
    [ -s "$work/info.json" ] || { cat "$work/emu.log" >&2; echo "ci_arm64: the emulator did not start" >&2; exit 1; }
    cert=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ssl_cert_file'])" "$work/info.json")
    # 0.5 MB/s for 5 s, then the drain; emulated aarch64 runs ~10x slower, 300 s bounds it.
    if ! PYTHONPATH=$site SSL_CERT_FILE=$cert SS_LOG_LEVEL=error timeout 300 "${aarch64_python[@]}" \
        -m elastic_channels.worker --run-id arm64-ci --worker-id 3 --target-bps 5e5 \
        --duration-seconds 5 --profile "$work/info.json" >"$work/worker.out" 2>"$work/worker.err"; then
        tail -30 "$work/worker.err" >&2
        echo "ci_arm64: the aarch64 worker failed (or ran past 300 s)" >&2
        exit 1
    fi
    python3 - "$work" <<'PY'
import json, subprocess, sys, time
from pathlib import Path

work = Path(sys.argv[1])
lines = [json.loads(x) for x in (work / "worker.out").read_text().splitlines() if x.startswith("{")]
summary = next(x for x in lines if x.get("type") == "summary")
assert summary["encoder"] == "native", f"encoder {summary['encoder']}, not the aarch64 wheel's"
acked, unacked = summary["rows_acked"], summary["unacked_rows"]
assert acked > 0 and unacked == 0, f"acked {acked}, unacked {unacked}: {summary}"
sql = ("SELECT count(DISTINCT TXID) AS n FROM RESORT_SALES "
       "WHERE RUN_ID = 'arm64-ci' AND WORKER_ID = 3")
# An ack means the rows are in the emulator's spool; they land within a second or two.
for _ in range(60):
    out = subprocess.run([sys.executable, "-m", "elastic_channels.emulator", "query",
                          "--data-dir", str(work / "emu"), sql],
                         capture_output=True, text=True, check=True).stdout
    landed = json.loads(out.splitlines()[0])["n"]
    if landed >= acked:
        break
    time.sleep(1)
print(f"aarch64 worker under qemu: {acked} rows acked, {landed} distinct TXIDs landed, "
      f"{summary['mb_per_s']} MB/s, append mode {summary['append_mode']}")
assert landed == acked, f"{landed} distinct rows landed for {acked} acked"
PY
fi

step "done"
