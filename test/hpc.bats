#!/usr/bin/env bats
# The HPC runtimes (issue 37): Enroot (and Pyxis, which runs Enroot under
# Slurm), Apptainer's --nvccli, NVIDIA's legacy hook and Sarus all drive
# NVIDIA's nvidia-container-cli or its OCI hook. None of them is in Debian,
# so their calls are made here exactly as their sources make them (the
# arguments, the environment, the namespaces they run in), against real
# containers: Enroot's (user and mount namespaces, its mounts, pivot_root:
# test/fixtures/enroot-start.sh) as an unprivileged user, runc's, and a
# private mount namespace as Apptainer's. The driver: Debian 12's NVIDIA 535
# (nvidia-smi, libcuda1, libnvidia-ml1), with two GPUs' nodes and information
# files made (test/fixtures/nvidia-gpus.sh); nvidia-smi in a container must
# fail as it fails chrooted in that root.

load helpers

HPCUSER=ocidec-hpc

setup_file() {
	id "$HPCUSER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$HPCUSER"
	export T NVR
	T=$(mktemp -d /tmp/ocidec-hpc.XXXXXX)
	chmod 0755 "$T"
	NVR=$T/nvr
	"$FIXTURES/debian-nvidia.sh" "$NVR" >/dev/null
	"$FIXTURES/nvidia-gpus.sh" "$NVR"
	chmod 0755 "$NVR"
	"$FIXTURES/chroot.sh" "$T/image" >/dev/null
	gcc -static -O1 -o "$T/switchroot" "$FIXTURES/switchroot.c"
	# the reference: nvidia-smi chrooted in the driver root
	chroot "$NVR" nvidia-smi >"$T/reference" 2>&1 || echo "status $?" >>"$T/reference"
	# a host with AMD GPUs (amd.ini), for the vendor-neutral Enroot hook
	"$FIXTURES/gpu-sysfs.sh" "$T/gpus" >/dev/null
	chmod -R a+rX "$T/gpus"
}

teardown_file() {
	rm -rf "${T:-/nonexistent}"
}

setup() {
	common_setup
	# installed as make install lays it out: PREFIX/bin/ocidec, NVIDIA's
	# name beside it, the configs in PREFIX/etc/ocidec.d (found from the
	# binary's own path), Enroot's hooks.d with ocidec's hook
	D=$T/$BATS_TEST_NUMBER
	P=$D/prefix
	mkdir -p -m 0755 "$D" "$P/bin" "$P/etc/ocidec.d" "$D/hooks"
	cp "$OCIDEC" "$P/bin/ocidec"
	ln -s ocidec "$P/bin/nvidia-container-cli"
	ln -s ocidec "$P/bin/nvidia-container-runtime-hook"
	sed "s|^driver_root = /\$|driver_root = $NVR|; s|^version_file.*|version = 535.261.03|; s|^device_uuids = |device_uuids = $NVR|" \
		"$CONF/nvidia.ini" >"$P/etc/ocidec.d/nvidia.ini"
	sed "s|/usr/bin/ocidec |$P/bin/ocidec |" "$CONF/enroot/98-ocidec.sh" >"$D/hooks/98-ocidec.sh"
	chmod 0755 "$D/hooks/98-ocidec.sh"
	chmod -R a+rX "$P"
	# the image, the user's own (Enroot's are in the user's data directory)
	cp -a "$T/image" "$D/rootfs"
	chown -R "$HPCUSER:" "$D/rootfs"
	# what every container here prints: nvidia-smi, the cache, the nodes
	SEE='o=$(nvidia-smi 2>&1); echo "status $? $o" | head -n 1
ldconfig -p | grep -E "libcuda.so.1 |libnvidia-ml.so.1 " | sed "s/ (.*=> / => /; s/^[[:space:]]*/cache /"
for d in nvidiactl nvidia0 nvidia1 nvidia-uvm; do [ -e /dev/$d ] && echo "node $d"; done; true'
}

# enroot ENV...: `enroot start` of D/rootfs as the test user, the image's
# environment ENV (NAME=VALUE), Enroot's hooks.d D/hooks, SEE run in it
enroot() {
	printf '%s\n' "PATH=/usr/sbin:/usr/bin:/sbin:/bin" "$@" >"$D/environ"
	chmod 0644 "$D/environ"
	runuser -u "$HPCUSER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin RESTRICT_DEV="${RESTRICT_DEV-y}" \
		SWITCHROOT="$T/switchroot" ${USERENV:-} "$FIXTURES/enroot-start.sh" "$D/rootfs" "$D/environ" "$D/hooks" \
		/bin/sh -c "$SEE"
}

