#!/usr/bin/env bats
# selinux-check against a fake selinuxfs tree (--selinuxfs): enforcing,
# permissive, disabled, the policy type missing, wrong labels, JSON. The
# labels are real security.selinux attributes on this machine's file systems.

load helpers

setup() {
	common_setup
	demo_vendor_with_contexts
	FS=$BATS_TEST_TMPDIR/selinuxfs
	mkdir -p "$FS/booleans"
	echo 1 >"$FS/enforce"
	: >"$FS/context"                       # a write to it succeeds: the type is known
	echo "0 0" >"$FS/booleans/container_use_devices"
	echo "1 1" >"$FS/booleans/container_manage_cgroup"
}

check() {
	"$OCIDEC" selinux-check -c "$CFG" --selinuxfs "$FS" "$@"
}

@test "enforcing, module loaded, labels right: all in order, exit 0" {
	relabel -c "$CFG"
	run check
	assert_success
	assert_output "$(printf '%s\n' "SELinux: enforcing (selinuxfs at $FS)" \
		"policy: ocidec_container_t is loaded" \
		"boolean container_use_devices: off" \
		"boolean container_manage_cgroup: on" \
		"labels: 9 paths checked" "all in order")"
}

@test "permissive is reported as such" {
	relabel -c "$CFG"
	echo 0 >"$FS/enforce"
	run check
	assert_success
	assert_line --index 0 "SELinux: permissive (selinuxfs at $FS)"
}

@test "disabled: said so, exit 0; this machine without selinuxfs too" {
	run check --selinuxfs "$BATS_TEST_TMPDIR/nothing"
	assert_success
	assert_output "SELinux: disabled (no selinuxfs at $BATS_TEST_TMPDIR/nothing); nothing to check"
	run selinux-check -c "$CFG"
	assert_success
	assert_output "SELinux: disabled (no selinuxfs mounted); nothing to check"
}

@test "the policy without ocidec_container_t: the problem and the command that fixes it" {
	relabel -c "$CFG"
	rm "$FS/context"
	mkdir "$FS/context"                   # the write fails, as the kernel's does for an unknown type
	run check
	assert_failure 1
	assert_line --regexp "^problem: the policy does not know ocidec_container_t \(.*\)$"
	assert_line "  fix: make -C selinux && semodule -i selinux/ocidec.pp"
	assert_line "1 problem"
}

@test "wrong labels: each path with what it has, what it needs, and ocidec relabel" {
	run check
	assert_failure 1
	assert_line "problem: $DR/dev/democtl is labelled <no context>, demo expects $DEVCTX"
	assert_line "problem: $DR/usr/bin/demo-tool is labelled <no context>, demo expects $FILECTX"
	assert_line "  fix: ocidec relabel demo"
	assert_line "9 problems"
	setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$DR/usr/bin/demo-tool"
	relabel -c "$CFG"
	setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$DR/usr/bin/demo-tool"
	run check
	assert_failure 1
	assert_line "problem: $DR/usr/bin/demo-tool is labelled system_u:object_r:etc_t:s0, demo expects $FILECTX"
	assert_line "1 problem"
}

@test "container_use_devices on is a problem: it opens every device to every container" {
	relabel -c "$CFG"
	echo "1 1" >"$FS/booleans/container_use_devices"
	run check
	assert_failure 1
	assert_line "  fix: setsebool -P container_use_devices off"
}

@test "--json: one object for scripts" {
	run check --json
	assert_failure 1
	run perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
		printf "%s %s %s %d %d %s %s\n", $j->{mode}, $j->{ocidec_container_t} ? "loaded" : "missing",
			$j->{booleans}{container_use_devices} ? "on" : "off", scalar @{$j->{paths}},
			scalar @{$j->{problems}}, $j->{problems}[0]{fix}, $j->{ok} ? "ok" : "not-ok"' <<<"$output"
	assert_output "enforcing loaded off 9 9 ocidec relabel demo not-ok"
	relabel -c "$CFG"
	run check --json
	assert_success
	run perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print $j->{ok} ? "ok\n" : "not-ok\n"' <<<"$output"
	assert_output ok
	run selinux-check -c "$CFG" --json
	assert_success
	assert_output '{"mode":"disabled","paths":[],"problems":[],"ok":true}'
}
