#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, offline, as root: etcd,
# kube-apiserver, kube-controller-manager (the Job controller), kube-scheduler and a
# kubelet running real containers through containerd + runc (+ a CNI bridge the node
# needs to be Ready; the fleet's pods use hostNetwork). Every service listens on
# 127.0.0.1 only; nothing is pulled from a container registry.
#
#   scripts/k8s_local.sh up        Debian packages (apt-get), the Kubernetes binaries
#                                  (built once, cached), the pause image, then every
#                                  service; waits for the node to be Ready and prints
#                                  the kubeconfig's path
#   scripts/k8s_local.sh down      stop everything `up` started, by PID (add --purge to
#                                  remove the state directory too; the cache stays)
#   scripts/k8s_local.sh status    what runs (pid per service), the node, the kubeconfig
#   scripts/k8s_local.sh build     only the Kubernetes binaries (into the cache)
#   scripts/k8s_local.sh load IMAGE  an image from buildah's storage into the node
#                                  (buildah push docker-archive, ctr images import)
#   scripts/k8s_local.sh kubeconfig  print the kubeconfig's path
#   scripts/k8s_local.sh -h|--help
#
# Kubernetes is built with Go from the module k8s.io/kubernetes at $K8S_VERSION: a
# small wrapper module requires it and replaces each k8s.io/<staging> module with its
# v0.MINOR.PATCH release, then `go build` of kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet and kubectl (15-40 min on 2 busy cores, under nice; cached).
# Debian's own Kubernetes (1.20) has no Indexed Jobs, which the fleet's Job needs.
#
# Environment:
#   K8S_VERSION         [v1.34.4] (>= 1.29: backoffLimitPerIndex)
#   ELASTIC_K8S_CACHE   binaries and images, kept across runs
#                       [~/.cache/elastic-channels/k8s]; binaries in CACHE/VERSION/bin
#   ELASTIC_K8S_STATE   the cluster's state: certificates, etcd, containerd, kubelet,
#                       logs (STATE/logs/NAME.log), pids (STATE/run/NAME.pid)
#                       [/var/tmp/elastic-k8s]
# Needs root (containerd, runc, mounts). This machine: cgroup v1 + a cgroup2 mount, no
# systemd, root without CAP_SYS_RESOURCE: cgroupfs, runc (crun refuses hybrid
# cgroups), restrict_oom_score_adj. No kube-proxy and no cluster DNS: Services do not
# work; pods reach servers on the host through hostNetwork.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.4}
CACHE=${ELASTIC_K8S_CACHE:-$HOME/.cache/elastic-channels/k8s}
BIN=$CACHE/$K8S_VERSION/bin
ST=${ELASTIC_K8S_STATE:-/var/tmp/elastic-k8s}
RUN=$ST/run
LOG=$ST/logs
PKI=$ST/pki
SOCK=$RUN/containerd.sock
KUBECONFIG_FILE=$ST/admin.kubeconfig
NODE=$(hostname)
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.96.0.0/24
BRIDGE=elastick8s0
PAUSE_IMAGE=localhost/elastic-pause:1
SERVICES=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet)
BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
BUILDAH=(buildah --storage-driver vfs)
CTR=(ctr -a "$SOCK" -n k8s.io)

say() { printf '==> [k8s] %s (%ss)\n' "$*" "$SECONDS" >&2; }
die() {
    echo "k8s_local: $*" >&2
    exit 1
}
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
need_root() { [ "$(id -u)" = 0 ] || die "$1 needs root (containerd, runc and mounts)"; }
alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }
node_ready() { kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True; }

