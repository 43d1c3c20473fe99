#!/bin/bash
# bench/pods.sh: a pod's start (RunPodSandbox, CreateContainer,
# StartContainer, its exit, the pod removed: test/fixtures/cri.py, as
# kubelet drives the CRI) through Debian unstable's containerd 2.x with and
# without ocidec, each way a cluster runs it, measured in the same run, in
# the test bed of test/nri.bats (hybrid layout):
#   reference: a pod asking for nothing, no ocidec anywhere;
#   NRI (ocidec nri connected): a pod asking for nothing, and one given the
#       demo vendor by the variable, as the edits with the cache hook
#       (--no-cdi) and as ocidec's CDI devices (--cdi-dir: containerd 2.1
#       and later inject them from ocidec's refreshed spec; issue 49);
#   CDI: the demo vendor's device through the CRI's CDI field (ocidec's
#       spec), no plugin;
#   the shim (ocidec install --runtime containerd, handler ocidec): a pod
#       asking for nothing, and the demo vendor by the variable.
# Each round times N pods of every kind back to back, the plugin started
# and stopped between kinds (outside the timing); a ratio is the median of
# the per-round ratios against that round's reference (bench/lib.sh).
# Usage: bench/pods.sh [N] [R]   (as root; the first run builds the bed)
set -eu
cd "$(dirname "$0")/.."
N=${1:-3} R=${2:-3}
. bench/lib.sh
fx=$PWD/test/fixtures
d=$(mktemp -d /tmp/ocidec-benchpods.XXXXXX)
trap '"$fx/bed.sh" stop "$d"; rm -rf "$work" "$d"' EXIT
"$fx/cri-proto.sh" >/dev/null
"$fx/bed-setup.sh" "$d" hybrid "$bin" >/dev/null
in_bed() { "$fx/bed.sh" exec "$d" "$@"; }
c2=$("$fx/containerd2.sh")
cp "$c2/usr/bin/containerd" "$c2/usr/bin/containerd-shim-runc-v2" "$c2/usr/bin/ctr" "$d/root/usr/local/bin/"
"$fx/containerd3-config.sh" "$d" >"$d/root/etc/containerd/config.toml"
ctrd_start() {
	(in_bed sh -c "exec containerd >>$d/containerd.log 2>&1" &)
	for _ in $(seq 300); do in_bed ctr -a "$d/ctrd/ctrd.sock" version >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
ctrd_stop() { in_bed sh -c 'pkill -x containerd; while pgrep -x containerd >/dev/null; do sleep 0.1; done'; }
nri_on() {
	(in_bed sh -c "exec ocidec nri $* >>$d/nri.log 2>&1" &)
	for _ in $(seq 100); do in_bed ocidec nri --status >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
nri_off() { in_bed sh -c 'pkill -x ocidec; while pgrep -x ocidec >/dev/null; do sleep 0.1; done'; }
ctrd_start
in_bed ctr -a "$d/ctrd/ctrd.sock" -n k8s.io images import "$d/image.tar" >/dev/null
pod() { /usr/bin/python3 "$fx/cri.py" run "$d/ctrd/ctrd.sock" --logs "$d/logs" "$@" docker.io/library/ocidec-test:1 true; }
idle() { pod; }
gpu() { pod --env OCI_DEMO=1; }
cdi() { pod --cdi ocidec.io/demo=1; }
shim_idle() { pod --handler ocidec; }
shim_gpu() { pod --handler ocidec --env OCI_DEMO=1; }
# all work before timing, and give what they should
nri_on --no-cdi
[ "$(/usr/bin/python3 "$fx/cri.py" run "$d/ctrd/ctrd.sock" --logs "$d/logs" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo')" = 2 ]
nri_off
nri_on --cdi-dir /var/run/cdi
for _ in $(seq 100); do in_bed test -s /var/run/cdi/ocidec.io-demo.json && break; sleep 0.1; done
[ "$(/usr/bin/python3 "$fx/cri.py" run "$d/ctrd/ctrd.sock" --logs "$d/logs" --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo')" = 2 ]
grep -q 'CDI devices ocidec.io/demo=1' "$d/nri.log"
nri_off
[ "$(/usr/bin/python3 "$fx/cri.py" run "$d/ctrd/ctrd.sock" --logs "$d/logs" --cdi ocidec.io/demo=1 docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo')" = 2 ]

declare -a q_nri_idle q_nri_gpu q_nri_cdi q_cdi t_ref
for ((r = 0; r < R; r++)); do
	ref=$(round_ms idle)
	c=$(round_ms cdi)
	nri_on --no-cdi
	ni=$(round_ms idle)
	ng=$(round_ms gpu)
	nri_off
	nri_on --cdi-dir /var/run/cdi
	nc=$(round_ms gpu)
	nri_off
	t_ref+=("$ref")
	q_nri_idle+=("$(bc -l <<<"$ni / $ref")")
	q_nri_gpu+=("$(bc -l <<<"$ng / $ref")")
	q_nri_cdi+=("$(bc -l <<<"$nc / $ref")")
	q_cdi+=("$(bc -l <<<"$c / $ref")")
done
in_bed rm -rf /var/run/cdi

# the shim: registered, containerd restarted once
in_bed ocidec install --runtime containerd >/dev/null
ctrd_stop
ctrd_start
[ "$(/usr/bin/python3 "$fx/cri.py" run "$d/ctrd/ctrd.sock" --logs "$d/logs" --handler ocidec --env OCI_DEMO=1 docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo')" = 2 ]
declare -a q_shim_idle q_shim_gpu t_ref2
for ((r = 0; r < R; r++)); do
	ref=$(round_ms idle)
	si=$(round_ms shim_idle)
	sg=$(round_ms shim_gpu)
	t_ref2+=("$ref")
	q_shim_idle+=("$(bc -l <<<"$si / $ref")")
	q_shim_gpu+=("$(bc -l <<<"$sg / $ref")")
done
in_bed ocidec install --uninstall >/dev/null

med() { printf '%s\n' "$@" | median; }
echo "pods per round: $N, rounds: $R; ratio = median of the per-round ratios against the round's reference"
echo "containerd $(in_bed containerd --version | awk '{print $3}'), runc $(in_bed runc --version | awk 'NR == 1 {print $3}')"
printf '%-62s %8s ms / %d pods\n' "reference: a pod asking for nothing, no ocidec" "$(med "${t_ref[@]}")" "$N"
printf '%-62s %6.2fx\n' "NRI plugin connected, a pod asking for nothing" "$(med "${q_nri_idle[@]}")"
printf '%-62s %6.2fx\n' "NRI plugin, the demo vendor by variable: edits, cache hook" "$(med "${q_nri_gpu[@]}")"
printf '%-62s %6.2fx\n' "NRI plugin, the demo vendor by variable: ocidec's CDI devices" "$(med "${q_nri_cdi[@]}")"
printf '%-62s %6.2fx\n' "CDI (ocidec's spec, the CRI's CDI field), no plugin" "$(med "${q_cdi[@]}")"
printf '%-62s %8s ms / %d pods\n' "reference (second phase): a pod asking for nothing" "$(med "${t_ref2[@]}")" "$N"
printf '%-62s %6.2fx\n' "the shim (handler ocidec), a pod asking for nothing" "$(med "${q_shim_idle[@]}")"
printf '%-62s %6.2fx\n' "the shim, the demo vendor by variable" "$(med "${q_shim_gpu[@]}")"
