#!/usr/bin/env bash
# Let the cluster's egress addresses through the Snowflake account's network policy.
# The workers leave the VPC through its NAT gateway, so Snowflake sees the gateway's
# public address. This writes the SQL that creates (or updates) a NETWORK RULE holding
# those addresses, and either adds the rule to the policy you name (--policy: the
# account's policy) or creates a policy of its own for the ingest user. Then it runs
# the SQL through the project's setup command: elastic-channels setup --sql-file FILE.
#
#   deploy/allowlist.sh [--ip ADDR]... [--policy NAME] [--dry-run]
#   deploy/allowlist.sh --remove [--policy NAME] [--dry-run]
#
# Options:
#   --ip ADDR         an egress address or CIDR (repeat for more) [EGRESS_IPS, comma
#                     separated]; without one, the public IPs of the cluster's NAT
#                     gateways, asked of AWS (aws eks describe-cluster, aws ec2
#                     describe-nat-gateways)
#   --policy NAME     the network policy the account already enforces: the rule is
#                     added to it [NETWORK_POLICY]. Without it, ELASTIC_EKS_POLICY is
#                     created with the rule and set on the user (SNOWFLAKE_USER); a
#                     user's policy replaces the account's for that user, so add with
#                     --ip every other address that user connects from.
#   --rule NAME       the network rule [ELASTIC_EKS_EGRESS], in SNOWFLAKE_DATABASE.
#                     SNOWFLAKE_SCHEMA (PUBLIC by default)
#   --cluster NAME    [CLUSTER_NAME; elastic-channels]    --region R  [AWS_REGION; us-west-2]
#   --remove          the SQL that undoes it: the rule out of the policy, then dropped
#   --dry-run         print the commands and the SQL; run nothing
#   -h, --help        this text
#
# Network rules and policies need a role that may create them (for example
# SECURITYADMIN with USAGE on the database): SNOWFLAKE_ROLE. Run it again after the
# cluster's addresses change; the rule's list is replaced.
# Settings come from the options, the environment, then .env (see .env.example).
set -euo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
help_if_asked "$@"
load_env

IPS=()
if [ -n "${EGRESS_IPS:-}" ]; then IFS=', ' read -ra IPS <<<"$EGRESS_IPS"; fi
POLICY=${NETWORK_POLICY:-}
RULE=ELASTIC_EKS_EGRESS
OWN_POLICY=ELASTIC_EKS_POLICY
CLUSTER=${CLUSTER_NAME:-elastic-channels}
REGION=${AWS_REGION:-us-west-2}
SNOWFLAKE_DATABASE=${SNOWFLAKE_DATABASE:-}
SCHEMA=${SNOWFLAKE_SCHEMA:-PUBLIC}
SNOWFLAKE_USER=${SNOWFLAKE_USER:-}
REMOVE=0
given_ips=()

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) DRY_RUN=1 ;;
        --remove) REMOVE=1 ;;
        --ip | --policy | --rule | --cluster | --region)
            take_value "$@"
            case "$1" in
                --ip) given_ips+=("$2") ;;
                --policy) POLICY=$2 ;;
                --rule) RULE=$2 ;;
                --cluster) CLUSTER=$2 ;;
                --region) REGION=$2 ;;
            esac
            shift
            ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done
[ "${#given_ips[@]}" -eq 0 ] || IPS=("${given_ips[@]}")

ident() { [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_$]{0,254}$ ]] || die "$1 '$2' is not a plain Snowflake identifier"; }
ident --rule "$RULE"
[ -z "$POLICY" ] || ident --policy "$POLICY"
ident --schema "$SCHEMA"
require SNOWFLAKE_DATABASE "SNOWFLAKE_DATABASE: the database that holds the network rule"
is_placeholder "$SNOWFLAKE_DATABASE" || ident SNOWFLAKE_DATABASE "$SNOWFLAKE_DATABASE"
if [ -z "$POLICY" ]; then
    require SNOWFLAKE_USER "SNOWFLAKE_USER: the user the policy is set on, or give --policy"
    is_placeholder "$SNOWFLAKE_USER" || [[ $SNOWFLAKE_USER =~ ^[A-Za-z0-9_$]+$ ]] ||
        die "SNOWFLAKE_USER '$SNOWFLAKE_USER' is not a plain identifier"
fi
for ip in "${IPS[@]}"; do
    [[ $ip =~ ^([0-9]{1,3}\.){3}[0-9]{1,3}(/([0-9]|[12][0-9]|3[0-2]))?$ ]] ||
        die "--ip '$ip' is not an IPv4 address or CIDR like 203.0.113.7 or 203.0.113.0/28"