@test "Enroot: 98-ocidec.sh as an unprivileged user, the image's NVIDIA_VISIBLE_DEVICES=0: GPU 0, the cache, nvidia-smi fails as chrooted in the driver root (issue 37)" {
	run enroot NVIDIA_VISIBLE_DEVICES=0 NVIDIA_DRIVER_CAPABILITIES=compute,utility
	assert_success
	assert_line "status 9 $(head -n 1 "$T/reference")"
	assert_line "cache libcuda.so.1 => /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1"
	assert_line "cache libnvidia-ml.so.1 => /usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.1"
	assert_line "node nvidiactl"
	assert_line "node nvidia0"
	assert_line "node nvidia-uvm"
	refute_line "node nvidia1"
	# the image's directory holds the driver's files only while it runs
	[ -z "$(find "$D/rootfs/usr/lib" -name 'libcuda.so.535*' -size +0)" ]
}

@test "Enroot: the user's own NVIDIA_VISIBLE_DEVICES wins over the image's (as 98-nvidia.sh); no variable: nothing given, the container starts (issue 37)" {
	USERENV=NVIDIA_VISIBLE_DEVICES=1 run enroot NVIDIA_VISIBLE_DEVICES=0 NVIDIA_DRIVER_CAPABILITIES=utility
	assert_success
	assert_line "node nvidia1"
	refute_line "node nvidia0"
	refute_line --partial "cache libcuda.so.1"
	assert_line "cache libnvidia-ml.so.1 => /usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.1"
	run enroot FOO=bar
	assert_success
	assert_line --partial "status 127"
	refute_line --partial "node nvidia"
}

@test "Enroot: Enroot's own 98-nvidia.sh call, nvidia-container-cli --user configure --no-cgroups --ldconfig=@... --device=... --compute --utility ROOTFS, answered by ocidec (issue 37)" {
	# the command line 98-nvidia.sh builds from the container's variables
	cat >"$D/hooks/98-nvidia.sh" <<-EOF
	#!/bin/bash
	set -eu
	export PATH=\$PATH:/usr/sbin:/sbin
	exec $P/bin/nvidia-container-cli --user configure --no-cgroups --ldconfig=@\$(command -v ldconfig.real || command -v ldconfig) \\
		--device=GPU-11111111-1111-2222-3333-444444444444 --compute --utility "\$ENROOT_ROOTFS"
	EOF
	rm "$D/hooks/98-ocidec.sh"
	chmod 0755 "$D/hooks/98-nvidia.sh"
	run enroot
	assert_success
	assert_line "status 9 $(head -n 1 "$T/reference")"
	assert_line "node nvidia1"
	refute_line "node nvidia0"
	assert_line "cache libcuda.so.1 => /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1"
}

@test "Enroot: both hooks (98-nvidia.sh through ocidec, then 98-ocidec.sh): the second changes nothing (issue 37)" {
	cat >"$D/hooks/98-nvidia.sh" <<-EOF
	#!/bin/bash
	exec $P/bin/nvidia-container-cli --user configure --no-cgroups --ldconfig=@/sbin/ldconfig --device=0 --compute --utility "\$ENROOT_ROOTFS"
	EOF
	chmod 0755 "$D/hooks/98-nvidia.sh"
	SEE="$SEE; grep -c ' /dev/nvidia0 ' /proc/self/mountinfo | sed 's/^/mounts of nvidia0: /'
grep -c ' /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03 ' /proc/self/mountinfo | sed 's/^/mounts of libcuda: /'"
	run enroot NVIDIA_VISIBLE_DEVICES=0 NVIDIA_DRIVER_CAPABILITIES=compute,utility
	assert_success
	assert_line "node nvidia0"
	assert_line "cache libcuda.so.1 => /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1"
	assert_line "mounts of nvidia0: 1"
	assert_line "mounts of libcuda: 1"
}

@test "Enroot: ENROOT_ENVIRON's later line wins (the image's /etc/environment first, then enroot start --env), the user's own environment over both (issue 37, review)" {
	run enroot NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=utility NVIDIA_VISIBLE_DEVICES=0
	assert_success
	assert_line "node nvidia0"
	refute_line "node nvidia1"
	USERENV=NVIDIA_VISIBLE_DEVICES=1 run enroot NVIDIA_VISIBLE_DEVICES=all NVIDIA_VISIBLE_DEVICES=0
	assert_line "node nvidia1"
	refute_line "node nvidia0"
	# CRLF lines (an environment file written on Windows) read as lines
	printf 'NVIDIA_VISIBLE_DEVICES=1\r\nNVIDIA_DRIVER_CAPABILITIES=utility\r\n' >"$D/crlf"
	run sh -c "cat '$D/crlf' | '$P/bin/ocidec' inject --environ - --rootfs '$D/rootfs' --dry-run"
	assert_success
	assert_line "mount $NVR/dev/nvidia1 /dev/nvidia1 ro,nosuid,noexec"
}

