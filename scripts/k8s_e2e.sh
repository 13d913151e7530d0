#!/usr/bin/env bash
# The fleet end to end on a real Kubernetes on this machine (docs/FLEET.md, "The fleet on
# a local cluster"): bring up the cluster (scripts/k8s_local.sh), build the worker image
# from the Dockerfile (scripts/build_image.sh) and load it into the node, serve the
# emulator on 127.0.0.1, run a scenario of N pods through deploy/run_job.sh with the
# monitor following the pods through the API server (monitor --k8s), delete one pod
# mid-run, then check (scripts/k8s_e2e_check.py) that every row landed once, that the
# first fleet window counts every pod, the deleted pod's accounting and the Job's, and
# tear down. Prints the time of each phase.
#
#   scripts/k8s_e2e.sh [--fresh] [--keep] [--workers N] [--mbps X] [--seconds S]
#
# Options:
#   --fresh        start from nothing cached: remove the Kubernetes binaries, the image
#                  and its bases (buildah), the cluster's state (a cold Kubernetes build
#                  is 15-40 min on 2 busy cores; Go's own module and build caches stay:
#                  `go clean -cache -modcache` first for a cold compile)
#   --keep         leave the cluster and the emulator up at the end
#   --workers N    pods [4]
#   --mbps X       each pod's rate, MB/s [5]
#   --seconds S    how long the pods send [60]
#   --delete-index I   the pod deleted mid-run [1]
#   --sigkill      instead of deleting that pod, SIGKILL its worker (ctr tasks kill), as
#                  the OOM killer would: the pod fails, its worker prints no summary
#   --image TAG    use this image from buildah's storage instead of building one (to
#                  iterate on deploy/ without the image's 10-20 min build)
#   -h, --help     this text
#
# The image and the host's emulator and monitor are built and run from the committed
# tree (git archive HEAD), not from files being edited in the working tree. Every
# service and pod is on 127.0.0.1 (the pods on hostNetwork). Needs root. Work files
# and logs: $ELASTIC_K8S_E2E_DIR [/var/tmp/elastic-k8s-e2e].
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

FRESH=0
KEEP=0
WORKERS=4
MBPS=5
RUN_SECONDS=60
DELETE_INDEX=1
IMAGE_GIVEN=""
SIGKILL=0
while [ $# -gt 0 ]; do
    case "$1" in
        --fresh) FRESH=1 ;;
        --keep) KEEP=1 ;;
        --sigkill) SIGKILL=1 ;;
        --workers | --mbps | --seconds | --delete-index | --image)
            [ $# -ge 2 ] || { echo "k8s_e2e: $1 needs a value" >&2; exit 2; }
            case "$1" in
                --workers) WORKERS=$2 ;;
                --mbps) MBPS=$2 ;;
                --seconds) RUN_SECONDS=$2 ;;
                --delete-index) DELETE_INDEX=$2 ;;
                --image) IMAGE_GIVEN=$2 ;;
            esac
            shift
            ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "k8s_e2e: unknown argument '$1' (see --help)" >&2
            exit 2
            ;;
    esac
    shift
done
[[ $WORKERS =~ ^[1-9][0-9]?$ ]] || { echo "k8s_e2e: --workers must be 1..99, got '$WORKERS'" >&2; exit 2; }
[[ $MBPS =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "k8s_e2e: --mbps must be a number, got '$MBPS'" >&2; exit 2; }
[[ $RUN_SECONDS =~ ^[1-9][0-9]{0,4}$ ]] || { echo "k8s_e2e: --seconds must be 1..99999, got '$RUN_SECONDS'" >&2; exit 2; }
if ! [[ $DELETE_INDEX =~ ^[0-9]+$ ]] || [ "$DELETE_INDEX" -ge "$WORKERS" ]; then
    echo "k8s_e2e: --delete-index must be below --workers ($WORKERS), got '$DELETE_INDEX'" >&2
    exit 2
fi
[ "$(id -u)" = 0 ] || { echo "k8s_e2e: needs root (containerd, runc, buildah)" >&2; exit 1; }

W=${ELASTIC_K8S_E2E_DIR:-/var/tmp/elastic-k8s-e2e}
LOCAL=(bash "$REPO/scripts/k8s_local.sh")
TAG=${IMAGE_GIVEN:-localhost/elastic-native:k8s-e2e}
RUN_ID=k8s-e2e-$(date +%s)
NS=default
PHASES=()
T0=$SECONDS
PHASE_T=$SECONDS
EMU_PID=""
MON_PID=""
FOLLOW_PIDS=()

say() { printf '\n==> [k8s-e2e] %s (%ss)\n' "$*" "$((SECONDS - T0))" >&2; }
die() {
    echo "k8s_e2e: FAIL: $*" >&2
    exit 1
}
phase_done() { # NAME: the time since the last phase ended
    PHASES+=("$(printf '%-34s %5ss' "$1" "$((SECONDS - PHASE_T))")")
    PHASE_T=$SECONDS
}
timings() {
    echo
    echo "k8s_e2e phase timings:"
    printf '  %s\n' "${PHASES[@]}" "$(printf '%-34s %5ss' total "$((SECONDS - T0))")"
}
kc() { kubectl "$@"; }
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    local rc=$?
    for p in "${FOLLOW_PIDS[@]}" "$MON_PID"; do [ -z "$p" ] || kill "$p" 2>/dev/null || true; done
    if [ "$KEEP" = 0 ]; then
        [ -z "$EMU_PID" ] || { kill "$EMU_PID" 2>/dev/null || true; wait "$EMU_PID" 2>/dev/null || true; }
        "${LOCAL[@]}" down >/dev/null 2>&1 || true
        [ "$rc" != 0 ] || phase_done "teardown"
    fi
    timings
    [ "$rc" = 0 ] && echo "k8s_e2e: PASS" || echo "k8s_e2e: FAIL (logs: $W)"
}
trap cleanup EXIT

