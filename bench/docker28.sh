#!/bin/bash
# bench/docker28.sh: Docker 28 (Debian unstable's, in the test bed of
# test/engines-unstable.bats, cgroup v2) giving an NVIDIA-kind GPU (the demo
# vendor named nvidia, cdi_kind nvidia.com/gpu) to docker run, both ways on
# one dockerd (its CDI on, as Docker 28 has it by default), measured in the
# same run:
#   reference: docker run, nothing asked;
#   the hook:  docker run --gpus '"device=1"' (Docker's --gpus runs
#              nvidia-container-runtime-hook, ocidec's hook under that name);
#   the spec:  docker run --device nvidia.com/gpu=1 (Docker's CDI, ocidec's
#              refreshed spec: its edits applied by Docker, no hook).
# Debian's Docker 28.5 has no CDI-first --gpus (moby#50228: a later Docker
# asks for the spec's devices for --gpus where nvidia-cdi-hook is on its
# PATH), so `--device` stands for what such a --gpus would run: the same
# CDI devices. Rounds alternate the ways; a ratio is the median of the
# per-round ratios against that round's reference (bench/lib.sh).
# Usage: bench/docker28.sh [N] [R]   (as root; the first run builds the bed)
set -eu
cd "$(dirname "$0")/.."
N=${1:-5} R=${2:-5}
. bench/lib.sh
fx=$PWD/test/fixtures
d=$(mktemp -d /tmp/ocidec-benchd28.XXXXXX)
stop() {
	[ -s "$d/docker.pid" ] && "$fx/bed.sh" exec "$d" sh -c "kill $(cat "$d/docker.pid") 2>/dev/null" || true
	"$fx/bed.sh" stop "$d" 2>/dev/null || true
	rm -rf "$work" "$d"
}
trap stop EXIT
BED_SUITE=unstable "$fx/bed-setup.sh" "$d" v2 "$bin" >/dev/null
in_bed() { "$fx/bed.sh" exec "$d" "$@"; }
conf=$d/root/etc/ocidec/ocidec.d
# the demo vendor as NVIDIA's kind (the shipped nvidia.ini aside: no NVIDIA here)
rm -f "$conf/nvidia.ini"
sed '/^\[vendor\]$/a cdi_kind = nvidia.com/gpu' "$d/nv/nvidia.ini" >"$conf/nvidia.ini"
chmod 0644 "$conf/nvidia.ini"
in_bed ocidec cdi -o /etc/cdi nvidia >/dev/null
ln -s /usr/bin/ocidec "$d/root/usr/local/bin/nvidia-container-runtime-hook"
mkdir -p "$d/docker"
in_bed sh -c "exec dockerd --data-root $d/docker/data --exec-root /run/docker -H unix://$d/docker.sock \
	--pidfile $d/docker.pid --bridge=none --iptables=false --ip6tables=false --ip-forward=false \
	>$d/docker.log 2>&1" &
disown  # (it ends with the bed, unreported)
dk() { in_bed docker -H "unix://$d/docker.sock" "$@"; }
for _ in $(seq 300); do dk version >/dev/null 2>&1 && break; sleep 0.1; done
dk version >/dev/null || { echo "dockerd did not come up: $(tail -n 5 "$d/docker.log")" >&2; exit 1; }
in_bed sh -c "tar -C $d/b/rootfs -c . | docker -H unix://$d/docker.sock import - ocidec-bench:1" >/dev/null

plain() { dk run --rm --network none ocidec-bench:1 true; }
hooked() { dk run --rm --network none --gpus '"device=1"' ocidec-bench:1 demo-tool; }
spec() { dk run --rm --network none --device nvidia.com/gpu=1 ocidec-bench:1 demo-tool; }
# all work before timing, and give what they should
plain
[ "$(hooked)" = "demo-tool: the answer is 42" ] && [ "$(spec)" = "demo-tool: the answer is 42" ]
[ "$(dk run --rm --network none --gpus '"device=1"' ocidec-bench:1 sh -c 'ls /dev | grep demo' | tr '\n' ' ')" = "demo1 democtl " ]
[ "$(dk run --rm --network none --device nvidia.com/gpu=1 ocidec-bench:1 sh -c 'ls /dev | grep demo' | tr '\n' ' ')" = "demo1 democtl " ]

declare -a t_ref t_hook t_spec q_hook q_spec q_sh
for ((r = 0; r < R; r++)); do
	ref=$(round_ms plain)
	h=$(round_ms hooked)
	s=$(round_ms spec)
	t_ref+=("$ref") t_hook+=("$h") t_spec+=("$s")
	q_hook+=("$(bc -l <<<"$h / $ref")")
	q_spec+=("$(bc -l <<<"$s / $ref")")
	q_sh+=("$(bc -l <<<"$s / $h")")
done
med() { printf '%s\n' "$@" | median; }
echo "runs per round: $N, rounds: $R; ratio = median of the per-round ratios"
echo "$(dk version --format 'Docker {{.Server.Version}}'), $(in_bed runc --version | head -n 1)"
row "docker run, nothing asked (reference)" "$(med "${t_ref[@]}")"
row "docker run --gpus device=1: the hook" "$(med "${t_hook[@]}")" "$(med "${t_ref[@]}")" "$(med "${q_hook[@]}")"
row "docker run --device nvidia.com/gpu=1: ocidec's spec" "$(med "${t_spec[@]}")" "$(med "${t_ref[@]}")" "$(med "${q_spec[@]}")"
printf '%-52s ratio %.2f\n' "the spec against the hook (same rounds)" "$(med "${q_sh[@]}")"
