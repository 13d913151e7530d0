#!/usr/bin/env bash
# Start a fleet run: render the Kubernetes manifests (an Indexed Job, one pod per
# worker, and its ConfigMap) and apply them with kubectl.
#
#   deploy/run_job.sh RUN_ID --scenario FILE [--workers N] [options]
#   deploy/run_job.sh RUN_ID --target-bps X --duration-seconds D --workers N [options]
#   deploy/run_job.sh step-1 --scenario step --workers 455 --dry-run
#   deploy/run_job.sh iot-1 --workload my-rows.yaml --target-bps 20e6 --duration-seconds 60 \
#       --workers 2 --dry-run
#   deploy/run_job.sh ref-15 --target-bps 92e6 --duration-seconds 60 --workers 1 --dry-run
#
# Required:
#   RUN_ID                  1-63 chars [A-Za-z0-9._-], starting and ending alphanumeric
#   --scenario FILE         a scenario file (docs/SCENARIOS.md) or a shipped scenario's
#                           name (smoke, reference, step, spike, soak): every pod follows
#                           its stages on one wall-clock schedule from an agreed start;
#                           --workers, --channels, --max-inflight-bytes and --workload
#                           override its keys. Needs the elastic_channels package here
#                           (pip install .)
#   or, for one constant rate:
#   --target-bps X          per-worker target rate in bytes/s: 92000000, 92e6 or 9.2e7
#   --duration-seconds D    how long each worker sends
#   --workers N             pods = parallelism = completions (1..10000)
#   the image               --image, or IMAGE, or REGISTRY (+ IMAGE_NAME, IMAGE_TAG), or
#                           AWS_ACCOUNT_ID (its ECR registry): what build_and_push.sh pushed
#   --account, --user, --database   [SNOWFLAKE_ACCOUNT, SNOWFLAKE_USER, SNOWFLAKE_DATABASE]
# Options:
#   --workload NAME|FILE    the rows: a shipped workload's name (resort-sales,
#                           iot-telemetry, clickstream, wide-events; the image has them)
#                           or a workload file here (docs/WORKLOADS.md) [WORKLOAD, without
#                           --scenario; resort-sales]. A file is checked here, its text
#                           goes in the ConfigMap (key workload.yaml), mounted read-only
#                           in the pods at /etc/elastic-channels/workload.yaml. The pipe
#                           is the workload's unless --pipe names one. Create its table
#                           first: elastic-channels setup --workload NAME|FILE. Needs the
#                           elastic_channels package here (pip install .)
#   --start-delay-seconds S with --scenario: the pods' agreed start is this long after
#                           rendering, up to a window boundary [120]: time to schedule
#                           the pods and pull the image; a pod that opens its channel
#                           later joins the schedule where it has got to
#   --image IMAGE           full image reference [IMAGE]
#   --namespace NS          [K8S_NAMESPACE; default]
#   --schema S              [SNOWFLAKE_SCHEMA; PUBLIC]
#   --pipe P                [SNOWFLAKE_PIPE; the workload's pipe, RESORT_SALES_PIPE]
#   --role R                [SNOWFLAKE_ROLE; the user's default role when empty]
#   SNOWFLAKE_HOST, SNOWFLAKE_PORT   only to override the account URL the workers derive
#                           from the account (ACCOUNT.snowflakecomputing.com:443)
#   --secret NAME           Secret holding the private key [K8S_SECRET; snowflake-key]
#   --secret-key FILE       the key's file name in that Secret [rsa_key.p8]
#   --sdk-properties FILE   JSON object of SDK client properties [deploy/sdk-properties.json]
#   --arch arm64|amd64      node architecture to schedule on [WORKER_ARCH; arm64, the
#                           Graviton node group]; the image must hold this platform
#                           (build_and_push.sh builds linux/arm64 and linux/amd64)
#   --log-level LEVEL       SDK log level, SS_LOG_LEVEL [warn]
#   --channels N            elastic channels per worker pod, each its own SDK client [1]
#   --max-inflight-bytes X  bytes a worker may have sent and not yet acked [the
#                           worker's default]; `elastic-channels plan` prints both
#   --memory-mib M          each pod's memory request and limit, MiB [1024]; the SDK's
#                           process memory throttle is set to 75% of it
#   --cpu Q                 each pod's CPU request and limit, as Kubernetes writes it
#                           (1, 0.5, 500m) [1]: less than 1 fits more pods on a small
#                           node (a test cluster), at the cost of the rate a pod reaches
#   --host-network          the pods use their node's network (hostNetwork): for a test
#                           cluster whose endpoint listens on the node's 127.0.0.1
#   --trust-ca KEY          the key Secret (--secret) also holds a CA bundle under the
#                           file name KEY: the pods trust it (SSL_CERT_FILE,
#                           AWS_CA_BUNDLE), for an endpoint with a private CA (the
#                           emulator: scripts/k8s_e2e.sh)
#   --stage-endpoint URL    the S3 endpoint of the pipe's stage, for file mode's uploads
#                           (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3); an account's pods
#                           need none (the emulator's stage: scripts/k8s_e2e.sh)
#   --start-barrier         every pod starts sending at one instant, however long each
#                           took to be scheduled and start (as k6-operator's paused
#                           runners): each pod opens its channel, turns Ready, and
#                           waits for the run's start in the ConfigMap JOB-start, which
#                           this script writes once all --workers pods are Ready (or
#                           after --start-delay-seconds, naming those that are not), on
#                           a window boundary a few seconds ahead; the pods get a
#                           ServiceAccount that may read only that ConfigMap
#   --api-endpoint HOST:PORT  with --start-barrier, where the pods reach the API server
#                           (KUBERNETES_SERVICE_HOST/PORT): for a test cluster without
#                           kube-proxy whose pods are on the node's network (the local
#                           cluster: 127.0.0.1:6443); an EKS cluster's pods need none
#   --wait                  after applying, wait for the Job to finish: exit 0 when it
#                           completes, 1 with one line when it fails (a failed index
#                           fails it) or a pod cannot start for START_GRACE_SECONDS
#                           [120] (image not pulled, Secret or ConfigMap missing)
#   --dry-run               print the manifests kubectl would get; touch no cluster.
#                           Settings that are not given are named on stderr and shown
#                           as <NAME> placeholders.
#   -h, --help              this text
#
# Settings come from the options, the environment, then .env (see .env.example).
# The key Secret is made once per namespace: deploy/create_secret.sh.
set -euo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
help_if_asked "$@"
load_env
TEMPLATES="$DEPLOY_DIR/templates"