@test "Enroot: the host's /dev bound in (Enroot's default): the host's own nodes are used; one missing there is refused, nothing made in the host's /dev (issue 37)" {
	ls /dev/nvidia* >/dev/null 2>&1 && skip "this machine has NVIDIA nodes in /dev"
	RESTRICT_DEV= run enroot NVIDIA_VISIBLE_DEVICES=0
	assert_failure
	assert_output --partial "/dev: leads out of the root file system or into another mount"
	assert_output --partial "hook $D/hooks/98-ocidec.sh failed"
	run ls /dev/nvidia0 /dev/nvidiactl
	assert_failure
}

@test "Enroot: 98-ocidec.sh is every vendor's: AMD_VISIBLE_DEVICES=1 gives that GPU's render and card nodes and /dev/kfd (issue 37)" {
	rm "$P/etc/ocidec.d/nvidia.ini"
	sed "s|^driver_root = /\$|driver_root = $T/gpus/root|; /^pci_devices/s| /sys/| $T/gpus/sys/|g" \
		"$CONF/amd.ini" >"$P/etc/ocidec.d/amd.ini"
	SEE='ls /dev /dev/dri | grep -E "^(kfd|card|renderD)" | sort | tr "\n" " "'
	run enroot AMD_VISIBLE_DEVICES=1
	assert_success
	assert_output "card1 kfd renderD129 "
}

@test "Apptainer --nvccli: nvidia-container-cli --user configure with its flags in the container's mount namespace, no --pid (issue 37)" {
	# Apptainer's NVCLIConfigure: configure --no-cgroups, a --device for
	# NVIDIA_VISIBLE_DEVICES, one flag per capability, --require per
	# NVIDIA_REQUIRE_*, --ldconfig=@HOST'S LDCONFIG, the rootfs before
	# pivot_root, PATH its default; --user in a user namespace; /dev a
	# tmpfs of its own (apptainer.conf's mount dev = minimal)
	run runuser -u "$HPCUSER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		unshare --user --map-root-user --mount --propagation private -- sh -c '
		R=$1 SEE=$2; shift 2
		mount --bind "$R" "$R" && mount -t tmpfs -o nosuid,noexec,mode=755 tmpfs "$R/dev" &&
		mount --rbind /proc "$R/proc" && "$@" "$R" && exec env PATH=/usr/sbin:/usr/bin:/sbin:/bin /usr/sbin/chroot "$R" /bin/sh -c "$SEE"' sh "$D/rootfs" "$SEE" \
		"$P/bin/nvidia-container-cli" --user configure --no-cgroups --device=all --utility --compute \
		--require="cuda>=12.0 brand=tesla" --ldconfig=@/sbin/ldconfig
	assert_success
	assert_line "status 9 $(head -n 1 "$T/reference")"
	assert_line "node nvidia0"
	assert_line "node nvidia1"
	assert_line "cache libcuda.so.1 => /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1"
}

@test "nvidia-container-cli configure with no capability flag: the GPUs' nodes and the control node, no library (as NVIDIA's) (issue 37, review)" {
	run unshare --mount --propagation private -- sh -c 'R=$1; shift; mount --bind "$R" "$R" && mount -t tmpfs tmpfs "$R/dev" && mount --rbind /proc "$R/proc" && "$@" "$R" && ls "$R/dev" && { ls "$R/usr/lib/x86_64-linux-gnu/nvidia" 2>&1 || true; }' sh \
		"$D/rootfs" "$P/bin/nvidia-container-cli" configure --device=1
	assert_success
	assert_output "nvidia1
nvidiactl
ls: cannot access '$D/rootfs/usr/lib/x86_64-linux-gnu/nvidia': No such file or directory"
}

@test "Enroot in a pod (the host's /dev a tmpfs, bound in as Enroot's default does): refused as any outside /dev, nothing made in it (issue 37, review)" {
	printf 'NVIDIA_VISIBLE_DEVICES=0\n' >"$D/environ"
	run unshare --mount --propagation private -- sh -c '
		mount -t tmpfs -o mode=755 tmpfs /dev && touch /dev/null && mount --bind /proc/self/fd/0 /dev/null 2>/dev/null
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SWITCHROOT="$1" "$2" "$3" "$4" "$5" /bin/true; echo "rc $?"
		ls /dev | tr "\n" " "' sh "$T/switchroot" "$FIXTURES/enroot-start.sh" "$D/rootfs" "$D/environ" "$D/hooks" </dev/null
	assert_line --partial "leads out of the root file system or into another mount (a volume, the host's /dev"
	assert_line "rc 1"
	assert_line "null "
}