# start NAME CMD...: in the background, log to $LOG/NAME.log, pid to $RUN/NAME.pid
start() {
    local name=$1
    shift
    if alive "$name"; then
        echo "$name already running (pid $(cat "$RUN/$name.pid"))" >&2
        return 0
    fi
    nohup "$@" >"$LOG/$name.log" 2>&1 &
    echo $! >"$RUN/$name.pid"
}
# wait_for SECONDS WHAT NAME CMD...: poll CMD once a second while service NAME lives
wait_for() {
    local n=$1 what=$2 name=$3
    shift 3
    for _ in $(seq "$n"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        alive "$name" || die "$name exited while waiting for $what; its log: $LOG/$name.log
$(tail -5 "$LOG/$name.log" 2>/dev/null)"
        sleep 1
    done
    die "timed out after ${n}s waiting for $what (log: $LOG/$name.log)"
}

cmd_deps() {
    local pkgs=(etcd-server etcd-client containerd runc containernetworking-plugins iptables
        buildah debootstrap openssl gcc libc6-dev) missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    [ "${#missing[@]}" = 0 ] && return 0
    say "Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive nice -n 10 apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# The k8s.io/kubernetes module points its staging modules at ./staging/... with replace
# directives, which a dependent module does not inherit: the wrapper copies them as
# `replace k8s.io/X => k8s.io/X v0.MINOR.PATCH`.
cmd_build() {
    local have=1 b
    for b in "${BINARIES[@]}"; do [ -x "$BIN/$b" ] || have=0; done
    [ "$have" = 0 ] || return 0
    command -v go >/dev/null || die "building Kubernetes needs Go >= 1.24 on PATH"
    [[ $K8S_VERSION =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "K8S_VERSION must look like v1.34.4, got '$K8S_VERSION'"
    local minor=${BASH_REMATCH[1]} patch=${BASH_REMATCH[2]} wrap=$CACHE/$K8S_VERSION/wrap gomod
    [ "$minor" -ge 29 ] || die "K8S_VERSION $K8S_VERSION has no backoffLimitPerIndex: use >= v1.29"
    say "build Kubernetes $K8S_VERSION with $(go version | cut -d' ' -f3) into $BIN (15-40 min, nice 19)"
    mkdir -p "$wrap" "$BIN"
    (
        cd "$wrap"
        export GOFLAGS=-mod=mod
        [ -f go.mod ] || go mod init local/k8swrap >/dev/null 2>&1
        gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
        [ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"
        grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk '{print $1}' | while read -r m; do
            go mod edit -replace "$m=$m@v0.$minor.$patch"
        done
        for b in "${BINARIES[@]}"; do
            go get "k8s.io/kubernetes/cmd/$b@$K8S_VERSION" >>"$wrap/get.log" 2>&1 ||
                die "go get k8s.io/kubernetes/cmd/$b@$K8S_VERSION failed: $(tail -3 "$wrap/get.log")"
        done
        local pkgs=()
        for b in "${BINARIES[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
        CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "-s -w \
            -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
            -X k8s.io/component-base/version.gitMajor=1 \
            -X k8s.io/component-base/version.gitMinor=$minor \
            -X k8s.io/component-base/version.gitTreeState=clean" -o "$BIN/" "${pkgs[@]}"
    )
    "$BIN/kube-apiserver" --version >&2
}

pause_image() {
    "${CTR[@]}" images ls -q | grep -qx "$PAUSE_IMAGE" && return 0
    local d=$CACHE/images
    mkdir -p "$d"
    if [ ! -s "$d/pause.tar" ]; then
        say "pause image: a static C program that sleeps until SIGTERM and reaps children"
        cat >"$d/pause.c" <<'EOF'
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void die(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction a = {0}, b = {0};
  a.sa_handler = die; sigaction(SIGINT, &a, NULL); sigaction(SIGTERM, &a, NULL);
  b.sa_handler = reap; b.sa_flags = SA_NOCLDSTOP; sigaction(SIGCHLD, &b, NULL);
  for (;;) pause();
}
EOF
        gcc -Os -static -s -o "$d/pause" "$d/pause.c"
        local c
        c=$("${BUILDAH[@]}" from scratch)
        "${BUILDAH[@]}" copy "$c" "$d/pause" /pause >/dev/null
        "${BUILDAH[@]}" config --entrypoint '["/pause"]' --user 65535:65535 "$c"
        "${BUILDAH[@]}" commit -q --rm "$c" "$PAUSE_IMAGE" >/dev/null
        rm -f "$d/pause.tar"
        "${BUILDAH[@]}" push -q "$PAUSE_IMAGE" "docker-archive:$d/pause.tar:$PAUSE_IMAGE"
    fi
    "${CTR[@]}" images import "$d/pause.tar" >/dev/null
}

# load IMAGE: from buildah's storage into the node's containerd (k8s.io namespace)
cmd_load() {
    local image=${1:-}
    [ -n "$image" ] || die "load needs an image name (as buildah knows it), e.g. localhost/elastic-native:dev"
    alive containerd || die "the cluster is not up (containerd not running): scripts/k8s_local.sh up"
    "${BUILDAH[@]}" inspect --type image "$image" >/dev/null 2>&1 || die "buildah has no image '$image'"
    local tar
    tar=$(mktemp "$ST/image.XXXXXX.tar")
    rm -f "$tar"
    say "load $image into the node"
    "${BUILDAH[@]}" push -q "$image" "docker-archive:$tar:$image"
    "${CTR[@]}" images import "$tar" >/dev/null
    rm -f "$tar"
    "${CTR[@]}" images ls -q | grep -qx "$image" || die "containerd did not take '$image'"
}

pki() {
    [ -f "$PKI/admin.crt" ] && return 0
    mkdir -p "$PKI"
    (
        cd "$PKI"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
            -subj "/CN=elastic-k8s-ca" 2>/dev/null
        mk() { # NAME CN O SANS
            openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2${3:+/O=$3}" 2>/dev/null
            {
                printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n'
                printf 'extendedKeyUsage=serverAuth,clientAuth\n'
                [ -z "$4" ] || printf 'subjectAltName=%s\n' "$4"
            } >"$1.ext"
            openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" \
                -days 3650 -extfile "$1.ext" 2>/dev/null
        }
        mk apiserver kube-apiserver "" "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.96.0.1"
        mk admin admin system:masters ""
        mk kubelet "system:node:$NODE" system:nodes "DNS:localhost,DNS:$NODE,IP:127.0.0.1"
        openssl genrsa -out sa.key 2048 2>/dev/null
        openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    )
    local u
    for u in admin kubelet; do
        cat >"$ST/$u.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: elastic-local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: $PKI/ca.crt
users:
- name: $u
  user:
    client-certificate: $PKI/$u.crt
    client-key: $PKI/$u.key
contexts:
- name: elastic-local
  context: {cluster: elastic-local, user: $u}
current-context: elastic-local
EOF
    done
}

containerd_up() {
    mkdir -p "$ST/containerd/root" "$ST/containerd/state" "$ST/cni/net.d"
    cat >"$ST/containerd/config.toml" <<EOF
version = 2
root = "$ST/containerd/root"
state = "$ST/containerd/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # root here lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj (-998 for the
  # sandbox, -997 for Guaranteed pods); clamp to containerd's own value instead
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$ST/cni/net.d"
EOF
    cat >"$ST/cni/net.d/10-elastic.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "elastic-local",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]],
              "dataDir": "$ST/cni/ipam"}},
    {"type": "loopback"}
  ]
}
EOF
    start containerd nice -n 5 containerd --config "$ST/containerd/config.toml"
    wait_for 30 containerd containerd "${CTR[@]}" version
}

cmd_up() {
    need_root up
    cmd_deps
    cmd_build
    mkdir -p "$RUN" "$LOG" "$ST/etcd"
    pki
    say "etcd on 127.0.0.1:2379"
    start etcd nice -n 5 etcd --name elastic-local --data-dir "$ST/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster elastic-local=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
    wait_for 60 etcd etcd env ETCDCTL_API=3 etcdctl --endpoints http://127.0.0.1:2379 endpoint health

    say "kube-apiserver on 127.0.0.1:6443"
    # --watch-cache=false: Debian's etcd 3.4.23 predates the progress notifications the
    # 1.34 watch cache waits on; with the cache, a watch from a fresh resourceVersion
    # failed with 504 "Too large resource version" for ~40 s (monitor --k8s saw it)
    start kube-apiserver "$BIN/kube-apiserver" \
        --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
        --secure-port=6443 --endpoint-reconciler-type=none \
        --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
        --client-ca-file="$PKI/ca.crt" --authorization-mode=Node,RBAC --allow-privileged=true \
        --service-cluster-ip-range=$SVC_CIDR \
        --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
        --service-account-issuer=https://kubernetes.default.svc \
        --kubelet-client-certificate="$PKI/admin.crt" --kubelet-client-key="$PKI/admin.key" \
        --kubelet-certificate-authority="$PKI/ca.crt" \
        --kubelet-preferred-address-types=Hostname --watch-cache=false
    wait_for 180 kube-apiserver kube-apiserver kc get --raw /readyz

    say "kube-controller-manager, kube-scheduler"
    start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$KUBECONFIG_FILE" \
        --bind-address=127.0.0.1 --leader-elect=false \
        --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
        --use-service-account-credentials=false
    start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG_FILE" \
        --bind-address=127.0.0.1 --leader-elect=false

    say "containerd + runc + CNI bridge"
    containerd_up
    pause_image

    say "kubelet on 127.0.0.1:10250"
    mkdir -p "$ST/kubelet"
    [ -d /var/log/pods ] || touch "$ST/made-var-log-pods"
    cat >"$ST/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
resolvConf: /etc/resolv.conf
containerRuntimeEndpoint: unix://$SOCK
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
    start kubelet "$BIN/kubelet" --kubeconfig="$ST/kubelet.kubeconfig" \
        --config="$ST/kubelet-config.yaml" --root-dir="$ST/kubelet" --hostname-override="$NODE"
    wait_for 180 "node $NODE Ready" kubelet node_ready
    say "up: node $NODE Ready"
    echo "$KUBECONFIG_FILE"
}

cmd_status() {
    local name any=0
    for name in "${SERVICES[@]}"; do
        if alive "$name"; then
            printf '%-24s running (pid %s)\n' "$name" "$(cat "$RUN/$name.pid")"
            any=1
        else
            printf '%-24s stopped\n' "$name"
        fi
    done
    if [ "$any" = 1 ] && alive kube-apiserver; then
        kc get nodes -o wide 2>&1 || true
        echo "kubeconfig: $KUBECONFIG_FILE"
    fi
    alive kubelet && node_ready
}

cmd_down() {
    need_root down
    local purge=0 name pid d
    [ "${1:-}" != --purge ] || purge=1
    if alive containerd; then
        for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks kill -s SIGKILL "$t" 2>/dev/null || true; done
    fi
    for name in kubelet kube-scheduler kube-controller-manager kube-apiserver containerd etcd; do
        [ -f "$RUN/$name.pid" ] || continue
        pid=$(cat "$RUN/$name.pid")
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid"
            for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
            kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
            echo "stopped $name (pid $pid)" >&2
        fi
        rm -f "$RUN/$name.pid"
    done
    # the runc shims of our containers outlive containerd: end those on our socket, by PID
    for d in /proc/[0-9]*; do
        [ "$(readlink "$d/exe" 2>/dev/null)" = /usr/bin/containerd-shim-runc-v2 ] || continue
        if tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q -- "-address $SOCK"; then
            kill "${d#/proc/}" 2>/dev/null || true
        fi
    done
    if [ -f "$ST/made-var-log-pods" ]; then
        rm -rf /var/log/pods /var/log/containers "$ST/made-var-log-pods"
    fi
    ip link del "$BRIDGE" 2>/dev/null || true
    # mounts the kubelet and containerd left under the state directory, deepest first
    { grep -o " $ST/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done
    if [ "$purge" = 1 ] && [ -d "$ST" ]; then
        rm -rf "$ST"
        echo "removed $ST" >&2
    fi
}

case "${1:-}" in
    up) cmd_up ;;
    down) cmd_down "${2:-}" ;;
    status) cmd_status ;;
    build) cmd_build ;;
    load) cmd_load "${2:-}" ;;
    kubeconfig) echo "$KUBECONFIG_FILE" ;;
    -h | --help) usage ;;
    "")
        usage >&2
        exit 2
        ;;
    *)
        echo "k8s_local: unknown command '$1' (up, down, status, build, load, kubeconfig; see --help)" >&2
        exit 2
        ;;
esac
