#!/usr/bin/env bats
# The SELinux module on an enforcing kernel: a Debian 12 VM under qemu
# (software emulation, TCG; test/fixtures/selinux-vm.sh builds its disk once
# and boots it) booted with security=selinux enforcing=1, one boot per
# policy:
#   debian   Debian's refpolicy with refpolicy's container module;
#   fedora   Fedora's policy with container-selinux v2.250.0, same kernel
#            and Debian userspace (from ../shared/selinux-rhel, SELINUX_RHEL
#            elsewhere; skipped, with a message, when it is absent).
# In each boot (test/fixtures/selinux-vm-guest.sh): the project installed
# as its packages install it, the module loaded with semodule as
# rpm/ocidec.spec's %post loads it, the demo vendor's files and nodes
# labelled by `ocidec list --restorecon | restorecon` and by `ocidec relabel`, rootful
# and rootless podman (runc) running the vendor's program and opening its
# devices as ocidec_container_t, container_t denied them; then a mutant of
# the module, without the rule on the devices, loaded in its place: the
# same checks must fail on it. The AVCs of each step are the audit
# records stamped within it. Podman runs as the administrator's
# unconfined_t (Debian maps root and users to unconfined_u), as Debian has
# it: its store relabelled once (restorecon -R /var/lib/containers), the
# containers' output passed straight to a file (--log-driver passthrough;
# refpolicy lets no container domain write the pipes of an unconfined_t
# conmon).
# Times here (2 CPUs, TCG): the disk made from nothing in about 3 minutes
# (cached after), each boot about 3.5 minutes, half of it the two
# `semodule -i` (the policy rebuilt in emulation).

load helpers

RHEL=${SELINUX_RHEL:-$BATS_TEST_DIRNAME/../../shared/selinux-rhel}
VMSH=$BATS_TEST_DIRNAME/fixtures/selinux-vm.sh

# prepare BASE: the test disk's directory $V/BASE.in: the binary under
# test, `make install`'s tree, the demo vendor's files and its INI for the
# VM (driver root /, NVIDIA's and onload's node names: the labels the
# policy gives them), the image archive, the module built for BASE and
# its mutant (the device rule of ocidec.if taken out)
prepare() {
	local b=$1 sb=debian in=$V/$1.in
	[ "$b" = fedora ] && sb=v2.250.0
	mkdir -p "$in"
	"$FIXTURES/demo-vendor.sh" "$in/dr" "$V/cfg" >/dev/null
	rm -rf "$in/dr/dev" "$in/dr/run"
	sed 's|^driver_root = .*|driver_root = /|; s|^devices = /dev/democtl$|devices = /dev/nvidiactl /dev/onload|; s|^per_device_nodes = demo%u$|per_device_nodes = nvidia%u|' \
		"$V/cfg/demo.ini" >"$in/demo.ini"
	grep -q '^devices = /dev/nvidiactl /dev/onload$' "$in/demo.ini" || { echo "demo.ini: the devices were not rewritten"; return 1; }
	make -s -C "$BATS_TEST_DIRNAME/.." -o build/ocidec install DESTDIR="$in/inst" PREFIX=/usr >/dev/null
	cp "$OCIDEC" "$in/ocidec"
	[ -s "$V/image.tar" ] || {
		"$FIXTURES/bundle.sh" "$V/b" >/dev/null
		/usr/bin/python3 "$FIXTURES/cri.py" image "$V/b/rootfs" "$V/image.tar" docker.io/library/ocidec-test:1 -- sh
	}
	cp "$V/image.tar" "$in/image.tar"
	SELINUX_RHEL=$RHEL "$FIXTURES/selinux-bases.sh" "$V/se" "$sb" >/dev/null
	cp "$V/se/$sb/ocidec/ocidec.pp" "$in/ocidec.pp"
	rm -rf "$V/mutant" && cp -r "$BATS_TEST_DIRNAME/../selinux" "$V/mutant"
	sed -i '/ }:chr_file { rw_chr_file_perms map };$/d' "$V/mutant/ocidec.if"
	if grep -q 'xserver_misc_device_t dri_device_t.*:chr_file' "$V/mutant/ocidec.if"; then
		echo "the mutant still has the device rule"
		return 1
	fi
	SELINUX_RHEL=$RHEL "$FIXTURES/selinux-bases.sh" "$V/sem" "$sb" "$V/mutant" >/dev/null
	cp "$V/sem/$sb/ocidec/ocidec.pp" "$in/mutant.pp"
	cp "$FIXTURES/selinux-vm-guest.sh" "$in/run.sh"
}

