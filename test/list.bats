#!/usr/bin/env bats
# `ocidec list` against fake driver roots: real device nodes (mknod),
# gcc-built libraries with real SONAMEs, an ld.so.cache from glibc's
# `ldconfig -r`, in standard and non-standard directories.

load helpers

setup() {
	common_setup
	driver_root
	nvidia_ini "$DR"
	ML=usr/lib/$(gcc -print-multiarch)
}

# The shipped nvidia.ini on the fake root, every feature: devices, per-device
# nodes, binaries, libraries (symlink, then its target), files, IPC.
expected_all() {
	printf "$DR/%s\n" dev/nvidiactl dev/nvidia-uvm dev/nvidia0 dev/nvidia1 \
		usr/bin/nvidia-smi \
		"$ML/libnvidia-ml.so.1" "$ML/libnvidia-ml.so.550.54.15" \
		opt/nvidia/lib/libcuda.so.1 opt/nvidia/lib/libcuda.so.550.54.15 \
		"$ML/libnvidia-glcore.so.550.54.15" \
		lib/firmware/nvidia/550.54.15/gsp_ga10x.bin lib/firmware/nvidia/550.54.15/gsp_tu10x.bin \
		etc/OpenCL/vendors/nvidia.icd usr/share/vulkan/icd.d/nvidia_icd.json \
		run/nvidia-persistenced/socket tmp/nvidia-mps
}

@test "every existing path, driver_root prefixed, in order, each once" {
	run --separate-stderr list -c "$CFG"
	assert_success
	assert_output "$(expected_all)"
	[ -z "$stderr" ]
}

@test "the same through the openat2 fallback resolver" {
	OCIDEC_RESOLVE=fallback run --separate-stderr list -c "$CFG"
	assert_success
	assert_output "$(expected_all)"
}

@test "ocidec-list and 'ocidec list' give the same" {
	a=$(list -c "$CFG")
	b=$(ocidec-list -c "$CFG")
	c=$(ocidec list -c "$CFG")
	[ "$a" = "$b" ] && [ "$a" = "$c" ]
}

@test "libraries resolve to what ldconfig -p lists for the driver root" {
	run list -c "$CFG" --features utility,compute
	for lib in libnvidia-ml.so.1 libcuda.so.1; do
		path=$(ldconfig -r "$DR" -p | awk -v l="$lib" '$1 == l { print $NF }')
		[ -n "$path" ]
		assert_line "$DR$path"
	done
}

@test "a symlink is listed, then its target inside the driver root" {
	run list -c "$CFG" --features utility
	assert_success
	assert_line --index 4 "$DR/$ML/libnvidia-ml.so.1"
	assert_line --index 5 "$DR/$ML/libnvidia-ml.so.550.54.15"
	[ -L "$DR/$ML/libnvidia-ml.so.1" ]
}

@test "--features selects, and include pulls in features" {
	run list -c "$CFG" --features graphics
	assert_success
	# the control device too: every NVIDIA library opens it first (issue 24)
	assert_output "$(printf "$DR/%s\n" dev/nvidiactl dev/nvidia0 dev/nvidia1 "$ML/libnvidia-glcore.so.550.54.15" usr/share/vulkan/icd.d/nvidia_icd.json)"
	run list -c "$CFG" --features video
	assert_success
	assert_line "$DR/opt/nvidia/lib/libcuda.so.1"
	refute_line "$DR/usr/bin/nvidia-smi"
}

@test "an unknown feature is a usage error" {
	run list -c "$CFG" --features compute,teleport
	assert_failure 2
	assert_output "ocidec list: vendor nvidia has no feature 'teleport'"
}