mkdir -p "$W"
if [ "$FRESH" = 1 ]; then
    say "fresh: removing the cached Kubernetes binaries, the image, its bases and the cluster state"
    "${LOCAL[@]}" down --purge >/dev/null 2>&1 || true
    rm -rf "${ELASTIC_K8S_CACHE:-$HOME/.cache/elastic-channels/k8s}"
    for img in "$TAG" localhost/elastic-base/python:3.11-bookworm-amd64 localhost/elastic-base/rust-python:bookworm-amd64; do
        buildah --storage-driver vfs rmi -f "$img" >/dev/null 2>&1 || true
    done
fi
rm -rf "$W/src" "$W/emu" "$W/pods"
mkdir -p "$W/src" "$W/pods"
git -C "$REPO" archive HEAD | tar -x -C "$W/src"
# The host's emulator and monitor run from that tree, with this checkout's native module
# (pip install -e . built it; the image builds its own from the tree's Rust sources).
cp "$REPO"/python/elastic_native/_elastic_native*.so "$W/src/python/elastic_native/" 2>/dev/null ||
    die "no native module in $REPO/python/elastic_native: pip install -e . first"
export PYTHONPATH="$W/src/python"

say "cluster: scripts/k8s_local.sh up (builds Kubernetes when not cached)"
"${LOCAL[@]}" up >"$W/up.log" 2>&1 || { tail -20 "$W/up.log" >&2; die "k8s_local.sh up (log: $W/up.log)"; }
KUBECONFIG=$("${LOCAL[@]}" kubeconfig)
export KUBECONFIG
BIN=${ELASTIC_K8S_CACHE:-$HOME/.cache/elastic-channels/k8s}/${K8S_VERSION:-v1.34.4}/bin
export PATH="$BIN:$PATH"
kc version 2>/dev/null | sed 's/^/  /' >&2 || true
phase_done "cluster up"

if [ -z "$IMAGE_GIVEN" ]; then
    say "image: the Dockerfile with buildah (scripts/build_image.sh), loaded into the node"
    (cd "$W/src" && bash scripts/build_image.sh --tag "$TAG" --no-smoke) >"$W/image.log" 2>&1 ||
        { tail -20 "$W/image.log" >&2; die "build_image.sh (log: $W/image.log)"; }
    phase_done "image build"
else
    say "image: $TAG as given (not built)"
fi
"${LOCAL[@]}" load "$TAG" >>"$W/image.log" 2>&1 || die "k8s_local.sh load $TAG (log: $W/image.log)"
phase_done "image load into the node"

say "emulator on 127.0.0.1, its key and CA in the Secret"
python3 -m elastic_channels.emulator serve --data-dir "$W/emu" --info-file "$W/emu/info.json" \
    --duration-seconds 3600 >"$W/emulator.log" 2>&1 &
EMU_PID=$!
for _ in $(seq 120); do [ -s "$W/emu/info.json" ] && break; kill -0 "$EMU_PID" 2>/dev/null || break; sleep 0.5; done
[ -s "$W/emu/info.json" ] || { cat "$W/emulator.log" >&2; die "the emulator did not start"; }
info() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$W/emu/info.json" "$1"; }
kc delete secret snowflake-key --namespace "$NS" --ignore-not-found >/dev/null
kc create secret generic snowflake-key --namespace "$NS" \
    --from-file=rsa_key.p8="$(info private_key_file)" --from-file=ca.pem="$(info ssl_cert_file)" >/dev/null
STAGE=$(info "client_env['AWS_ENDPOINT_URL']")
phase_done "emulator + secret"

say "run: $WORKERS pods at $MBPS MB/s for ${RUN_SECONDS}s through deploy/run_job.sh, monitor --k8s"
cat >"$W/scenario.yaml" <<EOF
name: k8s-e2e
description: "scripts/k8s_e2e.sh: $WORKERS pods on the local cluster, $MBPS MB/s each"
workers: $WORKERS
window_seconds: 5
stages:
  - {seconds: $RUN_SECONDS, mbps: $MBPS}
