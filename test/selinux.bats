#!/usr/bin/env bats
# The SELinux policy module (selinux/) on each base it is for, built and
# linked offline into a policy store of the test's own
# (test/fixtures/selinux-bases.sh), never the machine's:
#   debian    Debian's refpolicy, with refpolicy's container module;
#   v2.167.0, v2.195.1, v2.250.0
#             Fedora's policy with that release of container-selinux, from
#             ../shared/selinux-rhel (SELINUX_RHEL=DIR elsewhere); skipped,
#             with a message, when it is absent.
# Rules are read with setools, every boolean at its default
# (test/fixtures/se-rules.py): plain sesearch also lists rules behind
# booleans that are off. File contexts are looked up with matchpathcon in
# the linked store's file_contexts.

load helpers

RHEL=${SELINUX_RHEL:-$BATS_TEST_DIRNAME/../../shared/selinux-rhel}
SE=$BATS_TEST_DIRNAME/fixtures/se-rules.py

setup_file() {
	is_static || return 0
	export W=$BATS_FILE_TMPDIR/se BASES=debian
	if [ -d "$RHEL/container-selinux" ]; then BASES="debian v2.167.0 v2.195.1 v2.250.0"; fi
	(cd /var/lib/selinux/default && find . -type f -exec sha256sum {} + | sort) >"$BATS_FILE_TMPDIR/host-store.before"
	# another package's module using the interface, linked along
	mkdir -p "$W.gpuapp"
	printf 'policy_module(gpuapp, 1.0)\ntype gpuapp_t;\ndomain_type(gpuapp_t)\nocidec_use_accelerators(gpuapp_t)\n' \
		>"$W.gpuapp/gpuapp.te"
	: >"$W.gpuapp/gpuapp.if"
	: >"$W.gpuapp/gpuapp.fc"
	for b in $BASES; do
		SELINUX_RHEL=$RHEL "$BATS_TEST_DIRNAME/fixtures/selinux-bases.sh" "$W" "$b" "$BATS_TEST_DIRNAME/../selinux" \
			"$W.gpuapp" >"$W.$b.policy" 2>"$W.$b.err" || continue
		# the two domains compared once (loading a policy takes seconds)
		"$SE" --compare "$(cat "$W.$b.policy")" container_t ocidec_container_t >"$W.$b.diff" 2>&1
	done
}

setup() {
	common_setup
	is_static || skip "the policy is checked once, in the static build's pass"
}

policy() { cat "$W.$1.policy"; }
fc() { echo "$(dirname "$(dirname "$(policy "$1")")")/contexts/files/file_contexts"; }
rhel() { [ "$1" != debian ]; }
# check BASE: the queries on stdin hold in BASE's policy (se-rules.py
# --check; "~ A B ...": B no more than A, where the base itself lets
# container_t reach systemd's socket, as refpolicy does)
check() {
	"$SE" --check "$(policy "$1")"
}
# label BASE MODE PATH: the context matchpathcon gives PATH in BASE's store
label() {
	matchpathcon -n -f "$(fc "$1")" -m "$2" "$3" | sed 's/^system_u:object_r:\([^:]*\):.*/\1/'
}

@test "the module builds and links against Debian's refpolicy and container-selinux v2.167.0, v2.195.1, v2.250.0" {
	[ -d "$RHEL/container-selinux" ] || echo "# $RHEL is absent: the RHEL/Fedora bases are not checked here" >&3
	for b in $BASES; do
		[ -s "$W.$b.policy" ] || { cat "$W.$b.err"; false; }
		assert_file_exist "$(policy "$b")"
		run semodule -p "$W/$b/root" -s "$(rhel "$b" && echo targeted || echo default)" -l
		assert_line ocidec
		assert_line container
	done
}

@test "ocidec_container_t may do all container_t may do: its rules and the rules on it, booleans at their defaults" {
	for b in $BASES; do
		run cat "$W.$b.diff"
		refute_line --regexp '^- ' || { echo "base $b: container_t may do more"; false; }
		refute_line --regexp '^in[-+] ' || { echo "base $b: the runtime's rules on the two differ"; false; }
		assert_line --regexp '^\+ ' || { echo "base $b: no comparison"; false; }
	done
}

