#!/usr/bin/env bash
# Build the worker image from the Dockerfile with buildah, with no container registry:
# the two base images the Dockerfile names are made locally instead of pulled,
#   runtime base  = debootstrap'd Debian bookworm (minbase) + python3 (CPython 3.11)
#   builder base  = the same + this machine's Rust toolchain (rustup layout)
# then `buildah bud` runs the Dockerfile unchanged and the image is smoke-tested:
# imports (native backend, SDK), the client-only benchmark, and the worker itself
# against a local emulator; every acked row must land. An arm64 image is smoke-tested
# on an x86-64 machine by running its aarch64 python3 under qemu-aarch64.
#
#   bash scripts/build_image.sh [--arch amd64|arm64] [--tag NAME] [--no-smoke] [--rebuild-bases]
#
# Opt-in (not in .ci/run): about 10 minutes cold on 2 cores, mostly debootstrap and
# vfs layer copies; bases are cached in buildah's storage and reused.
# Storage: buildah's default (/var/lib/containers/storage), driver vfs, chroot isolation.
set -euo pipefail
cd "$(dirname "$0")/.."

ARCH=amd64
TAG=localhost/elastic-native:dev
SMOKE=1
REBUILD=0
while [ $# -gt 0 ]; do
    case "$1" in
        --arch)
            [ $# -ge 2 ] || { echo "build_image: --arch needs amd64 or arm64" >&2; exit 2; }
            ARCH=$2
            shift
            ;;
        --tag)
            [ $# -ge 2 ] || { echo "build_image: --tag needs a name" >&2; exit 2; }
            TAG=$2
            shift
            ;;
        --no-smoke) SMOKE=0 ;;
        --rebuild-bases) REBUILD=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "build_image: unknown argument '$1' (see --help)" >&2
            exit 2
            ;;
    esac
    shift
done
case "$ARCH" in amd64 | arm64) ;; *)
    echo "build_image: --arch must be amd64 or arm64, got '$ARCH'" >&2
    exit 2
    ;;
esac

step() { printf '\n==> [image] %s (%ss)\n' "$*" "$SECONDS"; }
BUILDAH=(buildah --storage-driver vfs)
HOST_ARCH=$(dpkg --print-architecture)
SUITE=bookworm
RUNTIME_BASE=localhost/elastic-base/python:3.11-$SUITE-$ARCH
BUILDER_BASE=localhost/elastic-base/rust-python:$SUITE-$HOST_ARCH

need=()
command -v buildah >/dev/null || need+=(buildah)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ "$ARCH" != "$HOST_ARCH" ]; then
    command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
fi
if [ "${#need[@]}" -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "build_image: install ${need[*]} (apt-get) first" >&2; exit 1; }
    step "install: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
[ "$(id -u)" = 0 ] || { echo "build_image: debootstrap and buildah (vfs) need root" >&2; exit 1; }

# The Debian mirror this machine's apt already uses.
mirror=${DEBIAN_MIRROR:-$(
    {
        grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' || true
        grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' || true
    } | grep -v security | head -1 || true
)}
[ -n "$mirror" ] || { echo "build_image: no Debian mirror found; set DEBIAN_MIRROR" >&2; exit 1; }

have_image() { "${BUILDAH[@]}" inspect --type image "$1" >/dev/null 2>&1; }

# rootfs dir -> image, with a shell-less config the Dockerfile's FROM can use.
commit_rootfs() { # rootfs image [buildah config args...]
    local rootfs=$1 image=$2 ctr mnt
    shift 2
    ctr=$("${BUILDAH[@]}" from scratch)
    mnt=$("${BUILDAH[@]}" mount "$ctr")
    tar -C "$rootfs" -cf - . | tar -C "$mnt" -xf -
    "${BUILDAH[@]}" unmount "$ctr" >/dev/null
    # buildah matches linux/arm64 to images of variant v8 only.
    local variant=()
    [ "$ARCH_OF_ROOTFS" != arm64 ] || variant=(--variant v8)
    "${BUILDAH[@]}" config --os linux --arch "$ARCH_OF_ROOTFS" "${variant[@]}" "$@" "$ctr"
    "${BUILDAH[@]}" commit --quiet --rm "$ctr" "$image" >/dev/null
    echo "committed $image"
}

debootstrap_rootfs() { # arch dir
    local arch=$1 dir=$2
    rm -rf "$dir"
    if [ "$arch" = "$HOST_ARCH" ]; then
        debootstrap --variant=minbase --include=python3,ca-certificates \
            "$SUITE" "$dir" "$mirror" >"$dir.log" 2>&1 ||
            { tail -20 "$dir.log" >&2; exit 1; }
    else
        # Foreign architecture: debootstrap's first stage only downloads and unpacks
        # the essential set; unpack every fetched package (python3 included) with
        # dpkg-deb. No maintainer script runs (that would need emulation), which a
        # runtime that only COPYs files in and runs python3 does not need.
        debootstrap --foreign --arch="$arch" --variant=minbase \
            --include=python3,ca-certificates "$SUITE" "$dir" "$mirror" >"$dir.log" 2>&1 ||
            { tail -20 "$dir.log" >&2; exit 1; }
        for deb in "$dir"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$dir"; done
        rm -rf "$dir/debootstrap"
    fi
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
}

