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
# is a comment. Nothing in the file is executed.
load_env() {
    local file=${ENV_FILE:-$REPO_DIR/.env} line key val n=0
    if [ -n "${ENV_FILE:-}" ] && [ ! -r "$file" ]; then
        die "ENV_FILE '$file' cannot be read"
    fi
    [ -r "$file" ] || return 0
    while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        line=${line%$'\r'}
        [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
        [[ $line =~ ^[[:space:]]*(export[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*=[[:space:]]*(.*)$ ]] ||
            die "$file line $n: expected KEY=VALUE, got '$line'"
        key=${BASH_REMATCH[2]}
        val=${BASH_REMATCH[3]}
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

# render TEMPLATE NAME...: the template on stdout with every ${NAME} replaced by the
# value of the variable NAME; a ${...} left unfilled is an error.
render() {
    local text name file=$1
    shift
    text=$(<"$file")
    for name in "$@"; do
        text=${text//\$\{$name\}/${!name}}
    done
    if [[ $text =~ \$\{[A-Z_]+\} ]]; then
        die "template $file has an unfilled placeholder ${BASH_REMATCH[0]}"
    fi
    printf '%s\n' "$text"
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
