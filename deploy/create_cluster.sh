#!/usr/bin/env bash
# Create the EKS cluster the fleet runs on, from deploy/eks/cluster.yaml, with eksctl:
# a Graviton (arm64) worker node group of m7g.8xlarge (31 one-vCPU workers per node,
# tainted so only workers land there) and a small system node group for the add-ons
# and the monitor. eksctl also writes the cluster's entry into ~/.kube/config.
#
#   deploy/create_cluster.sh [--name NAME] [--region REGION] [--nodes N] [--dry-run]
#
# Options:
#   --name NAME       cluster name [CLUSTER_NAME; elastic-channels]
#   --region REGION   AWS region [AWS_REGION; us-west-2]
#   --nodes N         worker nodes to start with, 0 up to the node group's maxSize
#                     [WORKER_NODES; 1]; 455 workers need 15
#   --dry-run         print the eksctl config and the commands; run nothing
#   -h, --help        this text
#
# A real run needs eksctl, kubectl and AWS credentials, and takes ~20 minutes. Later:
#   eksctl scale nodegroup --cluster NAME --region REGION --name workers-m7g --nodes N
# Settings come from the options, the environment, then .env (see .env.example).
set -euo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
help_if_asked "$@"
load_env

CONFIG="$DEPLOY_DIR/eks/cluster.yaml"
NAME=${CLUSTER_NAME:-elastic-channels}
REGION=${AWS_REGION:-us-west-2}
NODES=${WORKER_NODES:-1}
WORKER_GROUP=workers-m7g

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --name | --region | --nodes)
            take_value "$@"
            case "$1" in
                --name) NAME=$2 ;;
                --region) REGION=$2 ;;
                --nodes) NODES=$2 ;;
            esac
            shift
            ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

[[ $NAME =~ ^[A-Za-z][A-Za-z0-9-]{0,99}$ ]] ||
    die "--name '$NAME' is not an EKS cluster name (a letter, then letters, digits, '-')"
[[ $REGION =~ ^[a-z]{2}(-[a-z]+)+-[0-9]$ ]] || die "--region '$REGION' is not an AWS region like us-west-2"
[[ $NODES =~ ^[0-9]{1,3}$ ]] || die "--nodes must be a whole number, got '$NODES'"
max=$(awk -v g="$WORKER_GROUP" '
    /^  - name: / { inside = ($3 == g) }
    inside && /^    maxSize:/ { print $2; exit }' "$CONFIG")
[[ $max =~ ^[0-9]+$ ]] || die "$CONFIG has no maxSize for the node group $WORKER_GROUP"
[ "$NODES" -le "$max" ] || die "--nodes $NODES is more than the node group's maxSize ($max) in $CONFIG"

# cluster.yaml with metadata.name, metadata.region and the worker group's
# desiredCapacity replaced; each must be found exactly once.
rendered=$(awk -v name="$NAME" -v region="$REGION" -v nodes="$NODES" -v g="$WORKER_GROUP" '
    /^[a-zA-Z]/ { meta = ($0 == "metadata:") }
    meta && /^  name: /   { $0 = "  name: " name; n++ }
    meta && /^  region: / { $0 = "  region: " region; r++ }
    /^  - name: / { inside = ($3 == g) }
    inside && /^    desiredCapacity: / { $0 = "    desiredCapacity: " nodes; d++ }
    { print }
    END { if (n != 1 || r != 1 || d != 1) exit 3 }' "$CONFIG") ||
    die "$CONFIG: expected one metadata name, one region and one desiredCapacity for $WORKER_GROUP"

need_tools eksctl kubectl
say "EKS cluster $NAME in $REGION: $NODES x m7g.8xlarge workers ($((NODES * 31)) worker pods) + the system group"
run_with_input "$rendered" eksctl create cluster -f -
run kubectl get nodes -L kubernetes.io/arch,node.kubernetes.io/instance-type,elastic-channels/role