EOF
: >"$W/empty.env"
# As on an account, but the account is the emulator: its URL, its user's key and CA in
# the Secret, its stage's endpoint; the pods on the node's network (127.0.0.1).
STARTED_AT=$(date +%s.%N)
ENV_FILE="$W/empty.env" SNOWFLAKE_ACCOUNT="$(info "properties['account']")" \
    SNOWFLAKE_USER="$(info "properties['user']")" SNOWFLAKE_DATABASE="$(info database)" \
    SNOWFLAKE_SCHEMA="$(info schema)" SNOWFLAKE_HOST="$(info "properties['host']")" \
    SNOWFLAKE_PORT="$(info "properties['port']")" \
    "$REPO/deploy/run_job.sh" "$RUN_ID" --scenario "$W/scenario.yaml" --image "$TAG" \
    --namespace "$NS" --arch amd64 --cpu "$((1800 / WORKERS))m" --memory-mib 768 \
    --host-network --trust-ca ca.pem --stage-endpoint "$STAGE" --start-delay-seconds 120 \
    --start-barrier --api-endpoint 127.0.0.1:6443 \
    >"$W/run_job.log" 2>&1 || { cat "$W/run_job.log" >&2; die "deploy/run_job.sh"; }
JOB=$(sed -n 's|.*job/\([^ ]*\) .*|\1|p' "$W/run_job.log" | head -1)
[ -n "$JOB" ] || { cat "$W/run_job.log" >&2; die "run_job.sh named no Job"; }
python3 -m elastic_channels monitor --k8s --run-id "$RUN_ID" --namespace "$NS" \
    --workers "$WORKERS" --profile "$W/emu/info.json" --exit-when-done >"$W/monitor.log" 2>&1 &
MON_PID=$!

running() { # the pods of the Job that run, as "INDEX NAME" lines
    kc get pods -n "$NS" -l "batch.kubernetes.io/job-name=$JOB" -o \
        jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.labels.batch\.kubernetes\.io/job-completion-index} {.metadata.name}{"\n"}{end}'
}
for _ in $(seq 300); do
    [ "$(running | grep -c .)" -ge "$WORKERS" ] && break
    sleep 1
done
[ "$(running | grep -c .)" -ge "$WORKERS" ] || { kc get pods -n "$NS" -o wide >&2; die "not every pod ran within 300 s"; }
phase_done "pods scheduled and running"
declare -A POD
while read -r idx name; do
    POD[$idx]=$name
    kc logs -n "$NS" -f "$name" -c worker >"$W/pods/$idx.log" 2>"$W/pods/$idx.err" &
    FOLLOW_PIDS+=($!)
done < <(running)

# Mid-run: once the pod to delete has reported 3 windows, delete it with the shortest
# grace (the kubelet sends SIGTERM, then SIGKILL 2 s later), as a node lost mid-run.
victim=${POD[$DELETE_INDEX]}
for _ in $(seq $((RUN_SECONDS + 120))); do
    [ "$(grep -c '"type": *"window"' "$W/pods/$DELETE_INDEX.log" 2>/dev/null || true)" -ge 3 ] && break
    sleep 1
done
DELETED_AT=$(date +%s.%N)
if [ "$SIGKILL" = 1 ]; then
    say "SIGKILL the worker of pod $victim (index $DELETE_INDEX) mid-run"
    cid=$(kc get pod -n "$NS" "$victim" -o jsonpath='{.status.containerStatuses[0].containerID}')
    ctr -a "${ELASTIC_K8S_STATE:-/var/tmp/elastic-k8s}/run/containerd.sock" -n k8s.io \
        tasks kill -s SIGKILL "${cid#containerd://}" || die "could not SIGKILL container $cid"
else
    say "delete pod $victim (index $DELETE_INDEX) mid-run"
    kc delete pod -n "$NS" "$victim" --grace-period=0 --force --wait=false >/dev/null 2>&1
fi
phase_done "sending until the fault"

job_done() {
    kc get job -n "$NS" "$JOB" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' |
        grep -qxE 'Complete|Failed'
}
for _ in $(seq $((RUN_SECONDS + 600))); do job_done && break; sleep 1; done
job_done || die "job/$JOB did not finish"
kc get job -n "$NS" "$JOB" -o json >"$W/job.json"
CREATED=$(kc get events -n "$NS" --field-selector "involvedObject.name=$JOB,reason=SuccessfulCreate" -o name | grep -c . || true)
phase_done "the rest of the run"
for _ in $(seq 300); do kill -0 "$MON_PID" 2>/dev/null || break; sleep 1; done
if kill -0 "$MON_PID" 2>/dev/null; then
    tail -5 "$W/monitor.log" >&2
    die "the monitor did not end within 300 s of the Job"
fi
wait "$MON_PID" || { tail -5 "$W/monitor.log" >&2; die "the monitor exited $?"; }
MON_PID=""
phase_done "monitor finished"

say "checks"
python3 "$REPO/scripts/k8s_e2e_check.py" --data-dir "$W/emu" --run-id "$RUN_ID" \
    --scenario "$W/scenario.yaml" --pod-logs "$W/pods" --job-json "$W/job.json" \
    --created "$CREATED" --deleted-index "$DELETE_INDEX" --deleted-at "$DELETED_AT" \
    --started-at "$STARTED_AT" | tee "$W/check.out"
phase_done "checks"