pod_settings # RUN_ID, IMAGE, NAMESPACE, SNOWFLAKE_*, SECRET_NAME, SECRET_KEY
TARGET_BPS=""
DURATION_SECONDS=""
WORKERS=""
SNOWFLAKE_PIPE=${SNOWFLAKE_PIPE:-} # the workload's pipe when not named
SDK_PROPERTIES_FILE="$DEPLOY_DIR/sdk-properties.json"
ARCH=${WORKER_ARCH:-arm64}
SS_LOG_LEVEL=warn
CHANNELS=1
MAX_INFLIGHT_BYTES=""
MEMORY_MIB=1024
MEMORY_GIVEN=0
WAIT=0
SCENARIO=""
START_DELAY_SECONDS=120
CHANNELS_GIVEN=0
CPU=1
HOST_NETWORK=0
TRUST_CA=""
STAGE_ENDPOINT=""
BARRIER=0
API_ENDPOINT=""

while [ $# -gt 0 ]; do
    opt=$1
    case "$opt" in
        --dry-run) DRY_RUN=1 ;;
        --wait) WAIT=1 ;;
        --host-network) HOST_NETWORK=1 ;;
        --start-barrier) BARRIER=1 ;;
        --target-bps | --duration-seconds | --workers | --pipe | --secret-key | \
            --sdk-properties | --arch | --log-level | --channels | --max-inflight-bytes | \
            --memory-mib | --scenario | --start-delay-seconds | --cpu | --trust-ca | \
            --stage-endpoint | --api-endpoint)
            take_value "$@"
            val=$2
            shift
            case "$opt" in
                --target-bps) TARGET_BPS=$val ;;
                --duration-seconds) DURATION_SECONDS=$val ;;
                --workers) WORKERS=$val ;;
                --pipe) SNOWFLAKE_PIPE=$val ;;
                --secret-key) SECRET_KEY=$val ;;
                --sdk-properties) SDK_PROPERTIES_FILE=$val ;;
                --arch) ARCH=$val ;;
                --log-level) SS_LOG_LEVEL=$val ;;
                --channels) CHANNELS=$val CHANNELS_GIVEN=1 ;;
                --max-inflight-bytes) MAX_INFLIGHT_BYTES=$val ;;
                --memory-mib) MEMORY_MIB=$val MEMORY_GIVEN=1 ;;
                --scenario) SCENARIO=$val ;;
                --start-delay-seconds) START_DELAY_SECONDS=$val ;;
                --cpu) CPU=$val ;;
                --trust-ca) TRUST_CA=$val ;;
                --stage-endpoint) STAGE_ENDPOINT=$val ;;
                --api-endpoint) API_ENDPOINT=$val ;;
            esac
            ;;
        *)
            pod_arg "$@" # RUN_ID, --image, --account, --workload ... (lib/common.sh)
            shift $((TAKEN - 1))
            ;;
    esac
    shift