@test "Enroot in a pod whose /dev has the GPUs' nodes and udev's by-path links: graphics and compute start with them as they are, nothing made in that /dev (issue 37, review)" {
	printf 'NVIDIA_VISIBLE_DEVICES=0\nNVIDIA_DRIVER_CAPABILITIES=graphics,utility\n' >"$D/environ"
	chown -R root: "$D/rootfs"   # (root's Enroot: its user namespace maps 0 alone)
	SEE='ls /dev/nvidia0 /dev/nvidiactl /dev/dri/card1 /dev/dri/renderD128; readlink /dev/dri/by-path/pci-0000:3b:00.0-card'
	run unshare --mount --propagation private -- sh -c '
		mount -t tmpfs -o mode=755 tmpfs /dev && touch /dev/null && mount --bind /proc/self/fd/0 /dev/null &&
		ln -s /proc/self/fd /dev/fd && cp -a "$6/dev/nvidiactl" "$6/dev/nvidia0" "$6/dev/nvidia-uvm" "$6/dev/dri" /dev/ && ls -R /dev >"$7/before"
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SWITCHROOT="$1" "$2" "$3" "$4" "$5" /bin/sh -c "$8"; echo "rc $?"
		ls -R /dev | diff "$7/before" - && echo "the pod'"'"'s /dev as it was"' sh "$T/switchroot" "$FIXTURES/enroot-start.sh" \
		"$D/rootfs" "$D/environ" "$D/hooks" "$NVR" "$D" "$SEE" </dev/null
	assert_line "rc 0"
	assert_line /dev/nvidia0
	assert_line /dev/dri/renderD128
	assert_line ../card1
	assert_line "the pod's /dev as it was"
}

@test "nvidia-container-cli configure: an unsatisfied --require, an unknown GPU, a bad rootfs: one line each, the container untouched (issue 37)" {
	run unshare --mount --propagation private -- sh -c 'R=$1; shift; mount --bind "$R" "$R" && "$@" "$R"' sh \
		"$D/rootfs" "$P/bin/nvidia-container-cli" configure --device=0 --compute --require="cuda>=13.0"
	assert_failure 1
	assert_output "ocidec container-cli: nvidia: unsatisfied condition: cuda>=13.0 (the driver: cuda 12.2, driver 535.261.03); NVIDIA_DISABLE_REQUIRE=true skips the check"
	run unshare --mount --propagation private -- sh -c 'R=$1; shift; mount --bind "$R" "$R" && "$@" "$R"' sh \
		"$D/rootfs" "$P/bin/nvidia-container-cli" configure --device=7 --utility
	assert_failure 1
	assert_output --partial "nvidia: no device 7"
	[ ! -e "$D/rootfs/usr/bin/nvidia-smi" ]
	run "$P/bin/nvidia-container-cli" configure --device=0 /
	assert_failure 2
	assert_output --partial "invalid rootfs directory"
	run "$P/bin/nvidia-container-cli" frobnicate
	assert_failure 2
	assert_output --partial "unknown command 'frobnicate'"
}

@test "NVIDIA's legacy hook: nvidia-container-cli --load-kmods configure --pid=PID ROOTFS from a runc prestart hook: GPU 0 and the device cgroup (issue 37)" {
	# NVIDIA's nvidia-container-runtime-hook in its legacy mode: the state's
	# pid, the bundle's rootfs (a host path), the flags of the container's
	# variables
	cat >"$D/legacy-hook" <<-EOF
	#!/bin/bash
	state=\$(cat)
	pid=\$(printf '%s' "\$state" | python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])')
	exec $P/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig --device=0 \\
		--compute --utility --pid="\$pid" "$D/b/rootfs"
	EOF
	chmod 0755 "$D/legacy-hook"
	HOOK="$D/legacy-hook" "$FIXTURES/bundle.sh" "$D/b" -- /bin/sh -c "$SEE" >/dev/null
	rm -rf "$D/b/rootfs" && cp -a "$T/image" "$D/b/rootfs"
	run bash -c "cd '$D/b' && timeout 60 runc run ocidec-hpc-$$ 2>&1"
	assert_success
	assert_line "status 9 $(head -n 1 "$T/reference")"
	assert_line "node nvidia0"
	refute_line "node nvidia1"
	assert_line "cache libcuda.so.1 => /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1"
}

