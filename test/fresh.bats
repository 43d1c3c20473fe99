#!/usr/bin/env bats
# The README's first command on a fresh machine: a Debian 12 and a Debian
# 13 root made by debootstrap (--variant=minbase, then git: nothing else),
# this repository cloned inside, entered as the test beds are (pivot_root in
# private mount and PID namespaces, with /proc, /sys, /dev, tmpfs /run and
# /tmp; the host's network, for apt), and `./build.sh demo` run there as
# the README says. It installs its packages into that root with the root's
# own apt, from the archive the host's apt sources name: nothing on this
# machine changes. Once, in the static build's pass (the clone builds its
# own binary).

load helpers

TOP=$BATS_TEST_DIRNAME/..

setup() {
	common_setup
	is_static || skip "the fresh roots build their own binary, once, in the static build's pass"
	command -v debootstrap >/dev/null || skip "debootstrap is not installed"
}

# in_root ROOT SCRIPT: SCRIPT run by sh as root in ROOT, entered as a bed is
in_root() {
	unshare -m -p --fork --propagation private sh -c '
		set -e
		r=$1
		mount --bind "$r" "$r"
		mount -t proc proc "$r/proc"
		mount --rbind /sys "$r/sys"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs -o mode=0755 tmpfs "$r/run"
		mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
		cd "$r"
		mkdir -p .oldroot
		pivot_root . .oldroot
		umount -l /.oldroot
		rmdir /.oldroot
		exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 sh -c "$2"' sh "$1" "$2"
}

# fresh SUITE: the README's first command in a fresh SUITE root, as root:
# minbase, then git, then a clone of this checkout's commit
fresh() {
	local r=$BATS_TEST_TMPDIR/$1
	"$FIXTURES/chroot.sh" "$r" "$1"
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	run in_root "$r" 'export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq && apt-get install -y -qq --no-install-recommends git ca-certificates >/dev/null &&
		echo "git: $(git --version)"'
	assert_success
	git clone -q "$TOP" "$r/src"
	run in_root "$r" 'cd /src && ./build.sh demo; echo "build.sh demo: $?"'
	echo "# $1: $(grep -E "^build.sh: installing" <<<"$output" | cut -c1-120) ..." >&3
	echo "# $1: $(grep -E '^ocidec: [0-9]+ bytes' <<<"$output" | head -n 1)" >&3
	assert_line "build.sh demo: 0"
	assert_line --partial "demo-tool: the answer is 42"
	assert_line --partial "opened /dev/democtl"
}

@test "a fresh Debian 12 (minbase and git): the README's ./build.sh demo installs what it needs, builds both architectures and runs the demo (issue 47)" {
	fresh bookworm
}

@test "a fresh Debian 13 (minbase and git): the README's ./build.sh demo installs what it needs, builds both architectures and runs the demo (issue 47)" {
	fresh trixie
}