done

# --- validation: every value lands inside a quoted YAML scalar, so each is checked
# against what Kubernetes (or the worker) accepts, and can hold no quote or newline.
check_run_id "$RUN_ID"
# 92000000, 92e6, 9.2e7, 92E+6 -> 92000000: a whole number of bytes, as the README
# writes rates. Prints the integer; fails on anything else (or a fraction of a byte).
whole_number() { # name value
    local int frac exp pad
    [[ $2 =~ ^([0-9]+)(\.([0-9]*))?([eE]\+?([0-9]{1,2}))?$ ]] ||
        die "$1 must be a number of bytes per second like 92000000 or 92e6, got '$2'"
    int=${BASH_REMATCH[1]}
    frac=${BASH_REMATCH[3]}
    exp=$((10#${BASH_REMATCH[5]:-0}))
    while [[ $frac == *0 ]]; do frac=${frac%0}; done
    [ "${#frac}" -le "$exp" ] || die "$1 must be a whole number of bytes per second, got '$2'"
    printf -v pad '%*s' "$((exp - ${#frac}))" ''
    int="$int$frac${pad// /0}"
    while [[ $int == 0?* ]]; do int=${int#0}; done
    [ "${#int}" -le 18 ] || die "$1 is too large: '$2'"
    echo "$int"
}
[ -z "$WORKERS" ] || positive_int --workers "$WORKERS" 10000
positive_int --channels "$CHANNELS" 64
if [ -n "$MAX_INFLIGHT_BYTES" ]; then
    MAX_INFLIGHT_BYTES=$(whole_number --max-inflight-bytes "$MAX_INFLIGHT_BYTES")
    positive_int --max-inflight-bytes "$MAX_INFLIGHT_BYTES"
fi
# shellcheck disable=SC2034 # read by render through ${!name}
SCENARIO_DATA_LINE="  # no --scenario: one constant rate, --target-bps for --duration-seconds"
# The workload: --workload, else (without --scenario, whose key it is) WORKLOAD. Its
# WORKLOAD_* variables (lib/common.sh) come from k8s_scenario, or without a scenario from
# k8s_workload (check_workload).
if [ -n "$SCENARIO" ]; then
    choose_workload 0
    [ -z "$TARGET_BPS$DURATION_SECONDS" ] ||
        die "--scenario sets the rate and the duration (its stages): leave out --target-bps and --duration-seconds, or edit a copy of the scenario (elastic-channels run $SCENARIO --print-scenario writes one)"
    [[ $START_DELAY_SECONDS =~ ^[0-9]{1,5}$ ]] ||
        die "--start-delay-seconds must be a whole number of seconds (0..99999), got '$START_DELAY_SECONDS'"
    command -v python3 >/dev/null || die "--scenario needs python3 with the elastic_channels package (pip install .)"
    overrides=(--start-delay-seconds "$START_DELAY_SECONDS")
    [ -z "$WORKERS" ] || overrides+=(--workers "$WORKERS")
    [ "$CHANNELS_GIVEN" = 0 ] || overrides+=(--channels "$CHANNELS")
    [ -z "$MAX_INFLIGHT_BYTES" ] || overrides+=(--max-inflight-bytes "$MAX_INFLIGHT_BYTES")
    [ -z "$WORKLOAD_OPTION" ] || overrides+=(--workload "$WORKLOAD_OPTION")
    # Prints NAME='value' lines (shlex-quoted) or, on a bad scenario, says why on stderr.
    assignments=$(python3 -m elastic_channels.fleet.k8s_scenario "$SCENARIO" "${overrides[@]}") ||
        die "--scenario '$SCENARIO'${WORKLOAD_OPTION:+" with --workload '$WORKLOAD_OPTION'"} cannot be used (see above)"
    eval "$assignments"
    WORKERS=$SCENARIO_WORKERS
    TARGET_BPS=$SCENARIO_TARGET_BPS
    DURATION_SECONDS=$SCENARIO_DURATION_SECONDS
else
    choose_workload 1
    check_workload
fi
[ -n "$WORKLOAD_PIPE" ] || WORKLOAD_PIPE=RESORT_SALES_PIPE # no workload given: resort-sales
[ -n "$SNOWFLAKE_PIPE" ] || SNOWFLAKE_PIPE=$WORKLOAD_PIPE
[ -n "$TARGET_BPS" ] || die "--target-bps is required (bytes per second per worker), or --scenario"
TARGET_BPS=$(whole_number --target-bps "$TARGET_BPS")
positive_int --target-bps "$TARGET_BPS"
[ -n "$DURATION_SECONDS" ] || die "--duration-seconds is required, or --scenario"
positive_int --duration-seconds "$DURATION_SECONDS" 604800
[ -n "$WORKERS" ] || die "--workers is required, or --scenario"
positive_int --workers "$WORKERS" 10000
positive_int --memory-mib "$MEMORY_MIB" 262144
[ "$MEMORY_MIB" -ge 128 ] || die "--memory-mib must be at least 128, got $MEMORY_MIB"
check_namespace "$NAMESPACE"
[[ $SECRET_KEY =~ ^[A-Za-z0-9._-]{1,253}$ ]] ||
    die "--secret-key '$SECRET_KEY' must be a file name of [A-Za-z0-9._-]"
if ! [[ $CPU =~ ^([1-9][0-9]{0,2}(\.[0-9]{1,3})?|0\.[0-9]{0,2}[1-9][0-9]{0,2}|[1-9][0-9]{0,5}m)$ ]]; then
    die "--cpu must be a CPU quantity like 1, 0.5 or 500m, got '$CPU'"
fi
if [ -n "$TRUST_CA" ]; then
    [[ $TRUST_CA =~ ^[A-Za-z0-9._-]{1,253}$ ]] ||
        die "--trust-ca '$TRUST_CA' must be a file name of [A-Za-z0-9._-] (a key of the Secret)"
    [ "$TRUST_CA" != "$SECRET_KEY" ] || die "--trust-ca '$TRUST_CA' is the private key's file name (--secret-key)"
fi
url_re='^https?://[][A-Za-z0-9._:-]+(/[A-Za-z0-9._~/-]*)?$'
[ -z "$STAGE_ENDPOINT" ] || [[ $STAGE_ENDPOINT =~ $url_re ]] ||
    die "--stage-endpoint must be a URL like https://127.0.0.1:9000, got '$STAGE_ENDPOINT'"
if [ -n "$API_ENDPOINT" ]; then
    [ "$BARRIER" = 1 ] || die "--api-endpoint is where the pods reach the API server for --start-barrier: give both, or neither"
    [[ $API_ENDPOINT =~ ^[A-Za-z0-9.-]+:[0-9]{1,5}$ ]] ||
        die "--api-endpoint must be HOST:PORT like 127.0.0.1:6443, got '$API_ENDPOINT'"
fi
case "$ARCH" in arm64 | amd64) ;; *) die "--arch must be arm64 or amd64, got '$ARCH'" ;; esac
case "$SS_LOG_LEVEL" in
    trace | debug | info | warn | error | off) ;;
    *) die "--log-level must be one of trace, debug, info, warn, error, off; got '$SS_LOG_LEVEL'" ;;
