#!/bin/bash
# bench/nri-memory.sh: the NRI plugin's memory over many pods, and one
# request's bound. The plugin (ocidec nri, the shipped nvidia.ini on the
# fake driver root of test/fixtures/driver-root.sh) is driven by
# test/fixtures/nri-runtime.py's steps mode as a runtime drives it:
#   N CreateContainers back to back, each given a GPU by its UUID (the
#     GPUs' information files read for each): the plugin's resident memory
#     (VmRSS) after the first 100 and after all N, and their ratio;
#   then one CreateContainer whose environment is OCI_NVIDIA=0 entries as
#     large as ttrpc carries (4 MiB): the time to its answer (containerd
#     waits 2 s), and the next pod's.
# BENCH_REF=BINARY: the same for that build (the one before a change) too,
# in the same run.
# Usage: bench/nri-memory.sh [N]   (as root: the driver root has device nodes)
set -eu
cd "$(dirname "$0")/.."
N=${1:-10000}
. bench/lib.sh

mkdir -m 0755 "$work/conf"
test/fixtures/driver-root.sh "$work/dr" >/dev/null
sed "s|^driver_root = /\$|driver_root = $work/dr|; s|^version_file.*|version = 550.54.15|; s|^device_uuids = |device_uuids = $work/dr|" \
	conf/nvidia.ini >"$work/conf/nvidia.ini"
chmod 0644 "$work/conf/nvidia.ini"
gpu=NVIDIA_VISIBLE_DEVICES=GPU-11111111-2222-3333-4444-555555555555

# measure LABEL BINARY: its rows (the answer's hook is never run: any file
# of root's is its --hook-path)
measure() {
	local out a b
	out=$(/usr/bin/python3 test/fixtures/nri-runtime.py steps "$work/nri.sock" "pod:$gpu" "pods:99:$gpu" rss \
		"pods:$((N - 100)):$gpu" rss flood:max:OCI_NVIDIA=0 "pod:$gpu" -- sh -c \
		'exec "$0" nri -c "$1" --socket "$2" --name "bench$$" --hook-path "$3" 2>>"$4"' \
		"$2" "$work/conf" "$work/nri.sock" "$(readlink -f /bin/true)" "$work/nri.log") || true
	a=$(sed -n 3s/^rss.//p <<<"$out") b=$(sed -n 5s/^rss.//p <<<"$out")
	printf '%-44s %8s kB\n' "$1: RSS after 100 pods" "$a"
	printf '%-44s %8s kB  ratio %.3f  (%s)\n' "$1: RSS after $N pods" "$b" "$(bc -l <<<"$b / $a")" \
		"$(sed -n '4s/^[0-9]* pods //p' <<<"$out")"
	printf '%-44s %s\n' "$1: a 4 MiB environment" "$(sed -n '6p' <<<"$out")"
	printf '%-44s %.200s\n' "" "$(sed -n '7p' <<<"$out")"
	printf '%-44s %s\n' "$1: the next pod" "$(sed -n '8p' <<<"$out")"
}

echo "pods: $N, each given one GPU (the fake driver root's information files)"
[ -z "${BENCH_REF:-}" ] || measure reference "$BENCH_REF"
measure ocidec "$bin"