# beyond: of the differences on stdin (se-rules.py POLICY container_t
# ocidec_container_t), what ocidec_container_t may do that container_t may
# not, each a rule on an accelerator's type; on the files, nothing that writes
beyond() {
	awk '
		!/^\+ / { next }
		{
			t = $2; c = $3; p = $4
			if (t ~ /^(xserver_misc_device_t|dri_device_t|hsa_device_t|infiniband_device_t|ocidec_device_t)$/ && c == "chr_file") next
			if (t ~ /^(device_t|ocidec_caps_dir_t)$/ && c == "dir" && p ~ /^(getattr|open|read|search|ioctl|lock)$/) next
			if (t == "unlabeled_t" && (c == "infiniband_pkey" || c == "infiniband_endport")) next
			if (t ~ /^(xserver_t|unconfined_service_t|initrc_t)$/ && c == "unix_stream_socket" && p == "connectto") next
			if (t == "ocidec_ipc_t" && c ~ /^(dir|sock_file|fifo_file)$/ && p ~ /^(getattr|open|read|write|append|search|ioctl|lock)$/) next
			if (t ~ /^(ocidec_driver_file_t|container_ro_file_t|lib_t|textrel_shlib_t|bin_t|xserver_exec_t|etc_t|usr_t)$/ &&
			    c ~ /^(dir|file|lnk_file)$/ && p ~ /^(getattr|open|read|search|ioctl|lock|map|execute|execute_no_trans)$/) next
			print "not an accelerator rule: " $0
		}'
}

@test "and nothing more: every rule container_t lacks is on an accelerator's device, file, socket or daemon, and none writes a file" {
	for b in $BASES; do
		run beyond <"$W.$b.diff"
		assert_success
		assert_output "" || { echo "base $b"; false; }
	done
}

@test "may: the devices with map, nvidia-smi and the libraries under their host labels, the IPC sockets of the right daemons" {
	for b in $BASES; do
		smi=$(label "$b" file /usr/bin/nvidia-smi)
		if rhel "$b"; then [ "$smi" = xserver_exec_t ]; else [ "$smi" = bin_t ]; fi
		run check "$b" < <(
			for d in /dev/nvidia0 /dev/nvidia12 /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia-modeset \
				/dev/nvidia-caps/nvidia-cap1 /dev/dri/renderD128 /dev/dri/card1 /dev/infiniband/uverbs0 /dev/onload /dev/sfc_char \
				/dev/kfd /dev/accel/accel0 /dev/accel/accel_controlD0 /dev/hl0 /dev/hl_controlD0; do
				echo "ocidec_container_t $(label "$b" chr_file "$d") chr_file open read write ioctl map"
			done
			for f in /usr/bin/nvidia-smi /usr/lib64/libcuda.so.1 /usr/lib64/libnvidia-ml.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1 \
				/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1 /opt/onload/lib64/libonload.so; do
				echo "ocidec_container_t $(label "$b" file "$f") file open read map execute"
			done
			echo "ocidec_container_t $(label "$b" file /etc/OpenCL/vendors/nvidia.icd) file open read"
			echo "ocidec_container_t $(label "$b" file /usr/share/vulkan/icd.d/nvidia_icd.json) file open read"
			for s in /run/nvidia-persistenced/socket /run/nvidia-fabricmanager/socket /tmp/nvidia-mps/control; do
				echo "ocidec_container_t $(label "$b" sock_file "$s") sock_file open write"
			done
			echo "ocidec_container_t ocidec_ipc_t dir search"
			if rhel "$b"; then
				echo "ocidec_container_t xserver_t unix_stream_socket connectto"
				echo "ocidec_container_t unconfined_service_t unix_stream_socket connectto"
			else
				echo "ocidec_container_t initrc_t unix_stream_socket connectto"
			fi)
		assert_success
		assert_output "" || { echo "base $b"; false; }
		for s in /run/nvidia-persistenced/socket /run/nvidia-fabricmanager/socket /tmp/nvidia-mps/control; do
			[ "$(label "$b" sock_file "$s")" = ocidec_ipc_t ]
		done
	done
}

@test "may not: write etc_t or driver files, read shadow_t, raw disks, generic device_t nodes, systemd's socket; container_t gets no NVIDIA device" {
	for b in $BASES; do
		run check "$b" <<-EOF
		! ocidec_container_t etc_t file write append
		! ocidec_container_t lib_t file write append
		! ocidec_container_t xserver_exec_t file write append
		! ocidec_container_t bin_t file write append
		! ocidec_container_t textrel_shlib_t file write append
		! ocidec_container_t ocidec_driver_file_t file write append create unlink
		! ocidec_container_t shadow_t file read
		! ocidec_container_t fixed_disk_device_t blk_file read write
		! ocidec_container_t device_t chr_file read write
		! container_t xserver_misc_device_t chr_file read write
		~ container_t ocidec_container_t init_t unix_stream_socket connectto
		~ container_t ocidec_container_t unconfined_t unix_stream_socket connectto
		EOF
		assert_success
		assert_output "" || { echo "base $b"; false; }
	done
}

