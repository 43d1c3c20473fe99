#!/usr/bin/env bats
# selinux-check against a fake selinuxfs tree (--selinuxfs) and a fake
# policy root (--root: /etc/selinux/config and the policy store's module
# directories): enforcing, permissive, disabled, the two bases (Fedora/RHEL
# with container-selinux, Debian's refpolicy), the policy type missing,
# wrong labels, JSON. The labels are real security.selinux attributes on
# this machine's file systems.

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
	# a RHEL host: virt's boolean, container-selinux's module at priority 200
	echo "0 0" >"$FS/booleans/virt_sandbox_use_all_caps"
	ROOT=$BATS_TEST_TMPDIR/root
	mkdir -p "$ROOT/etc/selinux" "$ROOT/var/lib/selinux/targeted/active/modules/200/container" \
		"$ROOT/var/lib/selinux/targeted/active/modules/100/base"
	printf 'SELINUX=enforcing\nSELINUXTYPE=targeted\n' >"$ROOT/etc/selinux/config"
}

check() {
	"$OCIDEC" selinux-check -c "$CFG" --selinuxfs "$FS" --root "$ROOT" "$@"
}

@test "enforcing, module loaded, labels right: all in order, exit 0" {
	relabel -c "$CFG"
	run check
	assert_success
	# the shape of ocidec check's report (issue 34: one for both checkers)
	assert_output "$(printf '%s\n' "info     selinux: enforcing (selinuxfs at $FS)" \
		"info     policy: targeted, Fedora/RHEL/CoreOS base with container-selinux (v2.17x to v2.2xx, by its booleans)" \
		"info     policy: container module container at priority 200" \
		"ok       policy: ocidec_container_t is loaded" \
		"info     boolean: container_use_devices off" \
		"info     boolean: container_manage_cgroup on" \
		"info     boolean: virt_sandbox_use_all_caps off" \
		"ok       labels: 9 paths checked" "0 problems: all in order")"
}