setup_file() {
	is_static || return 0
	command -v qemu-system-x86_64 >/dev/null || return 0
	export V=$BATS_FILE_TMPDIR/vm BASES=debian
	[ -d "$RHEL/container-selinux/v2.250.0" ] && BASES="debian fedora"
	mkdir -p "$V"
	local t0
	t0=$(date +%s)
	"$VMSH" image >"$V/image.dir" 2>"$V/image.log" || return 0
	echo $(($(date +%s) - t0)) >"$V/image.time"
	for b in $BASES; do
		prepare "$b" >"$V/$b.prepare.log" 2>&1 || continue
		"$VMSH" run "$b" "$V/$b.in" "$V/$b" >"$V/$b.run.log" 2>&1 || true
	done
}

setup() {
	common_setup
	is_static || skip "the VM boots once, in the static build's pass"
	command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (Debian: apt install qemu-system-x86)"
}

# booted BASE: the VM of BASE ran its checks (else why not)
booted() {
	[ -s "$V/image.dir" ] || { cat "$V/image.log"; false; }
	[ -s "$V/$1/rc" ] || {
		echo "base $1: no results"
		cat "$V/$1.prepare.log" "$V/$1.run.log"
		tail -n 30 "$V/$1/console.log"
		false
	}
}

# bases: BASES, those with no Fedora reference said so
bases() {
	[[ " $BASES " == *" fedora "* ]] || echo "# $RHEL is absent: Fedora's policy is not booted" >&3
	echo "$BASES"
}

# out BASE STEP [EXT]: a step's output (EXT: rc, avc, t)
out() { cat "$V/$1/$2.${3:-out}"; }

# container_ok BASE STEP: the demo vendor's container of STEP ran in
# ocidec_container_t, its program ran, its devices opened, and no AVC
# names ocidec_container_t
container_ok() {
	local o
	o=$(out "$1" "$2")
	[ "$(out "$1" "$2" rc)" = 0 ] || { echo "$2: exit $(out "$1" "$2" rc): $o"; return 1; }
	grep -qx 'demo-tool: the answer is 42' <<<"$o" || { echo "$2: no demo-tool: $o"; return 1; }
	for d in nvidiactl onload nvidia0; do
		grep -qx "opened /dev/$d" <<<"$o" || { echo "$2: /dev/$d did not open: $o"; return 1; }
	done
	grep -q '^system_u:system_r:ocidec_container_t:s0:c[0-9]*,c[0-9]*$' <<<"$o" || { echo "$2: not ocidec_container_t: $o"; return 1; }
	! grep ocidec_container_t "$V/$1/$2.avc" || { echo "$2: AVCs"; return 1; }
}

# labels_match BASE STEP [PATTERN]: in STEP's listing of the vendor's paths
# (PATH TYPE EXPECTED), those matching PATTERN have the type matchpathcon
# gives them
labels_match() {
	awk -v re="${3:-.}" '$1 ~ re && $2 != $3 { print "wrong: " $0; bad = 1 } END { exit bad }' "$V/$1/$2.out"
}

@test "the VM boots enforcing (Debian 12's kernel, security=selinux enforcing=1) and the module loads with semodule -i" {
	for b in $(bases); do
		booted "$b"
		echo "# $b: image $(cat "$V/image.time")s (cached: $(cat "$V/image.dir")), boot and checks $(cat "$V/$b/boot.time")s," \
			"semodule -i $(awk '{ printf "%.0f", $2 - $1 }' "$V/$b/semodule.t")s" >&3
		run out "$b" getenforce
		assert_output Enforcing
		run out "$b" env
		assert_line --partial "security=selinux selinux=1 enforcing=1"
		assert_line --regexp '^unconfined_u:unconfined_r:unconfined_t:s0-s0:c0\.c1023$'
		assert_line container
		assert_line --regexp '^cgroup2fs$'
		[ "$(out "$b" semodule rc)" = 0 ] || { out "$b" semodule; false; }
		run out "$b" modules
		assert_line --regexp '^200 +ocidec +pp'
		# ocidec itself bin_t once the module is in, whatever container-selinux's
		# /usr/s?bin/ocid.* says (Fedora's policy has that pattern)
		run out "$b" ocidec-label
		assert_output --regexp '^[^ ]*:object_r:bin_t:s0$'
	done
}