@test "the daemons and nvidia-modprobe make what they make with its label: IPC directories, NVIDIA nodes, MIG's directory" {
	for b in $BASES; do
		if rhel "$b"; then d1=xserver_t d2=unconfined_service_t; else d1=initrc_t d2=initrc_t; fi
		run check "$b" <<-EOF
		=> $d1 var_run_t dir ocidec_ipc_t nvidia-persistenced
		=> $d1 tmp_t dir ocidec_ipc_t nvidia-mps
		=> $d2 var_run_t dir ocidec_ipc_t nvidia-fabricmanager
		$d1 ocidec_ipc_t sock_file create
		=> initrc_t device_t chr_file xserver_misc_device_t nvidia-modeset
		=> initrc_t device_t chr_file xserver_misc_device_t nvidia-uvm-tools
		=> initrc_t device_t chr_file xserver_misc_device_t nvidia63
		=> initrc_t device_t dir ocidec_caps_dir_t nvidia-caps
		=> initrc_t ocidec_caps_dir_t chr_file xserver_misc_device_t
		initrc_t xserver_misc_device_t chr_file create
		EOF
		assert_output "" || { echo "base $b"; false; }
	done
}

@test "the file contexts apply in the linked stores: every NVIDIA node, MIG's caps, Solarflare's, AMD's /dev/kfd, the accel class, CoreOS's /var/opt" {
	for b in $BASES; do
		for d in /dev/nvidia0 /dev/nvidia10 /dev/nvidia63 /dev/nvidiactl /dev/nvidia-modeset /dev/nvidia-uvm-tools /dev/nvidia-caps/nvidia-cap2; do
			[ "$(label "$b" chr_file "$d")" = xserver_misc_device_t ] || { echo "base $b: $d"; false; }
		done
		[ "$(label "$b" dir /dev/nvidia-caps)" = ocidec_caps_dir_t ]
		for d in /dev/onload /dev/onload_epoll /dev/sfc_char /dev/sfc_affinity /dev/accel/accel0 /dev/accel/accel_controlD3 /dev/hl1 /dev/hl_controlD1; do
			[ "$(label "$b" chr_file "$d")" = ocidec_device_t ] || { echo "base $b: $d"; false; }
		done
		# AMD's /dev/kfd: Fedora's own type, ocidec's where the base has none
		if rhel "$b"; then [ "$(label "$b" chr_file /dev/kfd)" = hsa_device_t ]; else [ "$(label "$b" chr_file /dev/kfd)" = ocidec_device_t ]; fi
		[ "$(label "$b" chr_file /dev/dri/card0)" = dri_device_t ]
		[ "$(label "$b" file /opt/onload/lib64/libonload.so)" = ocidec_driver_file_t ]
		[ "$(label "$b" file /var/opt/onload/lib64/libonload.so)" = ocidec_driver_file_t ]
		[ "$(label "$b" dir /var/run/nvidia-persistenced)" = ocidec_ipc_t ]
		# ocidec itself a program, on purpose: not container_runtime_exec_t, which
		# container-selinux's /usr/s?bin/ocid.* (CRI-O's old name) would give it
		[ "$(label "$b" file /usr/bin/ocidec)" = bin_t ] || { echo "base $b: /usr/bin/ocidec"; false; }
		# a driver container's files keep their own labels: nothing relabels /run/nvidia/driver
		[ "$(label "$b" file /run/nvidia/driver/usr/bin/nvidia-smi)" != ocidec_driver_file_t ]
	done
}

@test "ocidec_use_accelerators(DOMAIN) gives another module's domain the accelerators, on each base" {
	for b in $BASES; do
		run check "$b" <<-EOF
		gpuapp_t xserver_misc_device_t chr_file read write map
		gpuapp_t ocidec_device_t chr_file read write map
		gpuapp_t ocidec_ipc_t sock_file write
		! gpuapp_t etc_t file write
		! gpuapp_t shadow_t file read
		EOF
		assert_output "" || { echo "base $b"; false; }
	done
}