@test "--devices: none, indices, all" {
	run list -c "$CFG" --devices none
	assert_success
	refute_line "$DR/dev/nvidia0"
	refute_line "$DR/dev/nvidia1"
	assert_line "$DR/dev/nvidiactl"
	# NVIDIA's indices are NVML's, in PCI bus order: 1 is the GPU at
	# 0000:86:00.0, whose minor is 0
	run list -c "$CFG" --devices 1
	assert_line "$DR/dev/nvidia0"
	refute_line "$DR/dev/nvidia1"
	run list -c "$CFG" --devices 0
	refute_line "$DR/dev/nvidia0"
	assert_line "$DR/dev/nvidia1"
	run list -c "$CFG" --devices 0,1,7
	assert_line "$DR/dev/nvidia0"
	assert_line "$DR/dev/nvidia1"
	refute_line --partial "nvidia7"
	run list -c "$CFG" --devices all
	assert_output "$(expected_all)"
}

@test "a per-device pattern matches digits only" {
	run list -c "$CFG"
	refute_line --partial "nvidia-uvmfoo"
}

@test "a bad device selection is a usage error" {
	run list -c "$CFG" --devices 0,GPU-x
	assert_failure 2
	assert_output "ocidec list: invalid device selection 'GPU-x' (all, none or indices)"
}

@test "vendor names select vendors; an unknown one is a usage error" {
	cp "$CONF/solarflare.ini" "$CFG/" && chmod 0644 "$CFG/solarflare.ini"
	run list -c "$CFG" solarflare
	assert_success
	assert_output ""
	run list -c "$CFG" nvidia
	assert_output "$(expected_all)"
	run list -c "$CFG" amd
	assert_failure 2
	assert_output "ocidec list: no vendor 'amd' in $CFG (see ocidec list --help)"
}

@test "a vendor with no existing files prints nothing and exits 0" {
	sed "s|^driver_root = .*|driver_root = $BATS_TEST_TMPDIR/nothing|" "$CFG/nvidia.ini" >"$CFG/n2"
	mv "$CFG/n2" "$CFG/nvidia.ini" && chmod 0644 "$CFG/nvidia.ini"
	mkdir "$BATS_TEST_TMPDIR/nothing"
	run --separate-stderr list -c "$CFG"
	assert_success
	assert_output ""
}

@test "\${version} paths are skipped when the version is unknown, with a debug line" {
	sed -i 's/^version = .*//; s/^log_level = .*/log_level = debug/' "$CFG/nvidia.ini"
	run --separate-stderr list -c "$CFG" --features utility
	assert_success
	refute_output --partial "gsp_"
	[[ $stderr == *"debug: nvidia: skipped /lib/firmware/nvidia/\${version}/gsp*.bin: driver version unknown"* ]]
}

@test "version_file fills \${version}" {
	echo 550.54.15 >"$BATS_TEST_TMPDIR/version"
	sed -i "s|^version = .*|version_file = $BATS_TEST_TMPDIR/version|" "$CFG/nvidia.ini"
	run list -c "$CFG" --features utility
	assert_line "$DR/lib/firmware/nvidia/550.54.15/gsp_ga10x.bin"
}

@test "symlinks in the driver root never lead out of it" {
	r=$BATS_TEST_TMPDIR/r
	mkdir -p "$r/etc" "$r/lib"
	ln -s /etc/passwd "$r/etc/abs"              # absolute: resolves inside r
	ln -s ../../../../../../etc/passwd "$r/etc/rel"
	ln -s /proc/self/root/etc/passwd "$r/etc/magic"
	ln -s loop1 "$r/etc/loop2"; ln -s loop2 "$r/etc/loop1"
	ln -s / "$r/lib/hostroot"
	printf '%s\n' "[vendor]" "activation_flag = OCI_X" "driver_root = $r" "[feature.a]" \
		"miscellaneous = /etc/abs /etc/rel /etc/magic /etc/loop1 /lib/hostroot/etc/passwd" | write_ini x
	for mode in openat2 fallback; do
		OCIDEC_RESOLVE=$mode run --separate-stderr list -c "$CFG" x
		assert_success
		assert_output ""
	done
	echo "inside" >"$r/etc/passwd"
	run list -c "$CFG" x
	# lib/hostroot/etc/passwd is etc/passwd inside the root: listed once,
	# by its resolved name ($r/lib/hostroot/etc/passwd is the host's file)
	assert_output "$(printf "$r/%s\n" etc/abs etc/passwd etc/rel)"
}

