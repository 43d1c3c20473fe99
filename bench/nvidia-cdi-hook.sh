#!/bin/bash
# bench/nvidia-cdi-hook.sh: NVIDIA's CDI spec shape against ocidec's, both
# answered by ocidec, measured in the same run: `runc run` of the demo
# container given device 1 through a spec in nvidia-ctk's shape (its four
# createContainer hooks create-symlinks, update-ldcache,
# disable-device-node-modification and chmod, each a process of
# nvidia-cdi-hook, here a link to ocidec: test/fixtures/nvidia-ctk-spec.py),
# against the same container given demo=1 through ocidec's own spec (one
# createContainer hook). Both applied to config.json as an engine applies
# them (test/fixtures/cdi-apply.py); the same container results.
# Rounds alternate reference and ours; the ratio is the median of the
# per-round ratios (bench/lib.sh).
# Usage: bench/nvidia-cdi-hook.sh [N] [R]   (as root, with runc and python3)
set -eu
cd "$(dirname "$0")/.."
N=${1:-20} R=${2:-5}
. bench/lib.sh

test/fixtures/demo-vendor.sh "$work/dr" "$work/cfg" >/dev/null
mkdir -p "$work/bin" && ln -s "$bin" "$work/bin/nvidia-cdi-hook"
"$bin" cdi -c "$work/cfg" demo >"$work/ocidec.json"
test/fixtures/nvidia-ctk-spec.py "$work/dr" "$work/bin/nvidia-cdi-hook" >"$work/nvidia.json"
for s in ocidec nvidia; do
	test/fixtures/bundle.sh "$work/$s" -- demo-tool >/dev/null
	test/fixtures/cdi-apply.py "$work/$s.json" "$work/$s/config.json" 1
done
# both work, with the same result, before timing
a=$(cd "$work/ocidec" && runc run "check-$$-a" 2>&1) b=$(cd "$work/nvidia" && runc run "check-$$-b" 2>&1)
[ "$a" = "demo-tool: the answer is 42" ] && [ "$a" = "$b" ] || { echo "the specs differ: '$a', '$b'" >&2; exit 1; }
ours_spec() { run_in "$work/ocidec"; }
nvidia_spec() { run_in "$work/nvidia"; }
read -r ref ours q < <(paired ours_spec nvidia_spec)
row "runc run, ocidec's spec (one hook; reference)" "$ref"
row "  nvidia-ctk's spec, nvidia-cdi-hook = ocidec (4 hooks)" "$ours" "$ref" "$q"