esac
check_image_and_secret
check_snowflake_settings
[ -r "$SDK_PROPERTIES_FILE" ] || die "--sdk-properties: cannot read '$SDK_PROPERTIES_FILE'"
if command -v python3 >/dev/null; then
    python3 - "$SDK_PROPERTIES_FILE" <<'PY' || die "--sdk-properties '$SDK_PROPERTIES_FILE' must be a JSON object"
import json, sys
with open(sys.argv[1]) as f:
    sys.exit(0 if isinstance(json.load(f), dict) else 1)
PY
fi
check_required

# --- derived values
# A DNS-1123 Job name from the run id; the pods add "-<index>-<random>" to it.
JOB_NAME=$(dns_name elastic "$RUN_ID")
# These are read by render (lib/common.sh) through ${!name}, which shellcheck cannot see.
# shellcheck disable=SC2034
ACTIVE_DEADLINE_SECONDS=$((DURATION_SECONDS + 900))
# The SDK's process memory throttle follows the pod's memory when --memory-mib is given.
SDK_PROPERTIES=$(<"$SDK_PROPERTIES_FILE")
if [ "$MEMORY_GIVEN" = 1 ]; then
    SDK_PROPERTIES=$(sed -E "s/(\"mem_throttle_threshold_mb_by_process\"[[:space:]]*:[[:space:]]*\")[0-9]+\"/\1$((MEMORY_MIB * 3 / 4))\"/" <<<"$SDK_PROPERTIES")