@test "ocidec list --restorecon | restorecon -v -f - gives the vendor's files and nodes the labels the module's file contexts say" {
	for b in $(bases); do
		booted "$b"
		# the nodes start as the generic device_t, the library directory as usr_t
		run out "$b" labels-before
		assert_line "/dev/nvidiactl device_t xserver_misc_device_t"
		assert_line "/dev/onload device_t ocidec_device_t"
		assert_line "/opt/demo/lib/libdemo.so.1.0 usr_t lib_t"
		run out "$b" restorecon
		assert_line --regexp '^Relabeled /dev/nvidiactl from .*:device_t:s0 to .*:xserver_misc_device_t:s0$'
		assert_line --regexp '^Relabeled /dev/onload from .*:device_t:s0 to .*:ocidec_device_t:s0$'
		run labels_match "$b" labels-restorecon
		assert_success
	done
}

@test "a node made once the module is loaded (as nvidia-modprobe makes one) has its label at once" {
	for b in $(bases); do
		booted "$b"
		run out "$b" mknod-after
		assert_output --regexp '^/dev/nvidia2 [^ ]*:object_r:xserver_misc_device_t:s0$'
	done
}

@test "ocidec relabel gives the nodes the contexts the vendor configs name, the ones matchpathcon gives" {
	for b in $(bases); do
		booted "$b"
		[ "$(out "$b" relabel rc)" = 0 ] || { out "$b" relabel; false; }
		run out "$b" relabel
		assert_line --regexp '^Relabeled /dev/nvidia0 from .*:device_t:s0 to system_u:object_r:xserver_misc_device_t:s0$'
		assert_line --regexp '^Relabeled /dev/onload from .*:device_t:s0 to system_u:object_r:ocidec_device_t:s0$'
		run labels_match "$b" labels-relabel '^/dev/'
		assert_success
	done
}

@test "ocidec selinux-check tells the truth enforcing: the module missing, the nodes unlabelled (each with the policy's label), all in order once labelled; a library left user_tmp_t named with its type and the one it needs, the confined container failing on it" {
	for b in $(bases); do
		booted "$b"
		for s in selinux-check-nomodule selinux-check-before selinux-check-after selinux-check-usertmp selinux-check-restored; do
			{
				echo "# $b: $s (exit $(out "$b" $s rc)):"
				sed 's/^/#   /' "$V/$b/$s.out"
			} >&3
			run out "$b" $s
			assert_line --index 0 --regexp '^info     selinux: enforcing '
		done
		[ "$(out "$b" selinux-check-nomodule rc)" = 1 ]
		run out "$b" selinux-check-nomodule
		assert_line --regexp '^PROBLEM  policy: the policy does not know ocidec_container_t'
		# unlabelled nodes: the kernel asked, each named with the label it needs
		[ "$(out "$b" selinux-check-before rc)" = 1 ]
		run out "$b" selinux-check-before
		assert_line --regexp "^PROBLEM  labels: /dev/nvidiactl is labelled [^ ]*:device_t:s0 \(type device_t\): a confined container \(ocidec_container_t\) may not [a-z ]+ it \(demo needs it\); the policy's label for it is system_u:object_r:xserver_misc_device_t:s0 \(type xserver_misc_device_t\)$"
		assert_line --regexp "^PROBLEM  labels: /dev/onload is labelled .*the policy's label for it is system_u:object_r:ocidec_device_t:s0 \(type ocidec_device_t\)$"
		assert_line --regexp '^         fix: restorecon -F /dev/nvidiactl$'
		# labelled: all in order, every path asked of the kernel
		[ "$(out "$b" selinux-check-after rc)" = 0 ] || { out "$b" selinux-check-after; false; }
		run out "$b" selinux-check-after
		assert_line "0 problems: all in order"
		refute_line --partial "not checked"
		# the library left user_tmp_t
		run out "$b" usertmp-label
		assert_output --partial ':user_tmp_t:'
		[ "$(out "$b" selinux-check-usertmp rc)" = 1 ]
		run out "$b" selinux-check-usertmp
		assert_line --regexp "^PROBLEM  labels: /opt/demo/lib/libdemo.so.1.0 is labelled [^ ]*:user_tmp_t:s0 \(type user_tmp_t\): a confined container \(ocidec_container_t\) may not [a-z ]*(read|execute|map)[a-z ]* it \(demo needs it\); the policy's label for it is system_u:object_r:lib_t:s0 \(type lib_t\)$"
		assert_line "1 problem: each with its fix above"
		run out "$b" usertmp-root-ocidec
		refute_line 'demo-tool: the answer is 42'
		run out "$b" usertmp-root-ocidec avc
		assert_line --regexp 'avc: +denied .* scontext=[^ ]*:ocidec_container_t:[^ ]* tcontext=[^ ]*:user_tmp_t:s0 tclass=file'
		[ "$(out "$b" selinux-check-restored rc)" = 0 ] || { out "$b" selinux-check-restored; false; }
	done
}