done
[[ $CLUSTER =~ ^[A-Za-z][A-Za-z0-9-]{0,99}$ ]] || die "--cluster '$CLUSTER' is not an EKS cluster name"
[[ $REGION =~ ^[a-z]{2}(-[a-z]+)+-[0-9]$ ]] || die "--region '$REGION' is not an AWS region like us-west-2"
QUALIFIED_RULE="$SNOWFLAKE_DATABASE.$SCHEMA.$RULE"

# The egress addresses, asked of AWS unless given.
if [ "$REMOVE" = 0 ] && [ "${#IPS[@]}" -eq 0 ]; then
    need_tools aws
    vpc_cmd=$(quoted aws eks describe-cluster --region "$REGION" --name "$CLUSTER" --query cluster.resourcesVpcConfig.vpcId --output text)
    # shellcheck disable=SC2016  # $vpc is expanded by the shell that runs this line
    nat_cmd='aws ec2 describe-nat-gateways --region '"$REGION"' --filter "Name=vpc-id,Values=$vpc" Name=state,Values=available --query '\''NatGateways[].NatGatewayAddresses[].PublicIp'\'' --output text'
    say "the cluster's egress addresses: the public IPs of its NAT gateways"
    if [ "$DRY_RUN" = 1 ]; then
        # shellcheck disable=SC2016  # a literal $( ) to print
        printf 'vpc=$(%s)\n%s\n' "$vpc_cmd" "$nat_cmd"
        EGRESS_IPS=""
        require EGRESS_IPS "--ip, or what the two aws commands above print in a real run"
        IPS=("$EGRESS_IPS")
    else
        vpc=$(bash -o pipefail -c "$vpc_cmd") || die "could not find the VPC of cluster '$CLUSTER' in $REGION (give --ip)"
        out=$(vpc=$vpc bash -o pipefail -c "$nat_cmd") || die "could not list the NAT gateways of $vpc (give --ip)"
        read -ra IPS <<<"$out"
        [ "${#IPS[@]}" -gt 0 ] || die "no NAT gateway with a public IP in $vpc (cluster '$CLUSTER', $REGION); give --ip"
    fi
fi
check_required

value_list=""
for ip in "${IPS[@]}"; do value_list+="${value_list:+, }'$ip'"; done
if [ "$REMOVE" = 0 ]; then
    sql="-- Let the EKS cluster $CLUSTER ($REGION) reach the account: its egress addresses.
CREATE NETWORK RULE IF NOT EXISTS $QUALIFIED_RULE
  TYPE = IPV4 MODE = INGRESS VALUE_LIST = ($value_list)
  COMMENT = 'elastic-channels: egress of EKS cluster $CLUSTER';
ALTER NETWORK RULE $QUALIFIED_RULE SET VALUE_LIST = ($value_list);"
    if [ -n "$POLICY" ]; then
        sql+="
ALTER NETWORK POLICY $POLICY ADD ALLOWED_NETWORK_RULE_LIST = ('$QUALIFIED_RULE');"
    else
        sql+="
CREATE NETWORK POLICY IF NOT EXISTS $OWN_POLICY
  ALLOWED_NETWORK_RULE_LIST = ('$QUALIFIED_RULE')
  COMMENT = 'elastic-channels: the ingest user from EKS cluster $CLUSTER';
ALTER USER $SNOWFLAKE_USER SET NETWORK_POLICY = $OWN_POLICY;"
    fi
else
    sql="-- Undo deploy/allowlist.sh for the EKS cluster $CLUSTER."
    if [ -n "$POLICY" ]; then
        sql+="
ALTER NETWORK POLICY $POLICY REMOVE ALLOWED_NETWORK_RULE_LIST = ('$QUALIFIED_RULE');"
    else
        sql+="
ALTER USER $SNOWFLAKE_USER UNSET NETWORK_POLICY;
DROP NETWORK POLICY IF EXISTS $OWN_POLICY;"
    fi
    sql+="
DROP NETWORK RULE IF EXISTS $QUALIFIED_RULE;"
fi

need_tools elastic-channels
if [ "$DRY_RUN" = 1 ]; then
    sql_file=/tmp/elastic-allowlist.sql
    printf "cat > %s <<'SQL'\n%s\nSQL\n" "$sql_file" "$sql"
else
    sql_file=$(mktemp /tmp/elastic-allowlist.XXXXXX.sql)
    # shellcheck disable=SC2064  # the file name is fixed now
    trap "rm -f '$sql_file'" EXIT
    printf '%s\n' "$sql" >"$sql_file"
fi
run elastic-channels setup --sql-file "$sql_file"