fi
# shellcheck disable=SC2034
SDK_PROPERTIES_INDENTED="    ${SDK_PROPERTIES//$'\n'/$'\n'    }"
# The worker's tuning flags, as lines of the container's args (none when left default).
WORKER_TUNING_ARGS=""
add_arg() { WORKER_TUNING_ARGS+=$'\n'"            - \"$1\""$'\n'"            - \"$2\""; }
if [ -n "$SCENARIO" ]; then
    WORKER_TUNING_ARGS=$SCENARIO_ARGS # the stages and the rest, overrides applied
else
    [ "$CHANNELS" = 1 ] || add_arg --channels "$CHANNELS"
    [ -z "$MAX_INFLIGHT_BYTES" ] || add_arg --max-inflight-bytes "$MAX_INFLIGHT_BYTES"
    WORKER_TUNING_ARGS+=$WORKLOAD_ARGS
fi
# --host-network, --trust-ca, --stage-endpoint: lines of the pod spec (6 spaces in) and
# of the ConfigMap's data (2 spaces in); a comment when not given. Read by render.
# shellcheck disable=SC2034
HOST_NETWORK_LINES="      # no --host-network: the pods have their own network"
if [ "$HOST_NETWORK" = 1 ]; then
    # shellcheck disable=SC2034
    HOST_NETWORK_LINES="      hostNetwork: true
      dnsPolicy: ClusterFirstWithHostNet"
fi
ENDPOINT_LINES="  # no --trust-ca, no --stage-endpoint: the account's own (public CAs, its stage)"
if [ -n "$TRUST_CA$STAGE_ENDPOINT" ]; then
    ENDPOINT_LINES=""
    if [ -n "$TRUST_CA" ]; then
        ENDPOINT_LINES+="  SSL_CERT_FILE: \"/var/run/secrets/snowflake/$TRUST_CA\"
  AWS_CA_BUNDLE: \"/var/run/secrets/snowflake/$TRUST_CA\""
    fi
    if [ -n "$STAGE_ENDPOINT" ]; then
        [ -z "$ENDPOINT_LINES" ] || ENDPOINT_LINES+=$'\n'
        ENDPOINT_LINES+="  AWS_ENDPOINT_URL: \"$STAGE_ENDPOINT\"
  AWS_ENDPOINT_URL_S3: \"$STAGE_ENDPOINT\""
    fi