WORK=$(mktemp -d /var/tmp/elastic-image.XXXXXX)
cleanup() { rm -rf "$WORK"; }
# shellcheck disable=SC2317  # run by the EXIT trap
trap cleanup EXIT

if [ "$REBUILD" = 1 ] || ! have_image "$RUNTIME_BASE"; then
    step "runtime base: debootstrap $SUITE ($ARCH, minbase + python3) -> $RUNTIME_BASE"
    debootstrap_rootfs "$ARCH" "$WORK/runtime"
    ARCH_OF_ROOTFS=$ARCH commit_rootfs "$WORK/runtime" "$RUNTIME_BASE" \
        --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash
    rm -rf "$WORK/runtime"
fi

if [ "$REBUILD" = 1 ] || ! have_image "$BUILDER_BASE"; then
    step "builder base: debootstrap $SUITE ($HOST_ARCH) + this machine's Rust toolchain -> $BUILDER_BASE"
    debootstrap_rootfs "$HOST_ARCH" "$WORK/builder"
    sysroot=$(rustc --print sysroot)
    toolchain=$(basename "$sysroot")
    mkdir -p "$WORK/builder/usr/local/rustup/toolchains" "$WORK/builder/usr/local/cargo/bin"
    cp -a "$sysroot" "$WORK/builder/usr/local/rustup/toolchains/$toolchain"
    rm -rf "$WORK/builder/usr/local/rustup/toolchains/$toolchain/share/doc"
    rustup_bin=$(command -v rustup)
    cp "$(readlink -f "$rustup_bin")" "$WORK/builder/usr/local/cargo/bin/rustup"
    for p in cargo rustc rustdoc; do ln -s rustup "$WORK/builder/usr/local/cargo/bin/$p"; done
    printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "minimal"\n' "$toolchain" \
        >"$WORK/builder/usr/local/rustup/settings.toml"
    ARCH_OF_ROOTFS=$HOST_ARCH commit_rootfs "$WORK/builder" "$BUILDER_BASE" \
        --env RUSTUP_HOME=/usr/local/rustup --env CARGO_HOME=/usr/local/cargo \
        --env PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --cmd /bin/bash
    rm -rf "$WORK/builder"
fi

step "build: buildah bud --platform linux/$ARCH -t $TAG (the Dockerfile, unchanged)"
# --format docker: the OCI format has no SHELL, which the Dockerfile's build stage uses.
# The RUN steps reach PyPI, crates.io and Debian through this machine's network, so
# they get this machine's CA bundle (it may hold a CA the fresh rootfs does not).
# buildah 1.28 sets BUILDPLATFORM to the target platform; say what it really is, so
# the build stage runs natively and cross-compiles, as under docker buildx.
ca_mount=()
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
    ca_mount=(--volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)
fi
"${BUILDAH[@]}" bud --isolation chroot --layers --format docker --platform "linux/$ARCH" \
    "${ca_mount[@]}" \
    --build-arg "BUILDER_IMAGE=$BUILDER_BASE" --build-arg "RUNTIME_IMAGE=$RUNTIME_BASE" \
    --build-arg "BUILDPLATFORM=linux/$HOST_ARCH" \
    -t "$TAG" -f Dockerfile .
"${BUILDAH[@]}" images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -F "${TAG#localhost/}" || true

[ "$SMOKE" = 1 ] || { step "done (no smoke test)"; exit 0; }

# The smoke test runs the image's own python3 with the image's environment, each
# command bounded to 300 s: under
# buildah (same architecture), or, for arm64 on an x86-64 machine, under qemu-aarch64
# with the image's root file system as its prefix (no binfmt needed). The emulator and
# the row count run on this machine, from this tree.
ctr=$("${BUILDAH[@]}" from "$TAG")
mnt=""
emu_pid=""
# shellcheck disable=SC2317  # run by the EXIT trap
smoke_cleanup() {
    if [ -n "$emu_pid" ]; then
        kill "$emu_pid" 2>/dev/null || true
        wait "$emu_pid" 2>/dev/null || true
    fi
    [ -z "$mnt" ] || "${BUILDAH[@]}" unmount "$ctr" >/dev/null 2>&1 || true
    "${BUILDAH[@]}" rm "$ctr" >/dev/null 2>&1 || true
    cleanup
}
trap smoke_cleanup EXIT
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
if [ "$ARCH" = "$HOST_ARCH" ]; then
    how="buildah run"
    in_image() { # KEY=VALUE... -- COMMAND...
        local envs=()
        while [ "$1" != -- ]; do envs+=(--env "$1"); shift; done
        shift
        timeout 300 "${BUILDAH[@]}" run --isolation chroot --user 10001:10001 -v "$WORK:$WORK:ro" \
            "${envs[@]}" "$ctr" -- "$@"
    }
