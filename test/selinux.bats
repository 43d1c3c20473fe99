#!/usr/bin/env bats
# The SELinux policy module (selinux/), built with Debian's policy devel
# Makefile, linked with refpolicy's container module (from
# selinux-policy-src: Debian's selinux-policy-default lacks it) into a
# policy store of the test's own (selinux-policy-default's as the base, no
# reload), and checked with sesearch. The machine's own store is untouched.

load helpers

setup_file() {
	export W=$BATS_FILE_TMPDIR/se
	mkdir -p "$W/src" "$W/container" "$W/root/var/lib/selinux" "$W/root/etc/selinux"
	tar --zstd -xf /usr/src/selinux-policy-src.tar.zst -C "$W/src"
	cp "$W"/src/selinux-policy-src/policy/modules/services/container.{te,if,fc} "$W/container/"
	make -s -C "$W/container" -f /usr/share/selinux/devel/Makefile container.pp >/dev/null
	cp -r "$BATS_TEST_DIRNAME/../selinux" "$W/ocidec"
	make -s -C "$W/ocidec" CONTAINER_IF="$W/container/container.if" >"$W/build.log" 2>&1
	cp -a /var/lib/selinux/default "$W/root/var/lib/selinux/"
	cp -a /etc/selinux/default "$W/root/etc/selinux/"
	(cd /var/lib/selinux/default && find . -type f -exec sha256sum {} + | sort) >"$W/host-store.before"
	semodule -p "$W/root" -s default -n -i "$W/container/container.pp" "$W/ocidec/ocidec.pp" \
		>"$W/semodule.log" 2>&1
	export POLICY=$W/root/etc/selinux/default/policy/policy.33
}

setup() {
	common_setup
	is_static || skip "the policy is checked once, in the static build's pass"
}

# allowed SRC TGT CLASS PERM: sesearch finds a rule
allowed() {
	[ -n "$(sesearch -A -s "$1" -t "$2" -c "$3" -p "$4" "$POLICY")" ]
}

@test "the module builds with the policy devel Makefile and links into a store" {
	assert_file_exist "$W/ocidec/ocidec.pp"
	assert_file_exist "$POLICY"
	run semodule -p "$W/root" -s default -l
	assert_line ocidec
	assert_line container
}

@test "ocidec_container_t may use the accelerator devices" {
	allowed ocidec_container_t xserver_misc_device_t chr_file write
	allowed ocidec_container_t xserver_misc_device_t chr_file read
	allowed ocidec_container_t dri_device_t chr_file write
	allowed ocidec_container_t infiniband_device_t chr_file write
	allowed ocidec_container_t device_t chr_file write     # generic char devices (Solarflare)
}

@test "ocidec_container_t may read and run the injected driver files and reach the IPC sockets" {
	allowed ocidec_container_t ocidec_driver_file_t file execute
	allowed ocidec_container_t ocidec_driver_file_t file map
	allowed ocidec_container_t container_ro_file_t file execute
	allowed ocidec_container_t ocidec_ipc_t sock_file write
}

@test "and nothing more: no writing etc_t, no reading shadow_t, no raw disks" {
	refute allowed ocidec_container_t etc_t file write
	refute allowed ocidec_container_t shadow_t file read
	refute allowed ocidec_container_t fixed_disk_device_t blk_file read
	refute allowed ocidec_container_t ocidec_driver_file_t file write
	# and container_t itself gets no accelerator
	refute allowed container_t xserver_misc_device_t chr_file write
}

@test "the file contexts label the places drivers live" {
	fc=$W/root/etc/selinux/default/contexts/files/file_contexts
	run grep -F '/run/nvidia/driver(/.*)?' "$fc"
	assert_output --partial "system_u:object_r:ocidec_driver_file_t:s0"
	run grep -F '/run/nvidia-persistenced(/.*)?' "$fc"
	assert_output --partial "ocidec_ipc_t"
}

@test "the machine's own policy store was not touched" {
	run diff "$W/host-store.before" <(cd /var/lib/selinux/default && find . -type f -exec sha256sum {} + | sort)
	assert_success
}
