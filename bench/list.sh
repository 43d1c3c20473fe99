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
. bench/lib.sh

mkdir -m 0755 "$work/shipped" "$work/fake"
cp conf/*.ini "$work/shipped/" && chmod 0644 "$work/shipped"/*.ini
test/fixtures/driver-root.sh "$work/dr" >/dev/null
sed "s|^driver_root = /\$|driver_root = $work/dr|; s|^version_file.*|version = 550.54.15|" \
	conf/nvidia.ini >"$work/fake/nvidia.ini"
chmod 0644 "$work/fake/nvidia.ini"


ref=$(median_ms ldconfig -p)
floor=$(median_ms "$bin" --version)
a=$(median_ms "$bin" list -c "$work/shipped")
b=$(median_ms "$bin" list -c "$work/fake")
echo "runs per round: $N, rounds: $R (medians; per run = total / $N)"
row "ldconfig -p (reference)" "$ref"
row "ocidec --version (exec floor)" "$floor" "$ref"
row "ocidec list, shipped configs, this host" "$a" "$ref"
row "ocidec list, nvidia.ini on fake driver root" "$b" "$ref"
