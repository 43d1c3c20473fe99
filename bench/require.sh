#!/bin/bash
# bench/require.sh: the image's requirements (NVIDIA_REQUIRE_CUDA), measured
# in the same run: the hook's dry run for a container given every GPU of
# Debian 12's packaged 535 driver (test/fixtures/debian-nvidia.sh, cached
# under build/test-data) with CUDA images' NVIDIA_REQUIRE_CUDA, against the
# same container without it (the driver's CUDA version is read from
# libcuda's 29 MB, from the page cache, for each container that has
# requirements).
# Rounds alternate reference and ours; the ratio is the median of the
# per-round ratios (bench/lib.sh).
# Usage: bench/require.sh [N] [R]   (as root)
set -eu
cd "$(dirname "$0")/.."
N=${1:-20} R=${2:-5}
. bench/lib.sh

test/fixtures/debian-nvidia.sh "$work/dr" >/dev/null
ver=$(cd "$work/dr/usr/lib/x86_64-linux-gnu/nvidia/current" && ls libcuda.so.*.* | sed 's/^libcuda\.so\.//')
mkdir -m 0755 "$work/cfg"
sed "s|^driver_root = /$|driver_root = $work/dr|; s|^version_file = .*|version = $ver|" conf/nvidia.ini >"$work/cfg/nvidia.ini"
chmod 0644 "$work/cfg/nvidia.ini"
for b in plain required; do
	mkdir -p "$work/$b/rootfs"
	req=$([ $b = required ] && echo ', "NVIDIA_REQUIRE_CUDA=cuda>=12.2 brand=tesla,driver>=470,driver<471 brand=tesla,driver>=525,driver<526"' || true)
	printf '{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "process": {"env": ["PATH=/bin", "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"%s]}, "linux": {"namespaces": [{"type": "mount"}]}}' \
		"$req" >"$work/$b/config.json"
done
plain() { "$bin" hook -c "$work/cfg" --dry-run <<<"{\"bundle\": \"$work/plain\", \"pid\": $$}"; }
required() { "$bin" hook -c "$work/cfg" --dry-run <<<"{\"bundle\": \"$work/required\", \"pid\": $$}"; }
plain >/dev/null && required >/dev/null   # both work before timing
read -r ref ours q < <(paired plain required)
row "hook --dry-run, GPU container (reference)" "$ref"
row "  with NVIDIA_REQUIRE_CUDA (CUDA 12.2 read from libcuda)" "$ours" "$ref" "$q"
