#!/usr/bin/env bash
# Create (or update) the Kubernetes Secret that holds the Snowflake private key the
# workers and the monitor authenticate with. The key never enters a manifest or a
# ConfigMap: the pods mount this Secret read-only.
#
#   deploy/create_secret.sh [--key-file FILE] [--namespace NS] [--secret NAME] [--dry-run]
#
# Options:
#   --key-file FILE   the user's private key: unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY")
#                     [SNOWFLAKE_PRIVATE_KEY_FILE]
#   --namespace NS    [K8S_NAMESPACE; default]; created when missing
#   --secret NAME     [K8S_SECRET; snowflake-key]
#   --dry-run         check the key file, print the commands; run nothing
#   -h, --help        this text
#
# The key is stored under the file name rsa_key.p8, where run_job.sh and
# deploy_monitor.sh look for it. An encrypted or PKCS#1 key is refused with the
# openssl command that converts it. A real run needs kubectl and the cluster.
# Settings come from the options, the environment, then .env (see .env.example).
set -euo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
help_if_asked "$@"
load_env

SNOWFLAKE_PRIVATE_KEY_FILE=${SNOWFLAKE_PRIVATE_KEY_FILE:-}
NAMESPACE=${K8S_NAMESPACE:-default}
SECRET=${K8S_SECRET:-snowflake-key}
SECRET_KEY=rsa_key.p8

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --key-file | --namespace | --secret)
            take_value "$@"
            case "$1" in
                --key-file) SNOWFLAKE_PRIVATE_KEY_FILE=$2 ;;
                --namespace) NAMESPACE=$2 ;;
                --secret) SECRET=$2 ;;
            esac
            shift
            ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

check_namespace "$NAMESPACE"
[[ $SECRET =~ ^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$ ]] || die "--secret '$SECRET' is not a valid Kubernetes Secret name"
require SNOWFLAKE_PRIVATE_KEY_FILE "--key-file or SNOWFLAKE_PRIVATE_KEY_FILE: the PKCS#8 PEM private key"
KEY_FILE=$SNOWFLAKE_PRIVATE_KEY_FILE
if ! is_placeholder "$KEY_FILE"; then
    { [ -f "$KEY_FILE" ] && [ -r "$KEY_FILE" ]; } || die "--key-file '$KEY_FILE' is not a readable file"
    first=$(head -1 "$KEY_FILE" | tr -d '\r')
    case "$first" in
        "-----BEGIN PRIVATE KEY-----") ;;
        "-----BEGIN ENCRYPTED PRIVATE KEY-----")
            die "--key-file '$KEY_FILE' is encrypted; the worker needs an unencrypted PKCS#8 key:
  openssl pkcs8 -in '$KEY_FILE' -out rsa_key.p8 -nocrypt"
            ;;
        "-----BEGIN RSA PRIVATE KEY-----")
            die "--key-file '$KEY_FILE' is a PKCS#1 RSA key; convert it to PKCS#8:
  openssl pkcs8 -topk8 -nocrypt -in '$KEY_FILE' -out rsa_key.p8"
            ;;
        *) die "--key-file '$KEY_FILE' is not a PEM private key (its first line should be -----BEGIN PRIVATE KEY-----)" ;;
    esac
    grep -q -- '-----END PRIVATE KEY-----' "$KEY_FILE" || die "--key-file '$KEY_FILE' has no END PRIVATE KEY line"
fi
check_required

need_tools kubectl
# `create --dry-run=client -o yaml | apply` creates or updates, so running this again
# replaces the key.
if [ "$NAMESPACE" != default ]; then
    run_line "$(quoted kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml) | kubectl apply -f -"
fi
run_line "$(quoted kubectl create secret generic "$SECRET" --namespace "$NAMESPACE" "--from-file=$SECRET_KEY=$KEY_FILE" --dry-run=client -o yaml) | $(quoted kubectl label --local -f - app.kubernetes.io/part-of=elastic-native -o yaml) | kubectl apply -f -"
