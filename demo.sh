#!/bin/sh
# demo.sh: ocidec on a fake NVIDIA driver root made here (device nodes,
# gcc-built libraries, an ld.so.cache from glibc's ldconfig, a binary, an
# IPC socket), with the shipped conf/nvidia.ini pointed at it.
# Until the hook lands (issue 4) the demo shows what would be injected:
# `ocidec list` (the restorecon inventory) and the ld.so.cache it read.
set -eu
cd "$(dirname "$0")"
[ -x build/ocidec ] || ./build.sh
work=$(mktemp -d /tmp/ocidec-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
test/fixtures/driver-root.sh "$work/driver" >/dev/null
mkdir -m 0755 "$work/conf.d"
sed "s|^driver_root = /\$|driver_root = $work/driver|; s|^version_file.*|version = 550.54.15|" \
	conf/nvidia.ini >"$work/conf.d/nvidia.ini"
chmod 0644 "$work/conf.d/nvidia.ini"

echo "== ocidec list -c $work/conf.d   (what a container asking OCI_NVIDIA=all gets)"
build/ocidec list -c "$work/conf.d"
echo
echo "== ocidec list --features compute --devices 1"
build/ocidec list -c "$work/conf.d" --features compute --devices 1
echo
echo "== ocidec ldcache -p -r $work/driver   (the driver root's ld.so.cache)"
build/ocidec ldcache -p -r "$work/driver"
echo
echo "== the binary"
ls -l build/ocidec
file build/ocidec