fi
# --start-barrier: the pods' ServiceAccount and readiness probe, and the worker's flags
# (lines of the pod spec, 6 spaces in, and of the container, 10); comments when off.
# shellcheck disable=SC2034
BARRIER_POD_LINES="      # no --start-barrier: each pod starts on its own (or at --start-at)"
# shellcheck disable=SC2034
BARRIER_PROBE_LINES="          # no --start-barrier: no readiness probe"
MANIFESTS=("$TEMPLATES/configmap.yaml" "$TEMPLATES/job.yaml")
if [ "$BARRIER" = 1 ]; then
    # shellcheck disable=SC2034
    BARRIER_POD_LINES="      serviceAccountName: $JOB_NAME-start"
    # shellcheck disable=SC2034
    BARRIER_PROBE_LINES="          # Ready once its channel is open: the run starts when every pod is.
          readinessProbe:
            exec:
              command: [\"test\", \"-f\", \"/tmp/ready\"]
            periodSeconds: 1"
    add_arg --ready-file /tmp/ready
    add_arg --start-configmap "$NAMESPACE/$JOB_NAME-start"
    MANIFESTS=("$TEMPLATES/start.yaml" "${MANIFESTS[@]}")
fi
if [ -n "$API_ENDPOINT" ]; then # ahead of the Service's variables, which the kubelet adds after
    [[ $ENDPOINT_LINES == "  #"* ]] && ENDPOINT_LINES="" || ENDPOINT_LINES+=$'\n'
    ENDPOINT_LINES+="  KUBERNETES_SERVICE_HOST: \"${API_ENDPOINT%:*}\"
  KUBERNETES_SERVICE_PORT: \"${API_ENDPOINT##*:}\""
fi
# A workload file: the ConfigMap's key mounted read-only where the pods' --workload reads
# it.
workload_mount "$JOB_NAME"
NAMES=(RUN_ID JOB_NAME NAMESPACE WORKERS TARGET_BPS DURATION_SECONDS IMAGE ARCH
    ACTIVE_DEADLINE_SECONDS SECRET_NAME SECRET_KEY SS_LOG_LEVEL SNOWFLAKE_ACCOUNT
    SNOWFLAKE_HOST_LINE SNOWFLAKE_USER SNOWFLAKE_ROLE_LINE SNOWFLAKE_DATABASE SNOWFLAKE_SCHEMA
    SNOWFLAKE_PIPE SDK_PROPERTIES_INDENTED WORKER_TUNING_ARGS MEMORY_MIB SCENARIO_DATA_LINE
    WORKLOAD_DATA_LINE WORKLOAD_MOUNT_LINES WORKLOAD_VOLUME_LINES CPU HOST_NETWORK_LINES
    ENDPOINT_LINES BARRIER_POD_LINES BARRIER_PROBE_LINES)
print_manifests_if_dry_run

need_secret "(that is: kubectl create secret generic $SECRET_NAME --namespace $NAMESPACE --from-file=$SECRET_KEY=./rsa_key.p8)"
if kubectl get job "$JOB_NAME" --namespace "$NAMESPACE" >/dev/null 2>&1; then
    die "Job '$JOB_NAME' already exists in '$NAMESPACE': pick a new RUN_ID, or delete it with
  kubectl delete job $JOB_NAME --namespace $NAMESPACE"
fi
manifests | kubectl apply --namespace "$NAMESPACE" -f -
echo "run_job: started $WORKERS workers as job/$JOB_NAME in namespace $NAMESPACE" >&2
[ -z "$WORKLOAD_SOURCE" ] ||
    echo "run_job: workload $WORKLOAD_SOURCE, to pipe $SNOWFLAKE_PIPE (made by: elastic-channels setup --workload $WORKLOAD_SOURCE)" >&2
echo "run_job: follow: kubectl logs -n $NAMESPACE -l elastic-channels/run-id=$RUN_ID -f --prefix --max-log-requests $((WORKERS + 5))" >&2
# --wait: until the Job is Complete (exit 0) or Failed (one failed index fails it:
# backoffLimitPerIndex 0), or a pod cannot start (its image cannot be pulled, its
# Secret or ConfigMap is missing) for START_GRACE_SECONDS: one line naming the pod and
# why, instead of waiting out the Job's deadline.
wait_for_job() {
    local deadline=$((SECONDS + ACTIVE_DEADLINE_SECONDS + 60)) state name reason message
    local grace=${START_GRACE_SECONDS:-120}
    declare -A stuck_since=()
    [[ $grace =~ ^[0-9]{1,5}$ ]] || die "START_GRACE_SECONDS must be whole seconds, got '$grace'"
    while [ "$SECONDS" -lt "$deadline" ]; do
        state=$(kubectl get job "$JOB_NAME" --namespace "$NAMESPACE" -o \
            jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}') ||
            die "cannot read job/$JOB_NAME in '$NAMESPACE'"
        case " $state " in
            *" Complete "*)
                echo "run_job: job/$JOB_NAME complete" >&2
                return 0
                ;;
            *" Failed "*)
                die "job/$JOB_NAME failed: $(kubectl get job "$JOB_NAME" --namespace "$NAMESPACE" -o \
                    jsonpath='{range .status.conditions[?(@.type=="Failed")]}{.reason}: {.message}{end}; failed indexes: {.status.failedIndexes}')"
                ;;
        esac
        while IFS=$'\t' read -r name reason message; do
            case "$reason" in
                ErrImagePull | ImagePullBackOff | InvalidImageName | ErrImageNeverPull | \
                    CreateContainerConfigError | CreateContainerError)
                    : "${stuck_since[$name]:=$SECONDS}"
                    [ $((SECONDS - stuck_since[$name])) -lt "$grace" ] ||
                        die "pod $name cannot start: $reason: $message (delete the run: kubectl delete job $JOB_NAME --namespace $NAMESPACE)"
                    ;;
                *) unset "stuck_since[$name]" ;;
            esac
        done < <(kubectl get pods --namespace "$NAMESPACE" -l "batch.kubernetes.io/job-name=$JOB_NAME" -o \
            jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.containerStatuses[0].state.waiting.reason}{"\t"}{.status.containerStatuses[0].state.waiting.message}{"\n"}{end}')
        sleep 5
    done
    die "job/$JOB_NAME neither completed nor failed within its deadline and a minute"
}
# --start-barrier: once every pod is Ready (its channel open), or at the start delay,
# the run's start goes into the ConfigMap the pods watch: a window boundary a few
# seconds ahead, so the fleet's first window counts every pod.
release_start() {
    local ready=0 deadline=$((SECONDS + START_DELAY_SECONDS)) window=5 now start said=-1
    [ -z "$SCENARIO" ] || window=$SCENARIO_WINDOW_SECONDS # the scenario's (k8s_scenario)
    [[ $window =~ ^[1-9][0-9]*$ ]] || window=1 # a window under a second: a whole second
    while [ "$SECONDS" -lt "$deadline" ]; do
        ready=$(kubectl get pods --namespace "$NAMESPACE" -l "batch.kubernetes.io/job-name=$JOB_NAME" -o \
            jsonpath='{range .items[*]}{range .status.conditions[?(@.type=="Ready")]}{.status}{"\n"}{end}{end}' |
            grep -c '^True$' || true)
        [ "$ready" -ge "$WORKERS" ] && break
        if [ "$ready" != "$said" ]; then
            echo "run_job: $ready of $WORKERS pods ready (channel open); the start waits for all" >&2
            said=$ready
        fi
        sleep 1
    done
    [ "$ready" -ge "$WORKERS" ] ||
        echo "run_job: only $ready of $WORKERS pods ready after ${START_DELAY_SECONDS}s: starting without the rest (they join the schedule where it stands)" >&2
    now=$(date +%s)
    start=$(((now + 3 + window - 1) / window * window))
    kubectl patch configmap "$JOB_NAME-start" --namespace "$NAMESPACE" --type merge \
        -p "{\"data\":{\"start_at\":\"$start\"}}" >/dev/null ||
        die "cannot write the start into configmap/$JOB_NAME-start"
    echo "run_job: $ready of $WORKERS pods ready; the run starts at $start (in $((start - now)) s)" >&2
}
if [ "$BARRIER" = 1 ]; then
    release_start
fi
if [ "$WAIT" = 1 ]; then
    wait_for_job
fi