else
    how="qemu-aarch64"
    mnt=$("${BUILDAH[@]}" mount "$ctr")
    qemu=$(command -v qemu-aarch64)
    image_python=$mnt/usr/bin/python3
    [ -x "$image_python" ] || image_python=$mnt/usr/local/bin/python3
    mapfile -t image_env < <("${BUILDAH[@]}" inspect --type image \
        --format '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' "$TAG" | grep -v '^PATH=' | grep .)
    in_image() { # KEY=VALUE... -- python3 ARGS...
        local envs=()
        while [ "$1" != -- ]; do envs+=("$1"); shift; done
        shift
        [ "$1" = python3 ] || { echo "build_image: under qemu only python3 runs, not '$1'" >&2; return 2; }
        shift
        timeout 300 env -i PATH=/usr/bin:/bin HOME=/tmp "${image_env[@]}" "${envs[@]}" \
            "$qemu" -L "$mnt" "$image_python" "$@"
    }
    head -1 "$mnt/opt/app/bin/elastic-channels" | grep -qx '#!/usr/bin/env python3' ||
        { echo "build_image: elastic-channels in the image has no runtime shebang" >&2; exit 1; }
fi

step "smoke ($how): imports, SDK included, and the client-only benchmark inside the image"
in_image -- python3 -c "
import platform, elastic_native, snowflake.ingest.streaming
from elastic_channels.rows.backend import select_backend
print(platform.machine(), 'elastic_native', elastic_native.__version__, 'backend:', select_backend(None))
print('snowpipe-streaming', snowflake.ingest.streaming.__file__)"
if [ "$ARCH" = "$HOST_ARCH" ]; then
    in_image -- python3 -m elastic_channels bench --workers 1 --target-bps 20e6 \
        --duration-seconds 2 --quiet | tail -3
    in_image -- elastic-channels --help | head -1
else
    # The benchmark starts worker processes with the image's python3: without binfmt_misc
    # this machine cannot exec an aarch64 binary, only qemu-aarch64 can run it.
    echo "client-only benchmark: skipped under qemu-aarch64 (it starts child processes)"
fi

step "smoke ($how): the worker in the image against the emulator on 127.0.0.1"
emu_dir="$WORK/emu"
mkdir -p "$emu_dir"
python3 -m elastic_channels.emulator serve --data-dir "$emu_dir" --info-file "$emu_dir/info.json" \
    --append-buffer-ms 20 --duration-seconds 600 >"$WORK/emu.log" 2>&1 &
emu_pid=$!
for _ in $(seq 60); do [ -s "$emu_dir/info.json" ] && break; sleep 0.5; done
[ -s "$emu_dir/info.json" ] || { cat "$WORK/emu.log" >&2; echo "emulator did not start" >&2; exit 1; }
chmod -R a+rX "$WORK"
cert=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ssl_cert_file'])" "$emu_dir/info.json")
bps=2000000
[ "$ARCH" = "$HOST_ARCH" ] || bps=500000
# 5 s of sending, then the drain; in_image stops anything after 300 s.
in_image "SSL_CERT_FILE=$cert" SS_LOG_LEVEL=error -- python3 -m elastic_channels.k8s_worker \
    --run-id image-smoke --worker-id 7 --target-bps "$bps" --duration-seconds 5 \
    --profile "$emu_dir/info.json" >"$WORK/worker.out"
tail -1 "$WORK/worker.out"
acked=$(tail -1 "$WORK/worker.out" | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['rows_acked'])")
[ "$acked" -gt 0 ] || { echo "build_image: the worker had no rows acked" >&2; exit 1; }
# An ack means the emulator has the rows in its spool; they land in DuckDB shortly
# after. Delivery is at-least-once, so wait for at least the acked count.
rows=0
for _ in $(seq 60); do
    rows=$(python3 -m elastic_channels.emulator query --data-dir "$emu_dir" \
        "SELECT count(*) AS n FROM RESORT_SALES WHERE RUN_ID = 'image-smoke' AND WORKER_ID = 7" |
        python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['n'])")
    [ "$rows" -ge "$acked" ] && break
    sleep 1
done
echo "the worker in the $ARCH image had $acked rows acked; the emulator's table holds $rows of them"
[ "$rows" -ge "$acked" ] || { echo "build_image: only $rows of $acked acked rows landed" >&2; exit 1; }
step "done"
