#!/usr/bin/env bash
# Tear the fleet down: every run's Job and ConfigMap, the monitors and their
# ServiceAccount and Role, and the key Secret (all labelled
# app.kubernetes.io/part-of=elastic-native), then the EKS cluster itself.
#
#   deploy/teardown.sh --yes [--keep-cluster] [--delete-repository] [--drop-allowlist]
#   deploy/teardown.sh --dry-run
#
# Options:
#   --yes                 really delete (a real run refuses without it)
#   --keep-cluster        delete only the Kubernetes objects, keep the cluster
#   --delete-repository   also delete the ECR repository and its images
#                         [IMAGE_NAME; elastic-native]
#   --drop-allowlist      also undo deploy/allowlist.sh (runs it with --remove)
#   --name NAME           cluster [CLUSTER_NAME; elastic-channels]
#   --region REGION       [AWS_REGION; us-west-2]
#   --namespace NS        [K8S_NAMESPACE; default]
#   --dry-run             print the commands; run nothing
#   -h, --help            this text
#
# The Snowflake tables and pipe stay: their rows are the results.
# Settings come from the options, the environment, then .env (see .env.example).
set -euo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
help_if_asked "$@"
load_env

NAME=${CLUSTER_NAME:-elastic-channels}
REGION=${AWS_REGION:-us-west-2}
NAMESPACE=${K8S_NAMESPACE:-default}
REPOSITORY=${IMAGE_NAME:-elastic-native}
YES=0
KEEP_CLUSTER=0
DELETE_REPOSITORY=0
DROP_ALLOWLIST=0

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --yes) YES=1 ;;
        --keep-cluster) KEEP_CLUSTER=1 ;;
        --delete-repository) DELETE_REPOSITORY=1 ;;
        --drop-allowlist) DROP_ALLOWLIST=1 ;;
        --name | --region | --namespace)
            take_value "$@"
            case "$1" in
                --name) NAME=$2 ;;
                --region) REGION=$2 ;;
                --namespace) NAMESPACE=$2 ;;
            esac
            shift
            ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

[[ $NAME =~ ^[A-Za-z][A-Za-z0-9-]{0,99}$ ]] || die "--name '$NAME' is not an EKS cluster name"
[[ $REGION =~ ^[a-z]{2}(-[a-z]+)+-[0-9]$ ]] || die "--region '$REGION' is not an AWS region like us-west-2"
check_namespace "$NAMESPACE"
[[ $REPOSITORY =~ ^[a-z0-9]+([._/-][a-z0-9]+)*$ ]] || die "IMAGE_NAME '$REPOSITORY' is not a repository name"
if [ "$DRY_RUN" = 0 ] && [ "$YES" = 0 ]; then
    what="the Kubernetes objects of elastic-native in namespace $NAMESPACE"
    [ "$KEEP_CLUSTER" = 1 ] || what+=" and the EKS cluster $NAME in $REGION"
    die "this deletes $what; add --yes to go ahead, or --dry-run to see the commands"
fi

tools=(kubectl)
[ "$KEEP_CLUSTER" = 1 ] || tools+=(eksctl)
[ "$DELETE_REPOSITORY" = 0 ] || tools+=(aws)
need_tools "${tools[@]}"

say "the runs, the monitors and the key Secret"
run kubectl delete job,deployment,configmap,secret,rolebinding,role,serviceaccount \
    --namespace "$NAMESPACE" -l app.kubernetes.io/part-of=elastic-native --ignore-not-found --wait
if [ "$DROP_ALLOWLIST" = 1 ]; then
    say "the network rule (and the policy deploy/allowlist.sh made)"
    dry=()
    [ "$DRY_RUN" = 0 ] || dry=(--dry-run)
    bash "$DEPLOY_DIR/allowlist.sh" --remove --cluster "$NAME" --region "$REGION" "${dry[@]}"
fi
if [ "$KEEP_CLUSTER" = 0 ]; then
    say "the cluster, its node groups and its VPC (~15 minutes)"
    run eksctl delete cluster --name "$NAME" --region "$REGION" --wait
fi
if [ "$DELETE_REPOSITORY" = 1 ]; then
    say "the image repository"
    run aws ecr delete-repository --region "$REGION" --repository-name "$REPOSITORY" --force
fi
