#!/bin/bash
# bench/list.sh: the time of `ocidec list` against `ldconfig -p` on this
# host, measured in the same run. Each measurement is N back-to-back runs,
# repeated R times; medians and their ratio are printed.
#   (a) the shipped configs (conf/) on this host
#   (b) the shipped nvidia.ini on a fake driver root (test/fixtures)
# Usage: bench/list.sh [N] [R]
set -eu
cd "$(dirname "$0")/.."
N=${1:-200} R=${2:-7}
bin=$PWD/build/ocidec
[ -x "$bin" ] || { echo "build first: ./build.sh" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -m 0755 "$work/shipped" "$work/fake"
cp conf/*.ini "$work/shipped/" && chmod 0644 "$work/shipped"/*.ini
test/fixtures/driver-root.sh "$work/dr" >/dev/null
sed "s|^driver_root = /\$|driver_root = $work/dr|; s|^version_file.*|version = 550.54.15|" \
	conf/nvidia.ini >"$work/fake/nvidia.ini"
chmod 0644 "$work/fake/nvidia.ini"

# median_ms CMD...: median over R rounds of the wall time of N runs, in ms
median_ms() {
	local times=() t0 t1
	for ((r = 0; r < R; r++)); do
		t0=$(date +%s%N)
		for ((i = 0; i < N; i++)); do "$@" >/dev/null; done
		t1=$(date +%s%N)
		times+=($(( (t1 - t0) / 1000000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (R + 1) / 2 ))p"
}

ref=$(median_ms ldconfig -p)
floor=$(median_ms "$bin" --version)
a=$(median_ms "$bin" list -c "$work/shipped")
b=$(median_ms "$bin" list -c "$work/fake")
echo "runs per round: $N, rounds: $R (medians; per run = total / $N)"
printf '%-44s %8s ms  %7.3f ms/run\n' "ldconfig -p (reference)" "$ref" "$(bc -l <<<"$ref / $N")"
printf '%-44s %8s ms  %7.3f ms/run  ratio %.2f\n' "ocidec --version (exec floor)" "$floor" \
	"$(bc -l <<<"$floor / $N")" "$(bc -l <<<"$floor / $ref")"
printf '%-44s %8s ms  %7.3f ms/run  ratio %.2f\n' "ocidec list, shipped configs, this host" "$a" \
	"$(bc -l <<<"$a / $N")" "$(bc -l <<<"$a / $ref")"
printf '%-44s %8s ms  %7.3f ms/run  ratio %.2f\n' "ocidec list, nvidia.ini on fake driver root" "$b" \
	"$(bc -l <<<"$b / $N")" "$(bc -l <<<"$b / $ref")"
