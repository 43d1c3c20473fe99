#!/usr/bin/env bats
# The arm64 build on an arm64 kernel: a Debian 12 arm64 VM under
# qemu-system-aarch64 (software emulation; test/fixtures/arm64-vm.sh builds
# its disk once, under qemu-user, and boots it), with Debian's arm64 NVIDIA
# 535 userspace as its driver root and no GPU. One boot runs
# test/fixtures/arm64-vm-guest.sh: ocidec installed as the hook podman
# reads, then runc with that hook, podman with it, the shim as podman's
# runtime and ocidec's CDI spec through podman's --device; each container
# must fail in nvidia-smi exactly as a chroot of the root does, have the
# driver's libraries in its cache, and open the GPU nodes it was given
# (ENXIO: allowed by the cgroup v2 device program, no driver behind them)
# but not the others (absent, or EPERM). Once, in the static build's pass.
# Cost on 2 CPUs: the disk about 6 minutes once after test/arm64.bats'
# arm64 root (3.5 minutes; both cached in build/test-data), the boot and
# the run about 5 minutes.

load helpers

VMSH=$BATS_TEST_DIRNAME/fixtures/arm64-vm.sh

setup_file() {
	is_static || return 0
	export V
	V=$BATS_FILE_TMPDIR/vm
	X=$BATS_TEST_DIRNAME/../build/arm64/ocidec
	[ "$(dpkg --print-architecture)" = amd64 ] && [ -x "$X" ] && command -v qemu-system-aarch64 >/dev/null || return 0
	mkdir -p "$V/in"
	# make install's tree of the arm64 build, as the packages lay it out
	make -s -C "$BATS_TEST_DIRNAME/.." ARCH=arm64 CROSS= -o build/arm64/ocidec install DESTDIR="$V/in/inst" PREFIX=/usr >/dev/null
	cp "$FIXTURES/arm64-vm-guest.sh" "$V/in/run.sh"
	"$VMSH" run "$V/in" "$V/out" 1800 2>"$V/why" || echo $? >"$V/rc"
	if [ -s "$V/out/boot.time" ]; then
		echo "# arm64 VM: $(cat "$V/out/boot.time")s from qemu's start to its exit" >&3
	fi
}

setup() {
	common_setup
	is_static || skip "the arm64 VM boots once, in the static build's pass"
	[ "$(dpkg --print-architecture)" = amd64 ] || skip "the arm64 VM is for an amd64 machine"
	[ -x "$BATS_TEST_DIRNAME/../build/arm64/ocidec" ] || skip "no build/arm64/ocidec (./build.sh builds it)"
	command -v qemu-system-aarch64 >/dev/null || skip "no qemu-system-aarch64 (qemu-system-arm)"
	# 77: this machine cannot make the disk (qemu-user-static, a kernel
	# without a binfmt_misc per user namespace), said as arm64.bats says it
	[ "$(cat "$V/rc" 2>/dev/null)" != 77 ] || skip "$(cat "$V/why")"
	[ -s "$V/out/run.log" ] || fail "the VM gave no results: $(cat "$V/why" 2>/dev/null); console: $(tail -n 20 "$V/out/console.log" 2>/dev/null)"
	LOG=$V/out/run.log
	# the reference: nvidia-smi in a chroot of the driver root
	REF=$(sed -n 's/^chroot: //p' "$LOG")
}

# step NAME: the lines the guest printed for that step, prefix removed
step() {
	sed -n "s/^$1: //p" "$LOG"
}

@test "arm64 VM: an aarch64 kernel with cgroup v2; the static aarch64 ocidec runs there and installs itself as podman's hook; the reference (nvidia-smi chrooted in the driver root) fails for want of a driver, not for want of a file (issue 36)" {
	run step arch
	assert_output --regexp '^aarch64 '
	assert_equal "$(step cgroup)" cgroup2fs
	assert_equal "$(step version)" "$("$OCIDEC" --version)"
	assert_equal "$(step install)" "0 ocidec.json"
	[[ $REF == "status 9 NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."* ]]
}

# seen STEP DEVICES...: the step's container failed in nvidia-smi as the
# chroot did, had NVML and CUDA in its cache, could open exactly DEVICES
# (and nvidiactl) through the device cgroup
seen() {
	local s=$1 d
	shift
	run step "$s"
	assert_line "$REF"
	assert_line "cache libcuda.so.1"
	assert_line "cache libnvidia-ml.so.1"
	assert_line "open nvidiactl: No such device or address"
	for d in nvidia0 nvidia1; do
		if [[ " $* " == *" $d "* ]]; then
			assert_line "open $d: No such device or address"
		else
			assert_line --regexp "^open $d: (absent|Operation not permitted)$"
		fi
	done
}

@test "arm64 VM: runc 1.1 with the installed hook, NVIDIA_VISIBLE_DEVICES=0: nvidia-smi as in the chroot, the cache, GPU 0 opened through the cgroup v2 device program and GPU 1 not (issue 36)" {
	assert_equal "$(step runc-rc)" 0
	seen runc-hook nvidia0
}

@test "arm64 VM: podman 4.3 with the installed hooks.d file: all GPUs; a container asking for nothing is untouched (issue 36)" {
	assert_equal "$(step podman-rc)" 0
	seen podman-hook nvidia0 nvidia1
	run step podman-idle
	assert_line "No such file or directory"
	assert_line started
}

@test "arm64 VM: the cgroup v2 device program (runc's eBPF with ocidec's rule) lets GPU 0 open and refuses GPU 1 made by mknod in the container (issue 36)" {
	assert_equal "$(step cgroup-rc)" 0
	run step podman-cgroup
	assert_line "open nvidia0: No such device or address"
	assert_line "open made nvidia1: Operation not permitted"
}

@test "arm64 VM: the shim as podman's runtime (no hook), NVIDIA_VISIBLE_DEVICES=0 (issue 36)" {
	assert_equal "$(step shim-rc)" 0
	seen shim nvidia0
}

@test "arm64 VM: ocidec cdi's spec through podman's --device nvidia.com/gpu=0 (issue 36)" {
	run step cdi
	assert_output --regexp '^0 '
	assert_equal "$(step cdi-rc)" 0
	seen cdi-run nvidia0
}
