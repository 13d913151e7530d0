#!/usr/bin/env bash
# Render the fleet's Kubernetes manifests (an Indexed Job + its ConfigMap) and apply
# them with kubectl, or print them with --dry-run (no cluster needed).
#
#   deploy/run_job.sh RUN_ID --target-bps X --duration-seconds D --workers N \
#       [--image IMAGE] [--namespace NS] [--dry-run] [options]
#
# Required:
#   RUN_ID                  1-63 chars [A-Za-z0-9._-], starting and ending alphanumeric
#   --target-bps X          per-worker target rate, bytes/s (e.g. 92000000)
#   --duration-seconds D    how long each worker sends
#   --workers N             pods = parallelism = completions (1..10000)
#   --account A, --user U, --database DB   [SNOWFLAKE_ACCOUNT, SNOWFLAKE_USER, SNOWFLAKE_DATABASE]
# Options:
#   --image IMAGE           [elastic-native:latest; ELASTIC_IMAGE]
#   --namespace NS          [default; ELASTIC_NAMESPACE]
#   --schema S              [PUBLIC; SNOWFLAKE_SCHEMA]
#   --pipe P                [RESORT_SALES_PIPE; SNOWFLAKE_PIPE]
#   --role R                [SNOWFLAKE_ROLE; omitted when empty]
#   --secret NAME           Secret holding the private key [snowflake-key]
#   --secret-key FILE       the key's file name in that Secret [rsa_key.p8]
#   --sdk-properties FILE   JSON object of SDK client properties [deploy/sdk-properties.json]
#   --arch arm64|amd64      node architecture to schedule on [arm64]
#   --log-level LEVEL       SDK log level, SS_LOG_LEVEL [warn]
#   --wait                  after applying, wait for the Job to finish
#   --dry-run               print the manifests as YAML on stdout; touch no cluster
#   -h, --help
#
# The Secret is made once per namespace, e.g.:
#   kubectl create secret generic snowflake-key --from-file=rsa_key.p8=./rsa_key.p8
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TEMPLATES="$HERE/templates"

die() {
    echo "run_job: error: $*" >&2
    exit 2
}
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

RUN_ID=""
TARGET_BPS=""
DURATION_SECONDS=""
WORKERS=""
IMAGE=${ELASTIC_IMAGE:-elastic-native:latest}
NAMESPACE=${ELASTIC_NAMESPACE:-default}
SNOWFLAKE_ACCOUNT=${SNOWFLAKE_ACCOUNT:-}
SNOWFLAKE_USER=${SNOWFLAKE_USER:-}
SNOWFLAKE_ROLE=${SNOWFLAKE_ROLE:-}
SNOWFLAKE_DATABASE=${SNOWFLAKE_DATABASE:-}
SNOWFLAKE_SCHEMA=${SNOWFLAKE_SCHEMA:-PUBLIC}
SNOWFLAKE_PIPE=${SNOWFLAKE_PIPE:-RESORT_SALES_PIPE}
SECRET_NAME=snowflake-key
SECRET_KEY=rsa_key.p8
SDK_PROPERTIES_FILE="$HERE/sdk-properties.json"
ARCH=arm64
SS_LOG_LEVEL=warn
DRY_RUN=0
WAIT=0

while [ $# -gt 0 ]; do
    opt=$1
    case "$opt" in
        -h | --help)
            usage
            exit 0
            ;;
        --dry-run) DRY_RUN=1 ;;
        --wait) WAIT=1 ;;
        --target-bps | --duration-seconds | --workers | --image | --namespace | --account | \
            --user | --role | --database | --schema | --pipe | --secret | --secret-key | \
            --sdk-properties | --arch | --log-level)
            [ $# -ge 2 ] || die "$opt needs a value"
            val=$2
            [[ $val != --* ]] || die "$opt needs a value, got the option '$val'"
            shift
            case "$opt" in
                --target-bps) TARGET_BPS=$val ;;
                --duration-seconds) DURATION_SECONDS=$val ;;
                --workers) WORKERS=$val ;;
                --image) IMAGE=$val ;;
                --namespace) NAMESPACE=$val ;;
                --account) SNOWFLAKE_ACCOUNT=$val ;;
                --user) SNOWFLAKE_USER=$val ;;
                --role) SNOWFLAKE_ROLE=$val ;;
                --database) SNOWFLAKE_DATABASE=$val ;;
                --schema) SNOWFLAKE_SCHEMA=$val ;;
                --pipe) SNOWFLAKE_PIPE=$val ;;
                --secret) SECRET_NAME=$val ;;
                --secret-key) SECRET_KEY=$val ;;
                --sdk-properties) SDK_PROPERTIES_FILE=$val ;;
                --arch) ARCH=$val ;;
                --log-level) SS_LOG_LEVEL=$val ;;
            esac
            ;;
        --*) die "unknown option '$opt' (see --help)" ;;
        *)
            [ -z "$RUN_ID" ] || die "unexpected argument '$opt': RUN_ID is already '$RUN_ID'"
            RUN_ID=$opt
            ;;
    esac
    shift
