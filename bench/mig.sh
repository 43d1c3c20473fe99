#!/bin/bash
# bench/mig.sh: a MIG device against a whole GPU, measured in the same run:
# the hook's dry run for a container given MIG device MIG-<uuid> (the MIG
# map read and checked against the instances the driver shows, the cap
# nodes' minors from mig-minors) against the same container given GPU 0,
# on the fake driver root with MIG (test/fixtures/driver-root.sh,
# mig-host.sh: no GPU here) under the shipped nvidia.ini.
# Rounds alternate reference and ours; the ratio is the median of the
# per-round ratios (bench/lib.sh).
# Usage: bench/mig.sh [N] [R]   (as root)
set -eu
cd "$(dirname "$0")/.."
N=${1:-50} R=${2:-5}
. bench/lib.sh

test/fixtures/driver-root.sh "$work/dr" >/dev/null
test/fixtures/mig-host.sh "$work/dr"
mkdir -m 0755 "$work/cfg"
sed "s|^driver_root = /$|driver_root = $work/dr|; s|^version_file = .*|version = 550.54.15|
	s|^device_uuids = |device_uuids = $work/dr|; s|^mig_minors = |mig_minors = $work/dr|
	s|^mig_caps = |mig_caps = $work/dr|; s|^mig_map = .*|mig_map = $work/mig.map|" conf/nvidia.ini >"$work/cfg/nvidia.ini"
chmod 0644 "$work/cfg/nvidia.ini"
cat "$work/dr/smi-L.txt" "$work/dr/smi-q.txt" | "$bin" mig-map -c "$work/cfg"
for b in gpu mig; do
	mkdir -p "$work/$b/rootfs"
	dev=$([ $b = mig ] && echo MIG-0b3c7a34-5c4e-5d7a-9d1c-1a2b3c4d5e02 || echo 0)
	printf '{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin", "NVIDIA_VISIBLE_DEVICES=%s", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"]}, "linux": {"namespaces": [{"type": "mount"}]}}' \
		"$dev" >"$work/$b/config.json"
done
gpu() { "$bin" hook -c "$work/cfg" --dry-run <<<"{\"bundle\": \"$work/gpu\", \"pid\": $$}"; }
mig() { "$bin" hook -c "$work/cfg" --dry-run <<<"{\"bundle\": \"$work/mig\", \"pid\": $$}"; }
gpu >/dev/null && mig | grep -q nvidia-cap157   # both work before timing
read -r ref ours q < <(paired gpu mig)
row "hook --dry-run, GPU 0 (reference)" "$ref"
row "  MIG device by UUID (map, mig-minors, /proc)" "$ours" "$ref" "$q"