@test "rootful podman, label=type:ocidec_container_t: the vendor's program runs, its devices open, no AVC" {
	for b in $(bases); do
		booted "$b"
		run container_ok "$b" root-ocidec
		assert_success
	done
}

@test "rootful podman, container_t: the devices are denied (avc: denied ... chr_file)" {
	for b in $(bases); do
		booted "$b"
		run out "$b" root-container
		assert_line "denied /dev/nvidiactl"
		assert_line "denied /dev/onload"
		assert_line --regexp '^system_u:system_r:container_t:s0:c[0-9]+,c[0-9]+$'
		run out "$b" root-container avc
		assert_line --regexp 'avc: +denied .* scontext=system_u:system_r:container_t:[^ ]* tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file'
		assert_line --regexp 'avc: +denied .* scontext=system_u:system_r:container_t:[^ ]* tcontext=system_u:object_r:ocidec_device_t:s0 tclass=chr_file'
	done
}

@test "rootless podman (a user with subordinate ids, a 0700 runtime dir): the same, ocidec_container_t and container_t" {
	for b in $(bases); do
		booted "$b"
		run container_ok "$b" rl-ocidec
		assert_success
		run out "$b" rl-container
		assert_line "denied /dev/nvidiactl"
		run out "$b" rl-container avc
		assert_line --regexp 'avc: +denied .* scontext=[^ ]*:container_t:[^ ]* tcontext=[^ ]*:xserver_misc_device_t:s0 tclass=chr_file'
	done
}

@test "the checks bite: the module without its device rule, loaded in its place, fails them" {
	for b in $(bases); do
		booted "$b"
		[ "$(out "$b" mutant-semodule rc)" = 0 ] || { out "$b" mutant-semodule; false; }
		for s in mutant-root-ocidec mutant-rl-ocidec; do
			run container_ok "$b" $s
			assert_failure
			run out "$b" $s avc
			assert_line --regexp 'avc: +denied .* scontext=[^ ]*:ocidec_container_t:[^ ]* tcontext=[^ ]*:xserver_misc_device_t:s0 tclass=chr_file'
		done
		# the program still runs: only the devices went
		run out "$b" mutant-root-ocidec
		assert_line 'demo-tool: the answer is 42'
		assert_line 'denied /dev/nvidiactl'
		# and selinux-check says so, asking the kernel
		[ "$(out "$b" selinux-check-mutant rc)" = 1 ] || { out "$b" selinux-check-mutant; false; }
		run out "$b" selinux-check-mutant
		assert_line --regexp '^PROBLEM  labels: /dev/nvidiactl is labelled [^ ]*:xserver_misc_device_t:s0 \(type xserver_misc_device_t\): a confined container \(ocidec_container_t\) may not [a-z ]*(read|write|map)[a-z ]* it \(demo needs it\)'

	done
}
