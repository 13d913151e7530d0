#!/usr/bin/env bash
# Build the worker image for linux/arm64 (Graviton) and linux/amd64 from the Dockerfile
# and push it: to Amazon ECR by default (the repository is created when missing), or
# to any registry with --registry. The image holds this project's wheel and
# snowpipe-streaming 1.9.1 from PyPI for each platform.
#
#   deploy/build_and_push.sh [--registry HOST[/PATH]] [--tag TAG] [--dry-run]
#
# Options:
#   --registry R      push to R instead of ECR [REGISTRY]; log in to it first
#                     (docker login R)
#   --name NAME       repository name [IMAGE_NAME; elastic-native]
#   --tag TAG         image tag [IMAGE_TAG; the package version in pyproject.toml]
#   --platforms LIST  [PLATFORMS; linux/arm64,linux/amd64]. The Job schedules on arm64
#                     nodes by default (WORKER_ARCH), so keep linux/arm64 in the list.
#   --region REGION   ECR region [AWS_REGION; us-west-2]
#   --dry-run         print the commands; run nothing
#   -h, --help        this text
#
# ECR's account is AWS_ACCOUNT_ID, or else the one `aws sts get-caller-identity` names.
# A real run needs docker with buildx (and aws for ECR). The build stage cross-compiles,
# so a multi-platform build needs no emulation. Without Docker,
# scripts/build_image.sh builds the same Dockerfile locally with buildah.
# Then put the printed IMAGE=... line in .env: run_job.sh and deploy_monitor.sh use it.
# Settings come from the options, the environment, then .env (see .env.example).
set -euo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
help_if_asked "$@"
load_env

REG=${REGISTRY:-}
NAME=${IMAGE_NAME:-elastic-native}
TAG=${IMAGE_TAG:-$(project_version)}
PLATFORM_LIST=${PLATFORMS:-linux/arm64,linux/amd64}
REGION=${AWS_REGION:-us-west-2}
BUILDER=elastic-native-builder

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --registry | --name | --tag | --platforms | --region)
            take_value "$@"
            case "$1" in
                --registry) REG=$2 ;;
                --name) NAME=$2 ;;
                --tag) TAG=$2 ;;
                --platforms) PLATFORM_LIST=$2 ;;
                --region) REGION=$2 ;;
            esac
            shift
            ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

[[ $NAME =~ ^[a-z0-9]+([._/-][a-z0-9]+)*$ ]] || die "--name '$NAME' is not a repository name (lowercase)"
[[ $TAG =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "--tag '$TAG' is not an image tag"
[[ $REGION =~ ^[a-z]{2}(-[a-z]+)+-[0-9]$ ]] || die "--region '$REGION' is not an AWS region like us-west-2"
IFS=, read -ra platforms <<<"$PLATFORM_LIST"
for p in "${platforms[@]}"; do
    case "$p" in linux/arm64 | linux/amd64) ;; *)
        die "--platforms: '$p' is not linux/arm64 or linux/amd64"
        ;;
    esac
done
[[ ",$PLATFORM_LIST," == *,linux/arm64,* ]] ||
    note "warning: no linux/arm64 in --platforms: the Job's default arm64 (Graviton) nodes cannot run this image; use run_job.sh --arch amd64"

ecr=0
if [ -z "$REG" ]; then
    ecr=1
    need_tools aws docker
    account=${AWS_ACCOUNT_ID:-}
    if [ -z "$account" ] && [ "$DRY_RUN" = 0 ]; then
        account=$(aws sts get-caller-identity --query Account --output text) ||
            die "could not ask AWS for the account id (aws sts get-caller-identity); set AWS_ACCOUNT_ID or give --registry"
    fi
    if [ -z "$account" ]; then
        say "the AWS account: aws sts get-caller-identity --query Account --output text"
        require AWS_ACCOUNT_ID "or the account aws sts get-caller-identity names, in a real run"
        account=$AWS_ACCOUNT_ID
    elif ! [[ $account =~ ^[0-9]{12}$ ]]; then
        die "AWS_ACCOUNT_ID '$account' is not a 12-digit AWS account id"
    fi
    REG="$account.dkr.ecr.$REGION.amazonaws.com"
else
    need_tools docker
    REG=${REG%/}
    [[ $REG =~ ^[A-Za-z0-9][A-Za-z0-9.:-]*(/[a-z0-9._-]+)*$ ]] || die "--registry '$REG' is not a registry host[/path]"
fi
IMAGE_REF="$REG/$NAME:$TAG"
check_required

if [ "$ecr" = 1 ]; then
    say "ECR: the repository $NAME (created when missing), then docker login"
    run_line "$(quoted aws ecr describe-repositories --region "$REGION" --repository-names "$NAME") >/dev/null 2>&1 || $(quoted aws ecr create-repository --region "$REGION" --repository-name "$NAME" --image-scanning-configuration scanOnPush=true)"
    run_line "$(quoted aws ecr get-login-password --region "$REGION") | $(quoted docker login --username AWS --password-stdin "${REG%%/*}")"
fi
say "a buildx builder that can build for several platforms (docker-container driver)"
run_line "$(quoted docker buildx inspect "$BUILDER") >/dev/null 2>&1 || $(quoted docker buildx create --name "$BUILDER" --driver docker-container)"
run docker buildx build --builder "$BUILDER" --platform "$PLATFORM_LIST" --tag "$IMAGE_REF" --push "$REPO_DIR"
say "for .env (run_job.sh, deploy_monitor.sh):"
if [ "$DRY_RUN" = 1 ]; then
    echo "# IMAGE=$IMAGE_REF"
else
    echo "IMAGE=$IMAGE_REF"
fi