@test "a glob matches inside the driver root, sorted, no dot files" {
	r=$BATS_TEST_TMPDIR/r
	mkdir -p "$r/usr/lib64/nvidia"
	touch "$r/usr/lib64/nvidia/"{libnvidia-b.so.1,libnvidia-a.so.1,.libnvidia-hidden.so.1,other.so}
	printf '%s\n' "[vendor]" "activation_flag = OCI_X" "driver_root = $r" "[feature.a]" \
		"libraries = /usr/lib64/*/libnvidia-*.so.*" | write_ini x
	run list -c "$CFG" x
	assert_success
	assert_output "$(printf "$r/usr/lib64/nvidia/%s\n" libnvidia-a.so.1 libnvidia-b.so.1)"
}

@test "a path of the wrong kind is skipped with a warning" {
	r=$BATS_TEST_TMPDIR/r
	mkdir -p "$r/dev"
	touch "$r/dev/notadevice"
	printf '%s\n' "[vendor]" "activation_flag = OCI_X" "driver_root = $r" "[feature.a]" \
		"devices = notadevice" | write_ini x
	run --separate-stderr list -c "$CFG" x
	assert_success
	assert_output ""
	[ "$stderr" = "ocidec list: warn: x: skipped /dev/notadevice: not of the kind 'devices' lists" ]
}

@test "a write error on stdout is exit 1; a closed pipe is not an error" {
	run bash -c "'$OCIDEC' list -c '$CFG' >/dev/full"
	assert_failure 1
	assert_output "ocidec list: write error: No space left on device"
	run bash -c "'$OCIDEC' list -c '$CFG' | head -n 1; echo \"status \${PIPESTATUS[0]}\""
	assert_output "$(printf '%s\nstatus 0' "$DR/dev/nvidiactl")"
}

