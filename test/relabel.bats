#!/usr/bin/env bats
# relabel: the contexts the vendor config names, set with lsetxattr on the
# paths `list` prints. This machine has no SELinux, but its file systems keep
# security.selinux attributes (ext4, tmpfs), read back with getfattr.

load helpers

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/dr
}

teardown() {
	for m in "$BATS_TEST_TMPDIR/dr/etc/demo" "$BATS_TEST_TMPDIR/dr"; do
		mountpoint -q "$m" && umount "$m" || true
	done
}

vendor() {
	demo_vendor_with_contexts
}

ctx() {
	getfattr -h --only-values -n security.selinux "$1" 2>/dev/null | tr -d '\0'
}

@test "device nodes and files get the contexts the config names" {
	vendor
	run relabel -c "$CFG"
	assert_success
	assert_output ""
	assert_equal "$(ctx "$DR/dev/democtl")" "$DEVCTX"
	assert_equal "$(ctx "$DR/dev/demo1")" "$DEVCTX"
	assert_equal "$(ctx "$DR/usr/bin/demo-tool")" "$FILECTX"
	assert_equal "$(ctx "$DR/opt/demo/lib/libdemo.so.1.0")" "$FILECTX"
	assert_equal "$(ctx "$DR/usr/share/demo")" "$FILECTX"
}

@test "-v says each change as restorecon -v does; a second run has nothing to say" {
	vendor
	run relabel -c "$CFG" -v
	assert_success
	assert_line "Relabeled $DR/dev/democtl from <no context> to $DEVCTX"
	assert_line "Relabeled $DR/etc/demo/demo.conf from <no context> to $FILECTX"
	run relabel -c "$CFG" -v
	assert_success
	assert_output ""
	setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$DR/etc/demo/demo.conf"
	run relabel -c "$CFG" -v
	assert_output "Relabeled $DR/etc/demo/demo.conf from system_u:object_r:etc_t:s0 to $FILECTX"
}

@test "-n says what would change and changes nothing" {
	vendor
	run relabel -c "$CFG" -n
	assert_success
	assert_line "Would relabel $DR/usr/bin/demo-tool from <no context> to $FILECTX"
	assert_equal "$(ctx "$DR/usr/bin/demo-tool")" ""
	assert_equal "$(ctx "$DR/dev/democtl")" ""
}

@test "a symlink is labelled itself; its target inside the driver root too; nothing outside" {
	vendor
	mkdir -p "$BATS_TEST_TMPDIR/outside"
	echo outside >"$BATS_TEST_TMPDIR/outside/file"
	ln -s "$BATS_TEST_TMPDIR/outside/file" "$DR/etc/demo/outside.conf"
	sed -i 's|^miscellaneous = .*|miscellaneous = /etc/demo/demo.conf /etc/demo/outside.conf|' "$CFG/demo.ini"
	run relabel -c "$CFG"
	assert_equal "$(ctx "$DR/opt/demo/lib/libdemo.so.1")" "$FILECTX"       # the link
	assert_equal "$(ctx "$DR/opt/demo/lib/libdemo.so.1.0")" "$FILECTX"     # its target
	assert_equal "$(ctx "$BATS_TEST_TMPDIR/outside/file")" ""
}

@test "a path that cannot be labelled is reported; the rest is done; exit 1" {
	vendor
	mount --bind "$DR/etc/demo" "$DR/etc/demo"
	mount -o remount,bind,ro "$DR/etc/demo"
	run relabel -c "$CFG"
	assert_failure 1
	assert_line "ocidec relabel: error: $DR/etc/demo/demo.conf: setting $FILECTX: Read-only file system"
	assert_line "ocidec relabel: error: 1 path could not be labelled"
	assert_equal "$(ctx "$DR/usr/bin/demo-tool")" "$FILECTX"
}

@test "a driver root on tmpfs (a driver container's /run/nvidia/driver)" {
	mkdir -p "$DR"
	mount -t tmpfs tmpfs "$DR"
	vendor
	run relabel -c "$CFG"
	assert_success
	assert_equal "$(ctx "$DR/opt/demo/lib/libdemo.so.1.0")" "$FILECTX"
	assert_equal "$(ctx "$DR/dev/democtl")" "$DEVCTX"
}

@test "a context that is not one is a config error" {
	vendor
	printf '[vendor]\nname = x\nactivation_flag = OCI_X\nselinux_file_context = not a context\n' | write_ini x
	run relabel -c "$CFG"
	assert_failure 2
	assert_output "ocidec relabel: $CFG/x.ini:4: selinux_file_context 'not a context' is not an SELinux context (user:role:type:level)"
}

@test "a driver root on overlay (a driver container's rootfs) keeps the labels in its upper layer" {
	lower=$BATS_TEST_TMPDIR/lower upper=$BATS_TEST_TMPDIR/upper work=$BATS_TEST_TMPDIR/work
	mkdir -p "$lower" "$upper" "$work" "$BATS_TEST_TMPDIR/dr"
	demo_vendor_with_contexts "$lower"
	DR=$BATS_TEST_TMPDIR/dr
	sed -i "s|^driver_root = .*|driver_root = $DR|" "$CFG/demo.ini"
	mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$DR"
	run relabel -c "$CFG"
	assert_success
	assert_equal "$(ctx "$DR/usr/bin/demo-tool")" "$FILECTX"
	assert_equal "$(ctx "$DR/dev/democtl")" "$DEVCTX"
	assert_equal "$(ctx "$lower/usr/bin/demo-tool")" ""          # the lower layer is left alone
}

@test "a driver-root file name holding a newline or ESC forges no line of relabel -v or -n (review of issue 26)" {
	vendor
	f=$(printf '%s/opt/demo/lib/libdemo.so.9\nall in order\033[2J' "$DR")
	cp "$DR/opt/demo/lib/libdemo.so.1.0" "$f"
	run "$OCIDEC" relabel -c "$CFG" -n
	assert_success
	refute_line "all in order"
	assert_line --partial 'libdemo.so.9\x0aall in order\x1b[2J'
	rm -f "$f"
}

@test "a file's current label holding a newline or ESC (whoever owns the file sets it) forges no line of relabel -n or -v (issue 32, review)" {
	vendor
	setfattr -n security.selinux -v "$(printf 'x\nRelabeled /etc/shadow from a to b\033[2J')" "$DR/etc/demo/demo.conf"
	for opt in -n -v; do
		run "$OCIDEC" relabel -c "$CFG" "$opt"
		assert_success
		refute_line --regexp "^Relabeled /etc/shadow"
		refute_output --partial $'\e'
		assert_output --partial 'from x\x0aRelabeled /etc/shadow from a to b\x1b[2J to'
	done
}
