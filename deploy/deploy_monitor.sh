#!/usr/bin/env bash
# Deploy the monitor of one run: a Deployment (one pod) that runs
#   elastic-channels monitor --k8s --run-id RUN_ID [--workload NAME|PATH] [--workers N]
# in the worker image, with a ServiceAccount whose Role may only list and watch the
# namespace's pods and read their logs. It tails the workers' JSON lines and writes
# throughput and latency windows to ELASTIC_K8S_METRICS in SNOWFLAKE_DATABASE. Give it
# the run's workload (--workload): it reads that workload's landing table.
#
#   deploy/deploy_monitor.sh RUN_ID [--workers N [--duration-seconds D]]
#                            [--workload NAME|FILE] [--image IMAGE] [--namespace NS] [--dry-run]
#   deploy/deploy_monitor.sh iot-1 --workers 2 --duration-seconds 60 --workload my-rows.yaml \
#       --dry-run
#
# Required:
#   RUN_ID                  the run to follow (as given to run_job.sh)
#   the image and --account, --user, --database, as for run_job.sh
# Options:
#   --workers N             the run's pods (as given to run_job.sh, 1..10000): a fleet
#                           window waits for N workers (or the grace period), and the
#                           pod is sized for N log streams and their windows (below)
#   --duration-seconds D    how long the workers send [600], for the memory: the monitor
#                           holds a worker window line in full (~5 KiB, measured 4.3 KiB)
#                           until the grace period (10 s) + 60 s after its end, then a
#                           12-byte stub of it; so it needs N x ((70 / W + 2) x 5 KiB
#                           + D / W x 12 B + 64 KiB a log stream) + 256 MiB; the limit
#                           is twice the request
#   --window-seconds W      the workers' window length [5]
#                           Without --workers: 256Mi requested, 512Mi limit, 250m CPU.
#   --workload NAME|FILE    the run's rows, the same as run_job.sh was given (its
#                           --workload, WORKLOAD, or its scenario's workload key) [WORKLOAD;
#                           resort-sales]: the monitor reads that workload's table (for
#                           ingest-to-visible and the rows lost) by its columns. A shipped
#                           name is passed as it is; a file is checked here, its text goes
#                           in the monitor's ConfigMap (key workload.yaml), mounted
#                           read-only at /etc/elastic-channels/workload.yaml, and the
#                           monitor gets that path. Needs the elastic_channels package
#                           here (pip install .)
#   --image IMAGE           [IMAGE, or REGISTRY (+ IMAGE_NAME, IMAGE_TAG)]
#   --namespace NS          [K8S_NAMESPACE; default]
#   --account A, --user U, --role R, --database DB, --schema S
#                           [SNOWFLAKE_ACCOUNT, SNOWFLAKE_USER, SNOWFLAKE_ROLE,
#                           SNOWFLAKE_DATABASE, SNOWFLAKE_SCHEMA; PUBLIC]
#   --warehouse W           for the monitor's SQL [SNOWFLAKE_WAREHOUSE; the user's default]
#   SNOWFLAKE_HOST, SNOWFLAKE_PORT   only to override the account URL the monitor derives
#                           from the account (ACCOUNT.snowflakecomputing.com:443)
#   --secret NAME           Secret holding the private key [K8S_SECRET; snowflake-key]
#   --delete                remove this run's monitor (the Deployment and its ConfigMap)
#   --dry-run               print the manifests kubectl would get; touch no cluster.
#                           Settings that are not given are named on stderr and shown
#                           as <NAME> placeholders.
#   -h, --help              this text
#
# Settings come from the options, the environment, then .env (see .env.example).
set -euo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
help_if_asked "$@"
load_env
TEMPLATES="$DEPLOY_DIR/monitor"

pod_settings # RUN_ID, IMAGE, NAMESPACE, SNOWFLAKE_*, SECRET_NAME, SECRET_KEY
SNOWFLAKE_WAREHOUSE=${SNOWFLAKE_WAREHOUSE:-}
DELETE=0
WORKERS=""
DURATION_SECONDS=600
WINDOW_SECONDS=5
# The monitor's --grace-seconds default and monitor/pruning.py's LATE_MARGIN_S
# (tests/deploy/test_monitor.py checks they agree).
MONITOR_GRACE_S=10
MONITOR_LATE_MARGIN_S=60

while [ $# -gt 0 ]; do
    opt=$1
    case "$opt" in
        --dry-run) DRY_RUN=1 ;;
        --delete) DELETE=1 ;;
        --warehouse | --workers | --duration-seconds | --window-seconds)
            take_value "$@"
            case "$opt" in
                --workers) WORKERS=$2 ;;
                --duration-seconds) DURATION_SECONDS=$2 ;;
                --window-seconds) WINDOW_SECONDS=$2 ;;
                --warehouse) SNOWFLAKE_WAREHOUSE=$2 ;;
            esac
            shift
            ;;
        *)
            pod_arg "$@" # RUN_ID, --image, --account, --workload ... (lib/common.sh)
            shift $((TAKEN - 1))
            ;;
    esac
    shift
