#!/bin/bash
# bench/cdi.sh: CDI, measured in the same run.
#   (a) `ocidec cdi` for the fake NVIDIA driver root (test/fixtures/
#       driver-root.sh, the shipped nvidia.ini pointed at it, UUID files for
#       both GPUs), against `ocidec list` for the same tree (the same
#       planning, printed as paths).
#   (b) `runc run` of the demo container given demo=all through the
#       generated CDI spec (applied to config.json as an engine applies it:
#       test/fixtures/cdi-apply.py; the spec's createContainer hook makes
#       the link and the cache), against the same container given demo=all
#       through the vendor hook at prestart.
# Rounds alternate reference and ours; the ratio is the median of the
# per-round ratios (bench/lib.sh).
# Usage: bench/cdi.sh [N] [R]   (as root, with runc and python3)
set -eu
cd "$(dirname "$0")/.."
N=${1:-20} R=${2:-5}
. bench/lib.sh

# (a)
test/fixtures/driver-root.sh "$work/nv" >/dev/null
mkdir -m 0755 "$work/nvcfg"
for i in 0 1; do
	mkdir -p "$work/gpus/$i"
	printf 'GPU UUID: GPU-%08d-0000-0000-0000-000000000000\nDevice Minor: %d\n' "$i" "$i" >"$work/gpus/$i/information"
done
sed "s|^driver_root = /\$|driver_root = $work/nv|; s|^version_file.*|version = 550.54.15|; s|^device_uuids = .*|device_uuids = $work/gpus/*/information|" \
	conf/nvidia.ini >"$work/nvcfg/nvidia.ini"
chmod 0644 "$work/nvcfg/nvidia.ini"
"$bin" cdi -c "$work/nvcfg" >/dev/null
list_nv() { "$bin" list -c "$work/nvcfg"; }
cdi_nv() { "$bin" cdi -c "$work/nvcfg"; }
read -r ref_a ours_a q_a < <(paired list_nv cdi_nv)

# (b)
test/fixtures/demo-vendor.sh "$work/dr" "$work/cfg" >/dev/null
"$bin" cdi -c "$work/cfg" -o "$work/demo.json" demo
HOOK="$bin ocidec-hook -c $work/cfg prestart" test/fixtures/bundle.sh "$work/hooked" OCI_DEMO=all -- demo-tool >/dev/null
test/fixtures/bundle.sh "$work/cdi" -- demo-tool >/dev/null
test/fixtures/cdi-apply.py "$work/demo.json" "$work/cdi/config.json" all
run_in "$work/hooked" && run_in "$work/cdi"    # both work before timing
run_hooked() { run_in "$work/hooked"; }
run_cdi() { run_in "$work/cdi"; }
read -r ref_b ours_b q_b < <(paired run_hooked run_cdi)

echo "runs per round: $N, rounds: $R; medians, ratio = median of paired rounds"
row "ocidec list, fake NVIDIA tree (reference for a)" "$ref_a"
row "(a) ocidec cdi, fake NVIDIA tree" "$ours_a" "$ref_a" "$q_a"
row "runc run, demo through the vendor hook (ref. for b)" "$ref_b"
row "(b) runc run, demo through the CDI spec" "$ours_b" "$ref_b" "$q_b"