@test "the output feeds a line reader such as restorecon -f -" {
	n=0
	while IFS= read -r path; do
		[[ $path == /* ]]
		[ -e "$path" ] || [ -L "$path" ]
		n=$((n + 1))
	done < <(list -c "$CFG")
	[ "$n" -eq "$(expected_all | wc -l)" ]
	# xargs -d '\n' is how restorecon-style tools take one path per line
	list -c "$CFG" | xargs -d '\n' stat -c %n >"$BATS_TEST_TMPDIR/stat"
	[ "$(cat "$BATS_TEST_TMPDIR/stat")" = "$(expected_all)" ]
}

@test "the shipped configs on this host exit 0" {
	cp "$CONF"/*.ini "$CFG/" && chmod 0644 "$CFG"/*.ini
	run list -c "$CFG"
	assert_success
}

@test "device_index = bus: an NVIDIA index or UUID a container asks for is the GPU NVML numbers so" {
	B=$BATS_TEST_TMPDIR/b
	for sel in 0 GPU-11111111-2222-3333-4444-555555555555 1 GPU-66666666-7777-8888-9999-000000000000; do
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" "NVIDIA_VISIBLE_DEVICES=$sel" >/dev/null
		run hook -c "$CFG" --dry-run <<<"{\"id\": \"x\", \"bundle\": \"$B\"}"
		assert_success
		case $sel in
		0 | GPU-1*) assert_line --partial "mount $DR/dev/nvidia1 "; refute_line --partial "mount $DR/dev/nvidia0 " ;;
		*) assert_line --partial "mount $DR/dev/nvidia0 "; refute_line --partial "mount $DR/dev/nvidia1 " ;;
		esac
	done
	"$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=2 >/dev/null
	run hook -c "$CFG" --dry-run <<<"{\"id\": \"x\", \"bundle\": \"$B\"}"
	assert_failure 1
	assert_output "ocidec hook: container x: nvidia: no device 2: $DR/proc/driver/nvidia/gpus/*/information lists no such device (device_index = bus)"
	# without device_uuids the key means nothing: refused
	sed -i '/^device_uuids/d' "$CFG/nvidia.ini"
	run list -c "$CFG"
	assert_failure 2
	assert_output --partial "device_index = bus needs device_uuids"
}

@test "a listed directory's files are listed too (restorecon -f labels each line's path, not what is below it), not through links" {
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	mkdir -p "$DR/usr/share/demo/sub"
	echo x >"$DR/usr/share/demo/sub/data"
	ln -s /etc "$DR/usr/share/demo/sub/out"
	run "$OCIDEC" list -c "$CFG"
	assert_success
	assert_line "$DR/usr/share/demo"
	assert_line "$DR/usr/share/demo/README"
	assert_line "$DR/usr/share/demo/sub/data"
	assert_line "$DR/usr/share/demo/sub/out"
	refute_line --partial "$DR/usr/share/demo/sub/out/"
}

@test "list --restorecon leaves out the vendors whose driver root is not / (restorecon would give a driver container's files /run's label), and says so" {
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	printf '[vendor]\nactivation_flag = OCI_SLASH\ndriver_root = /\n[feature.a]\nbinaries = /bin/sh\n' | write_ini slash
	run "$OCIDEC" list -c "$CFG" --restorecon
	assert_success
	refute_line --regexp "^$DR"
	assert_line --regexp '^/(usr/)?bin/sh$'
	assert_line --partial "demo: driver_root $DR not listed for restorecon"
	# stdout alone: the paths restorecon may label
	run sh -c '"$1" list -c "$2" --restorecon 2>/dev/null' sh "$OCIDEC" "$CFG"
	refute_output --partial "$DR"
	run "$OCIDEC" list -c "$CFG"
	assert_line "$DR/usr/bin/demo-tool"
}

@test "binary_dirs: a driver whose programs are in /usr/local/nvidia/bin (the GPU node layout of GKE and of the cloud image a real H100 was checked on) is found there first; a relative directory is refused (issue 37)" {
	local r=$BATS_TEST_TMPDIR/nv
	"$FIXTURES/driver-root.sh" "$r" >/dev/null
	mkdir -p "$r/usr/local/nvidia/bin"
	mv "$r/usr/bin/nvidia-smi" "$r/usr/local/nvidia/bin/nvidia-smi"
	nvidia_ini "$r"
	run list -c "$CFG"
	assert_success
	assert_line "$r/usr/local/nvidia/bin/nvidia-smi"
	refute_line --partial /usr/bin/nvidia-smi
	sed -i 's|^binary_dirs = .*|binary_dirs = usr/local/nvidia/bin|' "$CFG/nvidia.ini"
	run list -c "$CFG"
	assert_failure 2
	assert_output --partial "nvidia.ini:$(grep -n '^binary_dirs' "$CFG/nvidia.ini" | cut -d: -f1): malformed list for 'binary_dirs': 'usr/local/nvidia/bin' must be an absolute path"
}

@test "the GSP firmware in the driver directory of GKE's layout (/usr/local/nvidia/firmware/nvidia/VERSION) is found as in /lib/firmware (issue 47, finding 8)" {
	local r=$BATS_TEST_TMPDIR/nv
	"$FIXTURES/driver-root.sh" "$r" >/dev/null
	mkdir -p "$r/usr/local/nvidia/firmware"
	mv "$r/lib/firmware/nvidia" "$r/usr/local/nvidia/firmware/nvidia"
	nvidia_ini "$r"
	run list -c "$CFG"
	assert_success
	assert_line "$r/usr/local/nvidia/firmware/nvidia/550.54.15/gsp_ga10x.bin"
	assert_line "$r/usr/local/nvidia/firmware/nvidia/550.54.15/gsp_tu10x.bin"
	refute_line --partial "/lib/firmware/"
}
