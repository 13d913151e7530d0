# shellcheck shell=bash
# Sourced by every script in deploy/: settings from the environment and from a .env
# file, --help from the script's header comment, error and note messages, --dry-run.
#
# Settings (every name is in .env.example at the repository root):
#   the environment wins over .env, .env wins over a script's default; an empty value
#   means "use the default", in the file and in the environment alike. ENV_FILE names
#   another file instead of ./.env (the repository root's); ENV_FILE=/dev/null reads
#   none.

DEPLOY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$DEPLOY_DIR/.." && pwd)
SCRIPT_NAME=$(basename "$0" .sh)
DRY_RUN=0

die() {
    echo "$SCRIPT_NAME: error: $*" >&2
    exit 2
}
note() { echo "$SCRIPT_NAME: $*" >&2; }

# The script's header comment, from line 2 to `set -euo pipefail`, as plain text.
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

# --help anywhere on the command line prints the usage and runs nothing.
help_if_asked() {
    local arg
    for arg in "$@"; do
        case "$arg" in -h | --help)
            usage
            exit 0
            ;;
        esac
    done
}

# KEY=VALUE lines, as python-dotenv reads them: blank lines and `# comments` skipped,
# an optional `export `, values optionally in '' or "", ` #...` after an unquoted value
# is a comment. Nothing in the file is executed. The rule the CLI keeps too
# (python/elastic_channels/env_file.py), so setup and the pods never read one file two
# ways: each key is given once (twice is an error naming both lines), every line is
# KEY=VALUE, a comment or blank, no NUL byte, at most ENV_MAX_BYTES (1 MiB), a regular
# file (or /dev/null).
ENV_MAX_BYTES=1048576
load_env() {
    local file=${ENV_FILE:-$REPO_DIR/.env} line key val n=0 seen=" " first size before
    if [ -n "${ENV_FILE:-}" ] && [ ! -r "$file" ]; then
        die "ENV_FILE '$file' cannot be read"
    fi
    [ -e "$file" ] || return 0
    [ "$file" = /dev/null ] && return 0
    [ -f "$file" ] || die "$file: not a regular file"
    [ -r "$file" ] || die "$file cannot be read"
    # Bytes counted in the C locale, with head, tr and the shell alone (a bare PATH).
    local LC_ALL=C
    size=$(head -c $((ENV_MAX_BYTES + 1)) "$file" | tr '\000' x && echo .)
    [ $((${#size} - 1)) -le "$ENV_MAX_BYTES" ] || die "$file: over the 1 MiB such a file may hold"
    if [ -n "$(tr -dc '\000' <"$file" | tr '\000' x | head -c 1)" ]; then
        # the line of the first NUL: the newlines before it, as \001 once tr swapped them
        before=$(tr '\000\n' '\n\001' <"$file" | head -n 1)
        before=${before//[!$'\001']/}
        die "$file: holds a NUL byte (line $((${#before} + 1)))"
    fi
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        line=${line%$'\r'}
        [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
        [[ $line =~ ^[[:space:]]*(export[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*=[[:space:]]*(.*)$ ]] ||
            die "$file line $n: expected KEY=VALUE, got '$line'"
        key=${BASH_REMATCH[2]}
        val=${BASH_REMATCH[3]}
        if [[ $seen == *" $key:"* ]]; then
            first=${seen#*" $key:"}
            die "$file line $n: $key is given twice (first on line ${first%% *}): give each setting once"
        fi
        seen+="$key:$n "
        if [[ $val =~ ^\"([^\"]*)\"[[:space:]]*(#.*)?$ ]] || [[ $val =~ ^\'([^\']*)\'[[:space:]]*(#.*)?$ ]]; then
            val=${BASH_REMATCH[1]}
        else
            [[ $val == \#* ]] && val=""
            val=${val%%[[:space:]]#*}
            val=${val%"${val##*[![:space:]]}"}
        fi
        [ -n "$val" ] || continue      # an empty value is unset: the default applies
        [ -n "${!key:-}" ] && continue # the environment wins, unless it is empty too
        printf -v "$key" '%s' "$val"
        # shellcheck disable=SC2163  # export the variable whose name is in $key
        export "$key"
    done <"$file"
}

# The package version (pyproject.toml): the image tag unless IMAGE_TAG says otherwise.
project_version() { sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO_DIR/pyproject.toml" | head -1; }

# The registry images go to: REGISTRY, else the ECR registry of AWS_ACCOUNT_ID in
# AWS_REGION; empty when neither is known.
registry() {
    if [ -n "${REGISTRY:-}" ]; then
        echo "${REGISTRY%/}"
    elif [ -n "${AWS_ACCOUNT_ID:-}" ]; then
        echo "$AWS_ACCOUNT_ID.dkr.ecr.${AWS_REGION:-us-west-2}.amazonaws.com"
    fi
}

# The worker image: IMAGE, else <registry>/IMAGE_NAME:IMAGE_TAG; empty when unknown.
image_ref() {
    local reg
    if [ -n "${IMAGE:-}" ]; then
        echo "$IMAGE"
        return
    fi
    reg=$(registry)
    [ -z "$reg" ] || echo "$reg/${IMAGE_NAME:-elastic-native}:${IMAGE_TAG:-$(project_version)}"
}

# Settings a script cannot do without. require NAME "how to give it": when NAME is
# empty it is recorded as missing and set to the placeholder <NAME>, so that a dry run
# can still show everything; check_required then fails a real run, or notes the
# missing names on stderr in a dry run.
MISSING=()
require() {
    local name=$1 how=$2
    if [ -z "${!name:-}" ]; then
        MISSING+=("$name ($how)")
        printf -v "$name" '<%s>' "$name"
    fi
}
is_placeholder() { [[ $1 =~ ^\<[A-Z_]+\>$ ]]; }
check_required() {
    [ "${#MISSING[@]}" -gt 0 ] || return 0
    local m list=""
    for m in "${MISSING[@]}"; do list+=$'\n'"  $m"; done
    if [ "$DRY_RUN" = 1 ]; then
        note "dry run: these settings are not set and are shown as <NAME>:$list"
    else
        die "missing settings:$list
set them in .env (see .env.example), in the environment, or with the options (see --help)"
    fi
}

# A real run needs these programs; a dry run needs none of them.
need_tools() {
    local tool
    [ "$DRY_RUN" = 1 ] && return 0
    for tool in "$@"; do
        command -v "$tool" >/dev/null ||
            die "'$tool' not found on PATH (install it, or use --dry-run to only print the commands)"
    done
}

# run CMD ARGS...: print it, shell-quoted, or run it. A dry run's stdout is thus a
# script a person can read, check (bash -n) and run by hand.
run() {
    if [ "$DRY_RUN" = 1 ]; then
        quoted "$@"
    else
        "$@"
    fi
}
quoted() {
    local out="" arg
    for arg in "$@"; do
        if [[ $arg =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
            out+=" $arg"
        else
            out+=" '${arg//\'/\'\\\'\'}'"
        fi
    done
    printf '%s\n' "${out# }"
}
# run_line 'A | B || C': a command line with pipes or ||, printed as it is or run by
# bash with pipefail. Build it with $(quoted ...) pieces so every value stays one word.
run_line() {
    if [ "$DRY_RUN" = 1 ]; then
        printf '%s\n' "$1"
    else
        bash -o pipefail -c "$1"
    fi
}
# run_with_input TEXT CMD ARGS...: CMD reads TEXT on stdin; a dry run prints it as a
# here-document.
run_with_input() {
    local text=$1
    shift
    if [ "$DRY_RUN" = 1 ]; then
        printf "%s <<'EOF'\n%s\nEOF\n" "$(quoted "$@")" "$text"
    else
        printf '%s\n' "$text" | "$@"
    fi
}
# A comment line in a dry run's script (nothing in a real run).
say() { if [ "$DRY_RUN" = 1 ]; then printf '# %s\n' "$*"; else note "$*"; fi; }

# Values for --flags: `take_value OPT "$@"` checks a value follows the option.
take_value() {
    [ $# -ge 2 ] || die "$1 needs a value"
    [[ $2 != --* ]] || die "$1 needs a value, got the option '$2'"
}

# positive_int NAME VALUE [MAX]: VALUE is a whole number from 1 (to MAX), or an error
# naming the option NAME.
positive_int() {
    [[ $2 =~ ^[1-9][0-9]{0,17}$ ]] || die "$1 must be a positive integer, got '$2'"
    if [ $# -ge 3 ] && [ "$2" -gt "$3" ]; then die "$1 must be at most $3, got $2"; fi
}

# render TEMPLATE NAME...: the template on stdout with every ${NAME} replaced by the
# value of the variable NAME; a ${...} left unfilled is an error. One pass from left to
# right: a value goes in as it is, by plain concatenation (no ${text//pattern/value},
# whose value bash 5.2's patsub_replacement reads for & and backslashes), and is never
# read again for placeholders. So it works whatever shell options its caller set.
render() {
    local file=$1 text out="" name
    shift
    text=$(<"$file")
    while [[ $text =~ \$\{([A-Z_][A-Z0-9_]*)\} ]]; do
        name=${BASH_REMATCH[1]}
        case " $* " in
            *" $name "*) ;;
            *) die "template $file has an unfilled placeholder \${$name}" ;;
        esac
        out+=${text%%"\${$name}"*}${!name}
        text=${text#*"\${$name}"}
    done
    printf '%s\n' "$out$text"
}

# The manifests of a run's pods: the files in MANIFESTS, each rendered with the
# variables named in NAMES (both set by the script), "---" between them.
MANIFESTS=()
NAMES=()
manifests() {
    local file sep=""
    for file in "${MANIFESTS[@]}"; do
        [ -z "$sep" ] || echo "$sep"
        render "$file" "${NAMES[@]}"
        sep=---
    done
}
# A dry run prints the manifests and ends here; a real run goes on.
print_manifests_if_dry_run() {
    [ "$DRY_RUN" = 1 ] || return 0
    manifests
    exit 0
}

# A run id: it is a label value, and names the Job and the monitor.
check_run_id() {
    [ -n "$1" ] || die "RUN_ID is required (the first positional argument; see --help)"
    [[ $1 =~ ^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$ ]] ||
        die "RUN_ID '$1' must be 1-63 chars of [A-Za-z0-9._-], starting and ending alphanumeric (it is a label value)"
}
# dns_name PREFIX RUN_ID: a DNS-1123 object name, short enough for the pods'
# "-<index>-<random>" suffixes.
dns_name() {
    local name suffix
    suffix=$(printf '%s' "$2" | tr 'A-Z._' 'a-z--')
    name="$1-${suffix:0:40}"
    while [ "${name: -1}" = "-" ]; do name=${name%-}; done
    echo "$name"
}

# The connection settings the pods get (a ConfigMap): required ones as placeholders
# in a dry run, each value checked, since it lands in a quoted YAML scalar. Sets
# SNOWFLAKE_ROLE_LINE, the ConfigMap's role line (a comment when no role is set), and
# SNOWFLAKE_HOST_LINE, its host and port override lines (a comment when none is set).
check_snowflake_settings() {
    local pair name val
    require SNOWFLAKE_ACCOUNT "--account or SNOWFLAKE_ACCOUNT, e.g. ORG-ACCOUNT"
    require SNOWFLAKE_USER "--user or SNOWFLAKE_USER"
    require SNOWFLAKE_DATABASE "--database or SNOWFLAKE_DATABASE"
    is_placeholder "$SNOWFLAKE_ACCOUNT" || [[ $SNOWFLAKE_ACCOUNT =~ ^[A-Za-z0-9._-]+$ ]] ||
        die "--account '$SNOWFLAKE_ACCOUNT' must be an account identifier like ORG-ACCOUNT"
    is_placeholder "$SNOWFLAKE_USER" || [[ $SNOWFLAKE_USER =~ ^[A-Za-z0-9._@$-]+$ ]] ||
        die "--user '$SNOWFLAKE_USER' has characters a user name cannot have here"
    for pair in "--role:${SNOWFLAKE_ROLE:-}" "--database:$SNOWFLAKE_DATABASE" \
        "--schema:${SNOWFLAKE_SCHEMA:-}" "--pipe:${SNOWFLAKE_PIPE:-}"; do
        name=${pair%%:*}
        val=${pair#*:}
        if [ -n "$val" ] && ! is_placeholder "$val" && ! [[ $val =~ ^[A-Za-z_][A-Za-z0-9_$]*$ ]]; then
            die "$name '$val' is not a plain Snowflake identifier"
        fi
    done
    # shellcheck disable=SC2034  # read by render through ${!name}
    if [ -n "${SNOWFLAKE_ROLE:-}" ]; then
        SNOWFLAKE_ROLE_LINE="  SNOWFLAKE_ROLE: \"$SNOWFLAKE_ROLE\""
    else
        SNOWFLAKE_ROLE_LINE="  # SNOWFLAKE_ROLE not set: the user's default role"
    fi
    # The pods derive the account URL's host from SNOWFLAKE_ACCOUNT (elastic_channels
    # .account); SNOWFLAKE_HOST and SNOWFLAKE_PORT only override it.
    SNOWFLAKE_HOST_LINE="  # SNOWFLAKE_HOST not set: derived from SNOWFLAKE_ACCOUNT"
    if [ -n "${SNOWFLAKE_HOST:-}" ]; then
        [[ $SNOWFLAKE_HOST =~ ^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$ ]] ||
            die "SNOWFLAKE_HOST '$SNOWFLAKE_HOST' is not a host name"
        SNOWFLAKE_HOST_LINE="  SNOWFLAKE_HOST: \"$SNOWFLAKE_HOST\""
    fi
    if [ -n "${SNOWFLAKE_PORT:-}" ]; then
        if ! [[ $SNOWFLAKE_PORT =~ ^[1-9][0-9]{0,4}$ ]] || [ "$SNOWFLAKE_PORT" -gt 65535 ]; then
            die "SNOWFLAKE_PORT '$SNOWFLAKE_PORT' is not a port number"
        fi
        SNOWFLAKE_HOST_LINE+=$'\n'"  SNOWFLAKE_PORT: \"$SNOWFLAKE_PORT\""
    fi
}

# A Kubernetes namespace name (DNS-1123 label).
check_namespace() {
    [[ $1 =~ ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ ]] ||
        die "--namespace '$1' (K8S_NAMESPACE) is not a valid Kubernetes namespace name (lowercase letters, digits, '-')"
}

# --- What run_job.sh and deploy_monitor.sh share: their pods' settings and options ---
# pod_settings: the defaults of the settings both scripts' pods take, after load_env.
# shellcheck disable=SC2034  # the scripts read these
pod_settings() {
    RUN_ID=""
    IMAGE=$(image_ref)
    NAMESPACE=${K8S_NAMESPACE:-default}
    SNOWFLAKE_ACCOUNT=${SNOWFLAKE_ACCOUNT:-}
    SNOWFLAKE_USER=${SNOWFLAKE_USER:-}
    SNOWFLAKE_ROLE=${SNOWFLAKE_ROLE:-}
    SNOWFLAKE_DATABASE=${SNOWFLAKE_DATABASE:-}
    SNOWFLAKE_SCHEMA=${SNOWFLAKE_SCHEMA:-PUBLIC}
    SECRET_NAME=${K8S_SECRET:-snowflake-key}
    SECRET_KEY=rsa_key.p8
}
# pod_arg ARGS...: takes the first of ARGS when it is RUN_ID or an option both scripts
# have (with its value), and sets TAKEN to how many of ARGS it took; any other option
# is an error.
# shellcheck disable=SC2034  # TAKEN: the scripts read it
pod_arg() {
    local setting
    case "$1" in
        --image) setting=IMAGE ;;
        --namespace) setting=NAMESPACE ;;
        --account) setting=SNOWFLAKE_ACCOUNT ;;
        --user) setting=SNOWFLAKE_USER ;;
        --role) setting=SNOWFLAKE_ROLE ;;
        --database) setting=SNOWFLAKE_DATABASE ;;
        --schema) setting=SNOWFLAKE_SCHEMA ;;
        --secret) setting=SECRET_NAME ;;
        --workload) setting=WORKLOAD_OPTION WORKLOAD_OPTION_GIVEN=1 ;;
        --*) die "unknown option '$1' (see --help)" ;;
        *)
            [ -z "$RUN_ID" ] || die "unexpected argument '$1': RUN_ID is already '$RUN_ID'"
            RUN_ID=$1 TAKEN=1
            return 0
            ;;
    esac
    take_value "$@"
    printf -v "$setting" '%s' "$2"
    TAKEN=2
}

# The pods' image (IMAGE, a placeholder in a dry run when unknown) and the name of the
# Secret holding the private key (SECRET_NAME), checked.
check_image_and_secret() {
    [[ $SECRET_NAME =~ ^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$ ]] ||
        die "--secret '$SECRET_NAME' is not a valid Kubernetes Secret name"
    require IMAGE "--image, IMAGE, or REGISTRY: where deploy/build_and_push.sh pushed the image"
    is_placeholder "$IMAGE" || [[ $IMAGE =~ ^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$ ]] ||
        die "--image '$IMAGE' is not an image reference"
}

# need_secret [HINT]: a real run needs kubectl, and the Secret SECRET_NAME in NAMESPACE;
# else it stops, saying how to make it (and HINT, a line more).
need_secret() {
    need_tools kubectl
    kubectl get secret "$SECRET_NAME" --namespace "$NAMESPACE" >/dev/null 2>&1 ||
        die "Secret '$SECRET_NAME' not found in namespace '$NAMESPACE' (or the cluster is unreachable); create it with:
  deploy/create_secret.sh --namespace $NAMESPACE --secret $SECRET_NAME --key-file ./rsa_key.p8${1:+
  $1}"
}

# --- The workload (run_job.sh, deploy_monitor.sh --workload NAME|FILE) ---------------
# The scripts' option sets WORKLOAD_OPTION and WORKLOAD_OPTION_GIVEN=1. check_workload
# (fleet/k8s_workload.py) then sets what the pods get:
#   WORKLOAD_ARGS        "--workload" and its value as lines of a container's args or
#                        command (12 spaces in); empty for no workload
#   WORKLOAD_ARG         that value: a shipped name, or where the pods read the file
#   WORKLOAD_PIPE        the workload's pipe (empty for no workload: resort-sales)
#   WORKLOAD_DATA_LINE   the ConfigMap's workload.yaml key, a file's text as it is (a
#                        comment line when there is none)
#   WORKLOAD_MOUNT_DIR, WORKLOAD_KEY   where the pods mount that key (empty: no file)
#   WORKLOAD_SOURCE      the workload as given
# shellcheck disable=SC2034  # the scripts read these (render through ${!name})
{
    WORKLOAD_OPTION=""
    WORKLOAD_OPTION_GIVEN=0
    WORKLOAD_WHERE=--workload
    WORKLOAD_ARGS=""
    WORKLOAD_ARG=""
    WORKLOAD_PIPE=""
    WORKLOAD_DATA_LINE="  # no workload given: resort-sales rows"
    WORKLOAD_MOUNT_DIR=""
    WORKLOAD_KEY=""
    WORKLOAD_SOURCE=""
}

# choose_workload USE_SETTING: the workload is --workload's value, else (when
# USE_SETTING is 1) the WORKLOAD setting's; WORKLOAD_WHERE names where it came from.
choose_workload() {
    [ "$WORKLOAD_OPTION_GIVEN" = 0 ] || [ -n "$WORKLOAD_OPTION" ] ||
        die "--workload needs a shipped workload's name or a workload file"
    WORKLOAD_WHERE=--workload
    if [ "$WORKLOAD_OPTION_GIVEN" = 0 ] && [ "$1" = 1 ] && [ -n "${WORKLOAD:-}" ]; then
        WORKLOAD_OPTION=$WORKLOAD WORKLOAD_WHERE=WORKLOAD
    fi
}

# check_workload: the chosen workload checked here with the package's own loader (a bad
# file stops the script, naming file, line, column and key, before anything is
# rendered), and the WORKLOAD_* variables above set from it. No workload: nothing to do.
check_workload() {
    local assignments
    [ -n "$WORKLOAD_OPTION" ] || return 0
    command -v python3 >/dev/null ||
        die "$WORKLOAD_WHERE needs python3 with the elastic_channels package (pip install .)"
    # Prints NAME='value' lines (shlex-quoted) or, on a bad workload, says why on stderr.
    assignments=$(python3 -m elastic_channels.fleet.k8s_workload "$WORKLOAD_OPTION" --where="$WORKLOAD_WHERE") ||
        die "$WORKLOAD_WHERE '$WORKLOAD_OPTION' cannot be used (see above)"
    eval "$assignments"
}

# workload_mount CONFIGMAP: sets WORKLOAD_MOUNT_LINES (a container's volumeMounts item,
# 12 spaces in) and WORKLOAD_VOLUME_LINES (a pod's volumes item, 8 spaces in) that mount
# the ConfigMap's workload key read-only at WORKLOAD_MOUNT_DIR; comment lines when there
# is no workload file.
workload_mount() {
    # shellcheck disable=SC2034  # read by render through ${!name}
    WORKLOAD_MOUNT_LINES="            # no workload file to mount"
    # shellcheck disable=SC2034
    WORKLOAD_VOLUME_LINES="        # no workload file to mount"
    [ -n "$WORKLOAD_MOUNT_DIR" ] || return 0
    [[ $WORKLOAD_MOUNT_DIR =~ ^/[A-Za-z0-9/._-]+$ && $WORKLOAD_KEY =~ ^[A-Za-z0-9._-]+$ ]] ||
        die "unexpected workload mount '$WORKLOAD_MOUNT_DIR' '$WORKLOAD_KEY'"
    # shellcheck disable=SC2034
    WORKLOAD_MOUNT_LINES="            - name: workload
              mountPath: $WORKLOAD_MOUNT_DIR
              readOnly: true"
    # shellcheck disable=SC2034
    WORKLOAD_VOLUME_LINES="        - name: workload
          configMap:
            name: $1
            items:
              - key: $WORKLOAD_KEY
                path: $WORKLOAD_KEY
            defaultMode: 0444"
}