@test "Sarus: its NVIDIA hook entry (nvidia-container-runtime-hook prestart, NVIDIA_VISIBLE_DEVICES in the container's env) is ocidec's hook (issue 37)" {
	HOOK="$P/bin/nvidia-container-runtime-hook nvidia-container-runtime-hook prestart" "$FIXTURES/bundle.sh" "$D/b" NVIDIA_VISIBLE_DEVICES=1 \
		NVIDIA_DRIVER_CAPABILITIES=utility -- sh -c 'ls /dev | grep nvidia | tr "\n" " "; ls /usr/bin/nvidia-smi' >/dev/null
	run bash -c "cd '$D/b' && timeout 60 runc run ocidec-hpc-$$ 2>&1"
	assert_success
	assert_output "nvidia1 nvidiactl /usr/bin/nvidia-smi"
}

@test "nvidia-container-cli list and info on Debian's 535 root: the nodes, binaries, libraries in NVIDIA's order; the versions and GPUs (issue 37)" {
	# without --device every GPU, as NVIDIA's
	run "$P/bin/nvidia-container-cli" list
	assert_success
	assert_line --index 0 "$NVR/dev/nvidiactl"
	assert_line "$NVR/dev/nvidia-uvm"
	assert_line "$NVR/dev/nvidia0"
	assert_line "$NVR/dev/nvidia1"
	assert_line "$NVR/usr/lib/nvidia/current/nvidia-smi"
	assert_line "$NVR/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03"
	assert_line "$NVR/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.535.261.03"
	run "$P/bin/nvidia-container-cli" list --libraries
	assert_success
	refute_line --partial /dev/
	refute_line --partial nvidia-smi
	assert_line "$NVR/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03"
	# --device: its nodes too, whatever else narrows the list (as NVIDIA's)
	run "$P/bin/nvidia-container-cli" list --libraries --device=1
	assert_success
	assert_line "$NVR/dev/nvidia1"
	refute_line "$NVR/dev/nvidia0"
	refute_line --partial nvidia-smi
	assert_line "$NVR/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.261.03"
	run "$P/bin/nvidia-container-cli" list --device=1
	assert_line "$NVR/dev/nvidia1"
	refute_line "$NVR/dev/nvidia0"
	run "$P/bin/nvidia-container-cli" info
	assert_success
	assert_line --index 0 "NVRM version:   535.261.03"
	assert_line --index 1 "CUDA version:   12.2"
	assert_line "GPU UUID:       GPU-11111111-1111-2222-3333-444444444444"
	assert_line "Bus Location:   0000:86:00.0"
	run "$P/bin/nvidia-container-cli" info --csv
	assert_line --index 1 "535.261.03,12.2"
	assert_line "0,0,NVIDIA A100-SXM4-40GB,GPU-00000000-1111-2222-3333-444444444444,0000:3b:00.0"
}

@test "Enroot as root, the host's /dev bound in: a node the host has is used as it is and opens nothing more of the host's /dev; a missing one is refused, nothing made there (issue 37, found running Enroot built from source)" {
	# a vendor whose control node is the host's own /dev/null (1:3) and whose
	# per-device nodes the host has not
	mkdir -p "$D/hd/dev"
	mknod -m 0666 "$D/hd/dev/null" c 1 3
	mknod -m 0666 "$D/hd/dev/ocidec-hpc-test0" c 1 5
	cat >"$P/etc/ocidec.d/hostdev.ini" <<-EOF
	[vendor]
	name = hostdev
	activation_flag = OCI_HOSTDEV
	driver_root = $D/hd
	driver_feature = base
	per_device_nodes = ocidec-hpc-test%u

	[feature.base]
	devices = /dev/null
	EOF
	rm "$P/etc/ocidec.d/nvidia.ini"
	printf 'OCI_HOSTDEV=all\n' >"$D/environ"
	run env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SWITCHROOT="$T/switchroot" \
		"$FIXTURES/enroot-start.sh" "$D/rootfs" "$D/environ" "$D/hooks" /bin/true
	assert_failure
	assert_output --partial "/dev: leads out of the root file system or into another mount (a volume, the host's /dev"
	run ls /dev/ocidec-hpc-test0
	assert_failure
}

teardown() {
	# (a file the bug above would leave in the host's /dev: an empty file only)
	if [ -f /dev/ocidec-hpc-test0 ] && [ ! -s /dev/ocidec-hpc-test0 ]; then rm -f /dev/ocidec-hpc-test0; fi
}