@test "the checks bite: one extra rule, or one attribute of container_t fewer, fails them (Debian's base and the newest RHEL one)" {
	for b in debian $([ -d "$RHEL/container-selinux" ] && echo v2.250.0); do
		m=$W/mutant
		rm -rf "$m" && cp -r "$BATS_TEST_DIRNAME/../selinux" "$m"
		printf 'gen_require(`type etc_t;'"'"')\nallow ocidec_container_t etc_t:file write;\n' >>"$m/ocidec.te"
		P=$(SELINUX_RHEL=$RHEL "$BATS_TEST_DIRNAME/fixtures/selinux-bases.sh" "$W/mutants" "$b" "$m")
		run beyond < <("$SE" --compare "$P" container_t ocidec_container_t)
		assert_output --partial "not an accelerator rule: + etc_t file write"
		rm -rf "$m" && cp -r "$BATS_TEST_DIRNAME/../selinux" "$m"
		sed -i 's/, container_net_domain;$/;/' "$m/ocidec.te"
		grep -q 'typeattribute ocidec_container_t container_domain;\|container_user_domain;$' "$m/ocidec.te"
		P=$(SELINUX_RHEL=$RHEL "$BATS_TEST_DIRNAME/fixtures/selinux-bases.sh" "$W/mutants" "$b" "$m")
		run "$SE" --compare "$P" container_t ocidec_container_t
		assert_line --regexp '^- '
	done
}

@test "the CIL for hosts without build tools (CoreOS): built for a container-selinux release, semodule -i links it there" {
	[ -d "$RHEL/container-selinux" ] || skip "$RHEL is absent"
	for b in v2.195.1 v2.250.0; do
		make -s -C "$W/$b/ocidec" cil >/dev/null
		r=$W/cil-$b
		rm -rf "$r" && mkdir -p "$r"
		cp -a "$W/fedora/store/." "$r/"
		run semodule -p "$r" -s targeted -n -X 400 -i "$W/$b/container/container.pp" "$W/$b/ocidec/ocidec.cil"
		assert_success
		"$SE" --compare "$r/etc/selinux/targeted/policy/policy.33" container_t ocidec_container_t >"$r.diff"
		run cat "$r.diff"
		refute_line --regexp '^- '
		run beyond <"$r.diff"
		assert_output ""
	done
	# the newest one links into the older release as well (it brings the
	# newer container_t rules with it: build it for the host's release)
	run semodule -p "$W/cil-v2.195.1" -s targeted -n -X 400 -i "$W/v2.250.0/ocidec/ocidec.cil"
	assert_success
}

@test "the machine's own policy store was not touched" {
	run diff "$BATS_FILE_TMPDIR/host-store.before" <(cd /var/lib/selinux/default && find . -type f -exec sha256sum {} + | sort)
	assert_success
}

@test "selinux-check --policy-label gives what matchpathcon gives, on each base: the equivalences (/lib -> /usr/lib, /var/run -> /run), exact entries over expressions, optional characters before ? * {" {
	for b in $BASES; do
		local r=$BATS_TEST_TMPDIR/root-$b store
		store=$(dirname "$(dirname "$(policy "$b")")")
		mkdir -p "$r/etc/selinux"
		printf 'SELINUX=enforcing\nSELINUXTYPE=t\n' >"$r/etc/selinux/config"
		ln -sfn "$store" "$r/etc/selinux/t"
		for p in /usr/lib64/libcuda.so.550.54.15 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 /lib/x86_64-linux-gnu/libnvidia-ml.so.1 \
			/usr/lib64/vdpau/libvdpau_nvidia.so.1 /usr/bin/nvidia-smi /usr/sbin/nvidia-persistenced /sbin/foo \
			/lib/firmware/nvidia/550.54.15/gsp_ga10x.bin /var/run/nvidia-persistenced/socket /usr/bin/ocidec /usr/bin/ocidxyz \
			/opt/demo/lib/libdemo.so.1.0 /etc/OpenCL/vendors/nvidia.icd /run/nvidia/driver/usr/bin/nvidia-smi; do
			want=$(matchpathcon -n -f "$(fc "$b")" -m file "$p")
			got=$("$OCIDEC" selinux-check --root "$r" --policy-label "$p")
			[ "$got" = "$want" ] || { echo "base $b: $p: ocidec $got, matchpathcon $want"; false; }
		done
	done
}