@test "the bases: container-selinux's release by its booleans, Debian's refpolicy, no container module at all" {
	relabel -c "$CFG"
	echo "0 0" >"$FS/booleans/container_use_xserver_devices"
	run check
	assert_success
	assert_line "info     policy: targeted, Fedora/RHEL/CoreOS base with container-selinux (v2.2xx or later, by its booleans)"
	assert_line "info     boolean: container_use_xserver_devices off"
	# on, it gives every container_t the NVIDIA devices
	echo "1 1" >"$FS/booleans/container_use_xserver_devices"
	run check
	assert_failure 1
	assert_line "PROBLEM  boolean: container_use_xserver_devices is on: every container_t may use the NVIDIA devices; ocidec_container_t needs no such boolean"
	assert_line "         fix: setsebool -P container_use_xserver_devices off"
	# Debian: refpolicy's booleans, its container module at priority 100 in the default store
	rm "$FS"/booleans/*
	echo "0 0" >"$FS/booleans/container_mounton_non_security"
	printf 'SELINUXTYPE=default\n' >"$ROOT/etc/selinux/config"
	mkdir -p "$ROOT/var/lib/selinux/default/active/modules/100/container"
	run check
	assert_success
	assert_line "info     policy: default, refpolicy base (Debian)"
	assert_line "info     policy: container module container at priority 100"
	# no container module: the problem, and what installs one
	rm -r "$ROOT/var/lib/selinux/default/active/modules/100/container" "$FS/booleans/container_mounton_non_security"
	run check
	assert_failure 1
	assert_line "PROBLEM  policy: default, no container module: no container_t for ocidec_container_t to build on"
	assert_line "         fix: Fedora, RHEL: dnf install container-selinux; Debian: semodule -i container.pp (built from selinux-policy-src)"
}

@test "permissive is reported as such" {
	relabel -c "$CFG"
	echo 0 >"$FS/enforce"
	run check
	assert_success
	assert_line --index 0 "info     selinux: permissive (selinuxfs at $FS)"
}

@test "disabled: said so, exit 0; this machine without selinuxfs too" {
	run check --selinuxfs "$BATS_TEST_TMPDIR/nothing"
	assert_success
	assert_output "$(printf '%s\n' "info     selinux: disabled (no selinuxfs at $BATS_TEST_TMPDIR/nothing): nothing to check" \
		"0 problems: all in order")"
	run selinux-check -c "$CFG"
	assert_success
	assert_line --index 0 "info     selinux: disabled (no selinuxfs mounted): nothing to check"
}

@test "the policy without ocidec_container_t: the problem and the command that fixes it" {
	relabel -c "$CFG"
	# the node refuses the context with EINVAL, as the kernel's does for an
	# unknown type: the process's own attribute, on this kernel without
	# SELinux, refuses it the same way
	rm "$FS/context"
	ln -s /proc/self/attr/current "$FS/context"
	run check
	assert_failure 1
	assert_line --regexp "^PROBLEM  policy: the policy does not know ocidec_container_t \(.*\)$"
	assert_line "         fix: dnf install ocidec-selinux (CoreOS: semodule -i ocidec.cil, built for its container-selinux)"
	assert_line "1 problem: each with its fix above"
}

@test "a check that cannot be made is not a problem found: exit 3, nothing said of it" {
	relabel -c "$CFG"
	rm "$FS/context"                      # no node to ask the policy with
	run check
	assert_failure 3
	assert_line "ocidec selinux-check: $FS/context: the policy's types cannot be asked: No such file or directory"
	refute_line --partial "all in order"
	refute_line --partial "labels:"
	assert_line "0 problems: not all checked (the error above)"
	run --separate-stderr check --json
	assert_failure 3
	run perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print $j->{ok} ? "ok\n" : "not-ok\n"' <<<"$output"
	assert_output not-ok
}

@test "wrong labels: each path with what it has, what it needs, and ocidec relabel" {
	run check
	assert_failure 1
	assert_line "PROBLEM  labels: $DR/dev/democtl is labelled <no context>, demo expects $DEVCTX"
	assert_line "PROBLEM  labels: $DR/usr/bin/demo-tool is labelled <no context>, demo expects $FILECTX"
	assert_line "         fix: ocidec relabel demo"
	assert_line "9 problems: each with its fix above"
	setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$DR/usr/bin/demo-tool"
	relabel -c "$CFG"
	setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$DR/usr/bin/demo-tool"
	run check
	assert_failure 1
	assert_line "PROBLEM  labels: $DR/usr/bin/demo-tool is labelled system_u:object_r:etc_t:s0, demo expects $FILECTX"
	assert_line "1 problem: each with its fix above"
}

@test "container_use_devices on is a problem: it opens every device to every container" {
	relabel -c "$CFG"
	echo "1 1" >"$FS/booleans/container_use_devices"
	run check
	assert_failure 1
	assert_line "         fix: setsebool -P container_use_devices off"
}

@test "--json: one object for scripts" {
	run check --json
	assert_failure 1
	run perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
		printf "%s %s %d %s %s %d %d %s %s\n", $j->{mode}, $j->{base}, $j->{container_module}{priority},
			$j->{ocidec_container_t} ? "loaded" : "missing",
			$j->{booleans}{container_use_devices} ? "on" : "off", scalar @{$j->{paths}},
			$j->{problems}, (grep { $_->{status} eq "problem" } @{$j->{checks}})[0]{fix},
			$j->{ok} ? "ok" : "not-ok"' <<<"$output"
	assert_output "enforcing container-selinux 200 loaded off 9 9 ocidec relabel demo not-ok"
	relabel -c "$CFG"
	run check --json
	assert_success
	run perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print $j->{ok} ? "ok\n" : "not-ok\n"' <<<"$output"
	assert_output ok
	run selinux-check -c "$CFG" --json
	assert_success
	# ocidec check's shape: ok, problems, checks; then selinux-check's own fields
	run perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
		printf "%s %d %d %s %s: %s\n", $j->{mode}, scalar @{$j->{paths}}, $j->{problems}, $j->{ok} ? "ok" : "not-ok",
			$j->{checks}[0]{status}, $j->{checks}[0]{detail}' <<<"$output"
	assert_output "disabled 0 0 ok info: disabled (no selinuxfs mounted): nothing to check"
}

@test "the SELinux user and role decide nothing: a node made by an unconfined user is in order; a path no config names a context for is asked of the kernel, and where there is none it is said so" {
	relabel -c "$CFG"
	setfattr -h -n security.selinux -v "unconfined_u:object_r:xserver_misc_device_t:s0" "$DR/dev/demo0"
	run check
	assert_success
	assert_line "ok       labels: 9 paths checked"
	assert_line "0 problems: all in order"
	# the type differs: a problem
	setfattr -h -n security.selinux -v "unconfined_u:object_r:user_tmp_t:s0" "$DR/dev/demo1"
	run check
	assert_failure 1
	assert_line "PROBLEM  labels: $DR/dev/demo1 is labelled unconfined_u:object_r:user_tmp_t:s0, demo expects $DEVCTX"
	# a vendor that names no context: its paths are the kernel's to judge
	# (selinuxfs's access node); this fake selinuxfs has no kernel behind it,
	# the files no attribute (a symlink: its target is checked)
	setfattr -h -n security.selinux -v "$DEVCTX" "$DR/dev/demo1"
	"$FIXTURES/demo-vendor.sh" "$BATS_TEST_TMPDIR/dr2" "$BATS_TEST_TMPDIR/c2" >/dev/null
	sed 's/^name = demo$/name = plain/; s/^activation_flag = OCI_DEMO/activation_flag = OCI_PLAIN/' \
		"$BATS_TEST_TMPDIR/c2/demo.ini" | write_ini plain
	run check
	assert_success
	assert_line "ok       labels: 17 paths checked"
	assert_line "info     labels: 8 paths not checked: no context named, and no kernel policy with ocidec_container_t to ask (selinuxfs's access node)"
}

@test "--policy-label answers as libselinux (matchpathcon) on this host's own policy, for a path of every kind (issue 34: the file_contexts matcher that replaced regcomp; a review found it crashed on Debian's policy)" {
	[ -f /etc/selinux/default/contexts/files/file_contexts ] || skip "no SELinux policy here (selinux-policy-default)"
	command -v matchpathcon >/dev/null || skip "no matchpathcon (selinux-utils)"
	local n=0 p kind want
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	for p in /dev/null /dev/tty /dev/loop0 /usr/bin/env /bin/sh /etc/passwd /etc/shadow /etc /var/log /run /tmp \
		/usr/lib/x86_64-linux-gnu/libc.so.6 /usr/sbin/sshd /var/lib/docker /etc/selinux/default/policy \
		/usr/libexec "$BATS_TEST_TMPDIR/fifo" /lib64/ld-linux-x86-64.so.2; do
		[ -e "$p" ] || [ -L "$p" ] || continue
		case $(stat -c %F "$p") in
		directory) kind=dir ;; "character special file") kind=chr_file ;; "block special file") kind=blk_file ;;
		"symbolic link") kind=lnk_file ;; fifo) kind=fifo_file ;; socket) kind=sock_file ;; *) kind=file ;;
		esac
		want=$(matchpathcon -n -m "$kind" "$p")
		run "$OCIDEC" selinux-check --policy-label "$p"
		assert_success
		assert_output "$want"
		n=$((n + 1))
	done
	[ "$n" -ge 8 ]
}
