#!/bin/sh
# demo.sh: a real container gets a device, a library and a program injected.
#
# A demo vendor (test/fixtures/demo-vendor.sh): a driver root with a char
# device node (10:237, which runc's default device rules deny), a library in
# a non-standard directory (/opt/demo/lib) and a program linked against it,
# and its INI file. A runc bundle: Debian's busybox-static plus glibc's loader
# and libc, `OCI_DEMO=all` in its env, ocidec's hook as its prestart hook.
# Inside, the program runs through the ld.so.cache the hook updated, the
# device opens, and /proc/self/mountinfo shows the read-only bind mounts.
# Usage: ./demo.sh [--keep]   (--keep: the vendor, its config and the bundle
# stay, for the commands it prints at the end)
set -eu
keep=
[ "${1:-}" = --keep ] && keep=1
cd "$(dirname "$0")"
[ -x build/ocidec ] || ./build.sh
work=$(mktemp -d /tmp/ocidec-demo.XXXXXX)
id=ocidec-demo-$$
trap 'runc delete -f "$id" >/dev/null 2>&1 || true; [ -n "$keep" ] || rm -rf "$work"' EXIT
top=$(pwd)

test/fixtures/demo-vendor.sh "$work/driver" "$work/conf.d" >/dev/null
echo "== the vendor config ($work/conf.d/demo.ini)"
sed -n '/^\[/,$p' "$work/conf.d/demo.ini"
HOOK="$top/build/ocidec ocidec-hook -c $work/conf.d prestart" \
	test/fixtures/bundle.sh "$work/bundle" OCI_DEMO=all -- sh /inside.sh
cat >"$work/bundle/rootfs/inside.sh" <<'INSIDE'
echo "== inside the container: demo-tool (found through /etc/ld.so.cache)"
demo-tool
echo "== the injected device: 10:237, which runc's default rules deny"
ls -l /dev/democtl
head -c 0 /dev/democtl && echo "opened /dev/democtl: the hook allowed it in the container's device cgroup"
echo "== the injected mounts in /proc/self/mountinfo"
grep -E " /(dev/democtl|dev/demo[0-9]|usr/bin/demo-tool|opt/demo/lib/[^ ]*|etc/demo/demo.conf|usr/share/demo) " /proc/self/mountinfo | cut -d" " -f4-6
INSIDE
echo "== runc run (hook: build/ocidec, as ocidec-hook prestart)"
(cd "$work/bundle" && runc run "$id")
echo "== ocidec ldcache -p -r <rootfs>: the container's cache, written by the hook"
build/ocidec ldcache -p -r "$work/bundle/rootfs"
echo
echo "== the binary"
ls -l build/ocidec
file build/ocidec
echo
if [ -n "$keep" ]; then
	cat <<NEXT
== next: the demo vendor is kept in $work
build/ocidec list -c $work/conf.d                  # the host files it gives
build/ocidec hook -c $work/conf.d --dry-run <<<'{"bundle": "$work/bundle"}'   # a container's edits
build/ocidec cdi -c $work/conf.d                   # its CDI spec
build/ocidec check -c $work/conf.d                 # this host, as a container would meet it
man -l man/ocidec.1                                # vendor configs, activation, security
rm -rf $work                                       # when done
NEXT
else
	echo "== next: ./demo.sh --keep keeps the demo vendor and prints commands to try with it; man -l man/ocidec.1"
fi
