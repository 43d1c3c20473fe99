#!/bin/bash
# bench/engines.sh: container start through Debian 13's engines with and
# without ocidec, measured in the same run, in the test bed of
# test/engines.bats (test/fixtures/bed-setup.sh: ocidec installed as a
# package installs it; cgroup2-only layout):
#   podman 5 + crun: a container that asks for nothing, without the hook
#       (--hooks-dir of an empty directory) against with it (the installed
#       hooks.d file): what the hook costs every container of a host;
#   podman 5 + crun: the demo vendor through the hook against through CDI;
#   Docker 26: runc against --runtime ocidec, nothing asked (the shim's idle
#       path);
#   containerd 1.7 CRI: a pod with the default runtime against handler
#       ocidec, nothing asked.
# Rounds alternate reference and ours; the ratio is the median of the
# per-round ratios (bench/lib.sh).
# Usage: bench/engines.sh [N] [R]   (as root; the first run builds the bed)
set -eu
cd "$(dirname "$0")/.."
N=${1:-3} R=${2:-5}
. bench/lib.sh
top=$PWD
fx=$top/test/fixtures
bed_dir=$(mktemp -d /tmp/ocidec-benchbed.XXXXXX)
trap '"$fx/bed.sh" stop "$bed_dir"; rm -rf "$work" "$bed_dir"' EXIT
"$fx/cri-proto.sh" >/dev/null
"$fx/bed-setup.sh" "$bed_dir" v2 "$bin"
in_bed() { "$fx/bed.sh" exec "$bed_dir" "$@"; }
mkdir -p "$bed_dir/nohooks" "$bed_dir/ctrd" "$bed_dir/logs"
rootfs=$bed_dir/b/rootfs

# Docker 26 with the shim as runtime "ocidec"
in_bed ocidec install --host-root / -c /etc/ocidec/ocidec.d --vendor demo --runtime docker >/dev/null
in_bed sh -c "exec dockerd --data-root $bed_dir/docker --exec-root /run/docker -H unix://$bed_dir/docker.sock \
	--bridge=none --iptables=false --ip6tables=false --ip-forward=false >$bed_dir/docker.log 2>&1" &
disown  # (stopped with the bed)
for _ in $(seq 300); do in_bed docker -H "unix://$bed_dir/docker.sock" version >/dev/null 2>&1 && break; sleep 0.1; done
dk() { in_bed docker -H "unix://$bed_dir/docker.sock" "$@"; }
in_bed sh -c "tar -C $rootfs -c . | docker -H unix://$bed_dir/docker.sock import - ocidec-bench:1" >/dev/null

# containerd 1.7 with the shim as runtime "ocidec" (the node's settings as
# test/engines.bats has them)
cat >"$bed_dir/root/etc/containerd/config.toml" <<EOF
version = 2
root = "$bed_dir/ctrd/root"
state = "$bed_dir/ctrd/state"
[grpc]
  address = "$bed_dir/ctrd/ctrd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/library/ocidec-test:1"
  restrict_oom_score_adj = true
  disable_cgroup = true
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
EOF
in_bed ocidec install --host-root / -c /etc/ocidec/ocidec.d --vendor demo --runtime containerd >/dev/null
in_bed sh -c "exec containerd >$bed_dir/containerd.log 2>&1" &
disown
for _ in $(seq 300); do in_bed ctr -a "$bed_dir/ctrd/ctrd.sock" version >/dev/null 2>&1 && break; sleep 0.1; done
in_bed ctr -a "$bed_dir/ctrd/ctrd.sock" -n k8s.io images import "$bed_dir/image.tar" >/dev/null
pod() { /usr/bin/python3 "$fx/cri.py" run "$bed_dir/ctrd/ctrd.sock" --logs "$bed_dir/logs" "$@" docker.io/library/ocidec-test:1 true; }

pm_plain() { in_bed podman --hooks-dir "$bed_dir/nohooks" run --rm --rootfs "$rootfs" true; }
pm_hook() { in_bed podman run --rm --rootfs "$rootfs" true; }
pm_demo_hook() { in_bed podman run --rm -e OCI_DEMO=all --rootfs "$rootfs" demo-tool; }
pm_demo_cdi() { in_bed podman --hooks-dir "$bed_dir/nohooks" run --rm --device ocidec.io/demo=all --rootfs "$rootfs" demo-tool; }
dk_runc() { dk run --rm --network none ocidec-bench:1 true; }
dk_shim() { dk run --rm --network none --runtime ocidec ocidec-bench:1 true; }
cri_runc() { pod; }
cri_shim() { pod --handler ocidec; }
for f in pm_plain pm_hook dk_runc dk_shim cri_runc cri_shim; do "$f" >/dev/null; done   # all work before timing
[ "$(pm_demo_hook)" = "demo-tool: the answer is 42" ] && [ "$(pm_demo_cdi)" = "demo-tool: the answer is 42" ]

read -r ref_a ours_a q_a < <(paired pm_plain pm_hook)
read -r ref_b ours_b q_b < <(paired pm_demo_cdi pm_demo_hook)
read -r ref_c ours_c q_c < <(paired dk_runc dk_shim)
read -r ref_d ours_d q_d < <(paired cri_runc cri_shim)

echo "runs per round: $N, rounds: $R; medians, ratio = median of paired rounds; cgroup2 only"
echo "podman $(in_bed podman --version | awk '{print $3}'), crun $(in_bed crun --version | awk 'NR == 1 {print $3}'), Docker $(dk version -f '{{.Server.Version}}'), containerd $(in_bed containerd --version | awk '{print $3}')"
row "podman run (crun), no hook (reference for a)" "$ref_a"
row "(a) podman run, the hook installed, nothing asked" "$ours_a" "$ref_a" "$q_a"
row "podman run --device ocidec.io/demo=all, CDI (reference for b)" "$ref_b"
row "(b) podman run -e OCI_DEMO=all, the hook" "$ours_b" "$ref_b" "$q_b"
row "docker run, runc (reference for c)" "$ref_c"
row "(c) docker run --runtime ocidec, nothing asked" "$ours_c" "$ref_c" "$q_c"
row "CRI pod, default runtime (reference for d)" "$ref_d"
row "(d) CRI pod, handler ocidec, nothing asked" "$ours_d" "$ref_d" "$q_d"