done

# The monitor's command line and resources for --workers N (see --help); without it
# the defaults. Its CPU: ~0.6 ms a worker window line (parse, merge, rows; measured),
# twice that requested.
# shellcheck disable=SC2034  # read by render through ${!name}
size_for_workers() {
    local windows full stub_kib mib
    CPU_REQUEST=250m CPU_LIMIT='"1"' MEMORY_REQUEST=256Mi MEMORY_LIMIT=512Mi
    if [ -z "$WORKERS" ]; then
        WORKERS_ARGS="            # no --workers: a window waits for the pods seen so far"
        return 0
    fi
    positive_int --workers "$WORKERS" 10000
    positive_int --duration-seconds "$DURATION_SECONDS" 604800
    positive_int --window-seconds "$WINDOW_SECONDS" 3600
    WORKERS_ARGS=$(printf '            - "--workers"\n            - "%s"' "$WORKERS")
    windows=$(((DURATION_SECONDS + WINDOW_SECONDS - 1) / WINDOW_SECONDS + 2))
    # Held in full: the windows that may still change (monitor.Monitor's prune_after_s).
    full=$(((MONITOR_GRACE_S + MONITOR_LATE_MARGIN_S + WINDOW_SECONDS - 1) / WINDOW_SECONDS + 2))
    [ "$full" -le "$windows" ] || full=$windows
    stub_kib=$(((windows * 12 + 1023) / 1024))
    mib=$((256 + (WORKERS * (full * 5 + stub_kib + 64) + 1023) / 1024))
    MEMORY_REQUEST="${mib}Mi" MEMORY_LIMIT="$((2 * mib))Mi"
    local cpu=$(((WORKERS * 1200 / WINDOW_SECONDS + 999) / 1000))
    [ "$cpu" -gt 250 ] || cpu=250
    CPU_REQUEST="${cpu}m"
    [ "$cpu" -le 500 ] || CPU_LIMIT="\"$((2 * cpu))m\""
}

check_run_id "$RUN_ID"
check_namespace "$NAMESPACE"
# shellcheck disable=SC2034  # read by render through ${!name}
MONITOR_NAME=$(dns_name elastic-monitor "$RUN_ID")
if [ "$DELETE" = 1 ]; then
    need_tools kubectl
    run kubectl delete deployment,configmap --namespace "$NAMESPACE" --ignore-not-found \
        -l "app.kubernetes.io/name=elastic-monitor,elastic-channels/run-id=$RUN_ID"
    exit 0
fi
# The run's workload (--workload, else WORKLOAD), checked here: the monitor reads its
# table. A file goes in the ConfigMap, mounted where the monitor's --workload reads it.
choose_workload 1
check_workload
workload_mount "$MONITOR_NAME"
check_image_and_secret
check_snowflake_settings
if [ -n "$SNOWFLAKE_WAREHOUSE" ]; then
    [[ $SNOWFLAKE_WAREHOUSE =~ ^[A-Za-z_][A-Za-z0-9_$]*$ ]] ||
        die "--warehouse '$SNOWFLAKE_WAREHOUSE' is not a plain Snowflake identifier"
    SNOWFLAKE_WAREHOUSE_LINE="  SNOWFLAKE_WAREHOUSE: \"$SNOWFLAKE_WAREHOUSE\""
else
    # shellcheck disable=SC2034  # read by render through ${!name}
    SNOWFLAKE_WAREHOUSE_LINE="  # SNOWFLAKE_WAREHOUSE not set: the user's default warehouse"
fi
check_required
size_for_workers

NAMES=(RUN_ID MONITOR_NAME NAMESPACE IMAGE SECRET_NAME SECRET_KEY SNOWFLAKE_ACCOUNT
    SNOWFLAKE_HOST_LINE SNOWFLAKE_USER SNOWFLAKE_ROLE_LINE SNOWFLAKE_WAREHOUSE_LINE
    SNOWFLAKE_DATABASE SNOWFLAKE_SCHEMA WORKERS_ARGS CPU_REQUEST CPU_LIMIT MEMORY_REQUEST MEMORY_LIMIT
    WORKLOAD_ARGS WORKLOAD_DATA_LINE WORKLOAD_MOUNT_LINES WORKLOAD_VOLUME_LINES)
MANIFESTS=("$TEMPLATES/rbac.yaml" "$TEMPLATES/deployment.yaml")
print_manifests_if_dry_run

# shellcheck disable=SC2119  # no hint
need_secret
manifests | kubectl apply --namespace "$NAMESPACE" -f -
note "the monitor of run $RUN_ID is deployment/$MONITOR_NAME in namespace $NAMESPACE"
[ -z "$WORKLOAD_SOURCE" ] || note "it reads the table of workload $WORKLOAD_SOURCE"
note "its log: kubectl logs -n $NAMESPACE deployment/$MONITOR_NAME -f"