done

# --- validation: every value lands inside a quoted YAML scalar, so each is checked
# against what Kubernetes (or the worker) accepts, and can hold no quote or newline.
[ -n "$RUN_ID" ] || die "RUN_ID is required (the first positional argument; see --help)"
[[ $RUN_ID =~ ^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$ ]] ||
    die "RUN_ID '$RUN_ID' must be 1-63 chars of [A-Za-z0-9._-], starting and ending alphanumeric (it is a label value)"
positive_int() { # name value [max]
    [[ $2 =~ ^[1-9][0-9]{0,17}$ ]] || die "$1 must be a positive integer, got '$2'"
    if [ $# -ge 3 ] && [ "$2" -gt "$3" ]; then die "$1 must be at most $3, got $2"; fi
}
[ -n "$TARGET_BPS" ] || die "--target-bps is required (bytes per second per worker)"
positive_int --target-bps "$TARGET_BPS"
[ -n "$DURATION_SECONDS" ] || die "--duration-seconds is required"
positive_int --duration-seconds "$DURATION_SECONDS" 604800
[ -n "$WORKERS" ] || die "--workers is required"
positive_int --workers "$WORKERS" 10000
[[ $NAMESPACE =~ ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ ]] ||
    die "--namespace '$NAMESPACE' is not a valid Kubernetes namespace name"
[[ $SECRET_NAME =~ ^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$ ]] ||
    die "--secret '$SECRET_NAME' is not a valid Kubernetes Secret name"
[[ $SECRET_KEY =~ ^[A-Za-z0-9._-]{1,253}$ ]] ||
    die "--secret-key '$SECRET_KEY' must be a file name of [A-Za-z0-9._-]"
[[ $IMAGE =~ ^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$ ]] ||
    die "--image '$IMAGE' is not an image reference"
case "$ARCH" in arm64 | amd64) ;; *) die "--arch must be arm64 or amd64, got '$ARCH'" ;; esac
case "$SS_LOG_LEVEL" in
    trace | debug | info | warn | error | off) ;;
    *) die "--log-level must be one of trace, debug, info, warn, error, off; got '$SS_LOG_LEVEL'" ;;
esac
[ -n "$SNOWFLAKE_ACCOUNT" ] || die "--account (or SNOWFLAKE_ACCOUNT) is required"
[ -n "$SNOWFLAKE_USER" ] || die "--user (or SNOWFLAKE_USER) is required"
[ -n "$SNOWFLAKE_DATABASE" ] || die "--database (or SNOWFLAKE_DATABASE) is required"
[[ $SNOWFLAKE_ACCOUNT =~ ^[A-Za-z0-9._-]+$ ]] ||
    die "--account '$SNOWFLAKE_ACCOUNT' must be an account identifier like ORG-ACCOUNT"
