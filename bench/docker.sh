#!/bin/bash
# bench/docker.sh: `docker run` through ocidec, measured in the same run, on
# a private dockerd (test/fixtures/dockerd.sh; Debian's docker.io):
#   (a) a container that activates nothing, through the runtime shim
#       (--runtime ocidec) against plain runc: what the shim costs every
#       container of a host that uses it;
#   (b) the demo vendor injected through the shim (config.json edits)
#       against the same through the hook (Docker's --gpus, the hook under
#       NVIDIA's name).
# Rounds alternate reference and ours; the ratio is the median of the
# per-round ratios (bench/lib.sh).
# Usage: bench/docker.sh [N] [R]   (as root)
set -eu
cd "$(dirname "$0")/.."
N=${1:-5} R=${2:-5}
. bench/lib.sh
top=$PWD
trap 'test/fixtures/dockerd.sh stop "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/etc-upper/ocidec/ocidec.d"
for n in ocidec-runtime nvidia-container-runtime-hook; do ln -s "$bin" "$work/bin/$n"; done
EXTRA="activation_aliases = NVIDIA_VISIBLE_DEVICES" \
	test/fixtures/demo-vendor.sh "$work/dr" "$work/etc-upper/ocidec/ocidec.d" >/dev/null
test/fixtures/dockerd.sh start "$work"
test/fixtures/bundle.sh "$work/b" >/dev/null
dk() { /usr/bin/docker -H "unix://$work/docker.sock" "$@"; }
tar -C "$work/b/rootfs" -c . | dk import - ocidec-bench:1 >/dev/null
cd "$top"

plain() { dk run --rm --network none ocidec-bench:1 true; }
shim_idle() { dk run --rm --network none --runtime ocidec ocidec-bench:1 true; }
hooked() { dk run --rm --network none --gpus all ocidec-bench:1 demo-tool; }
shim_demo() { dk run --rm --network none --runtime ocidec -e NVIDIA_VISIBLE_DEVICES=all ocidec-bench:1 demo-tool; }
for f in plain shim_idle hooked shim_demo; do "$f" >/dev/null; done   # all work before timing
[ "$(shim_demo)" = "demo-tool: the answer is 42" ] && [ "$(hooked)" = "demo-tool: the answer is 42" ]
read -r ref_a ours_a q_a < <(paired plain shim_idle)
read -r ref_b ours_b q_b < <(paired hooked shim_demo)

echo "runs per round: $N, rounds: $R; medians, ratio = median of paired rounds"
row "docker run, runc (reference for a)" "$ref_a"
row "(a) docker run --runtime ocidec, nothing active" "$ours_a" "$ref_a" "$q_a"
row "docker run --gpus all, the hook (reference for b)" "$ref_b"
row "(b) docker run --runtime ocidec, demo injected" "$ours_b" "$ref_b" "$q_b"