[[ $SNOWFLAKE_USER =~ ^[A-Za-z0-9._@$-]+$ ]] || die "--user '$SNOWFLAKE_USER' has characters a user name cannot have here"
for pair in "--role:$SNOWFLAKE_ROLE" "--database:$SNOWFLAKE_DATABASE" \
    "--schema:$SNOWFLAKE_SCHEMA" "--pipe:$SNOWFLAKE_PIPE"; do
    name=${pair%%:*}
    val=${pair#*:}
    if [ -n "$val" ] && ! [[ $val =~ ^[A-Za-z_][A-Za-z0-9_$]*$ ]]; then
        die "$name '$val' is not a plain Snowflake identifier"
    fi
done
[ -r "$SDK_PROPERTIES_FILE" ] || die "--sdk-properties: cannot read '$SDK_PROPERTIES_FILE'"
if command -v python3 >/dev/null; then
    python3 - "$SDK_PROPERTIES_FILE" <<'PY' || die "--sdk-properties '$SDK_PROPERTIES_FILE' must be a JSON object"
import json, sys
with open(sys.argv[1]) as f:
    sys.exit(0 if isinstance(json.load(f), dict) else 1)
PY
fi

# --- derived values
# A DNS-1123 Job name from the run id; the pods add "-<index>-<random>" to it.
job_suffix=$(printf '%s' "$RUN_ID" | tr 'A-Z._' 'a-z--')
JOB_NAME="elastic-${job_suffix:0:40}"
while [ "${JOB_NAME: -1}" = "-" ]; do JOB_NAME=${JOB_NAME%-}; done
# These are read by render() through ${!name}, which shellcheck cannot see.
# shellcheck disable=SC2034
ACTIVE_DEADLINE_SECONDS=$((DURATION_SECONDS + 900))
# shellcheck disable=SC2034
SDK_PROPERTIES_INDENTED=$(sed 's/^/    /' "$SDK_PROPERTIES_FILE")
# shellcheck disable=SC2034
if [ -n "$SNOWFLAKE_ROLE" ]; then
    SNOWFLAKE_ROLE_LINE="  SNOWFLAKE_ROLE: \"$SNOWFLAKE_ROLE\""
else
    SNOWFLAKE_ROLE_LINE="  # SNOWFLAKE_ROLE not set: the user's default role"
fi

render() { # template file -> stdout, every ${NAME} replaced
    local text name
    text=$(<"$1")
    for name in RUN_ID JOB_NAME NAMESPACE WORKERS TARGET_BPS DURATION_SECONDS IMAGE ARCH \
        ACTIVE_DEADLINE_SECONDS SECRET_NAME SECRET_KEY SS_LOG_LEVEL SNOWFLAKE_ACCOUNT \
        SNOWFLAKE_USER SNOWFLAKE_ROLE_LINE SNOWFLAKE_DATABASE SNOWFLAKE_SCHEMA SNOWFLAKE_PIPE \
        SDK_PROPERTIES_INDENTED; do
        text=${text//\$\{$name\}/${!name}}
    done
    if [[ $text =~ \$\{[A-Z_]+\} ]]; then
        die "template $1 has an unfilled placeholder ${BASH_REMATCH[0]}"
    fi
    printf '%s\n' "$text"
}

manifests() {
    render "$TEMPLATES/configmap.yaml"
    echo "---"
    render "$TEMPLATES/job.yaml"
}

if [ "$DRY_RUN" = 1 ]; then
    manifests
    exit 0
fi

command -v kubectl >/dev/null || die "kubectl not found (use --dry-run to only print the manifests)"
if ! kubectl get secret "$SECRET_NAME" --namespace "$NAMESPACE" >/dev/null 2>&1; then
    die "Secret '$SECRET_NAME' not found in namespace '$NAMESPACE' (or the cluster is unreachable); create it with:
  kubectl create secret generic $SECRET_NAME --namespace $NAMESPACE --from-file=$SECRET_KEY=./rsa_key.p8"
fi
if kubectl get job "$JOB_NAME" --namespace "$NAMESPACE" >/dev/null 2>&1; then
    die "Job '$JOB_NAME' already exists in '$NAMESPACE': pick a new RUN_ID, or delete it with
  kubectl delete job $JOB_NAME --namespace $NAMESPACE"
fi
manifests | kubectl apply --namespace "$NAMESPACE" -f -
echo "run_job: started $WORKERS workers as job/$JOB_NAME in namespace $NAMESPACE" >&2
echo "run_job: follow: kubectl logs -n $NAMESPACE -l elastic-channels/run-id=$RUN_ID -f --prefix --max-log-requests $((WORKERS + 5))" >&2
if [ "$WAIT" = 1 ]; then
    kubectl wait --namespace "$NAMESPACE" --for=condition=complete "job/$JOB_NAME" \
        --timeout="$((ACTIVE_DEADLINE_SECONDS + 60))s"
fi
