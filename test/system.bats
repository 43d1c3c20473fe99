#!/usr/bin/env bats
# `ocidec system`, NVIDIA's `nvidia-ctk system create-device-nodes` and
# `create-dev-char-symlinks`, with the shipped nvidia.ini on the fake driver
# root (test/fixtures/driver-root.sh: its nodes, and the information files
# of two GPUs, index 0 of minor 1, index 1 of minor 0). The kernel's
# /proc/devices is a fixture too: the binary runs in a mount namespace of
# its own with $PROCDEV bound over it. Nodes and links are made in this
# test's directories only (or over a tmpfs /dev of that namespace).

load helpers

setup() {
	common_setup
	driver_root
	nvidia_ini "$DR"
	R=$BATS_TEST_TMPDIR/root
	C=$BATS_TEST_TMPDIR/char
	mkdir -p "$R/dev"
	PROCDEV=$BATS_TEST_TMPDIR/devices
	printf 'Character devices:\n  1 mem\n195 nvidia\n235 nvidia-caps\n510 nvidia-uvm\n\nBlock devices:\n  8 sd\n' >"$PROCDEV"
}

# ns CMD...: CMD in a private mount namespace whose /proc/devices is $PROCDEV
ns() {
	unshare -m sh -c 'mount --bind "$0" /proc/devices && exec "$@"' "$PROCDEV" "$@"
}

# nodes DIR: each entry of DIR: name, type, numbers, mode, owner
nodes() {
	(cd "$1" && stat -c '%n %F %Hr:%Lr %a %U:%G' -- * | LC_ALL=C sort)
}

# links DIR: each link of DIR and its text
links() {
	(cd "$1" && for l in *; do echo "$l -> $(readlink "$l")"; done | LC_ALL=C sort)
}

CONTROL_NODES="nvidia-modeset character special file 195:254 666 root:root
nvidia-uvm character special file 510:0 666 root:root
nvidia-uvm-tools character special file 510:1 666 root:root
nvidiactl character special file 195:255 666 root:root"

@test "create-device-nodes --control-devices: nvidia-modprobe's four nodes, 0666, majors from /proc/devices" {
	run --separate-stderr ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R"
	assert_success
	assert_output "mknod -m 0666 $R/dev/nvidiactl c 195 255
mknod -m 0666 $R/dev/nvidia-modeset c 195 254
mknod -m 0666 $R/dev/nvidia-uvm c 510 0
mknod -m 0666 $R/dev/nvidia-uvm-tools c 510 1"
	[ -z "$stderr" ]
	run nodes "$R/dev"
	assert_output "$CONTROL_NODES"
	# whatever the caller's umask
	rm -f "$R"/dev/*
	run ns sh -c 'umask 077 && exec "$@"' sh system create-device-nodes -c "$CFG" --control-devices --dev-root "$R"
	assert_success
	run nodes "$R/dev"
	assert_output "$CONTROL_NODES"
}

@test "--devices: each GPU's node, its minor its information file's; an index is NVML's (bus order)" {
	run ns system create-device-nodes -c "$CFG" --devices all --dev-root "$R"
	assert_success
	assert_output "mknod -m 0666 $R/dev/nvidia1 c 195 1
mknod -m 0666 $R/dev/nvidia0 c 195 0"
	rm -f "$R"/dev/*
	run ns system create-device-nodes -c "$CFG" --devices 0 --dev-root "$R"
	assert_success
	run nodes "$R/dev"
	assert_output "nvidia1 character special file 195:1 666 root:root"
	# both: the control nodes first
	run ns system create-device-nodes -c "$CFG" --control-devices -d 1 --dev-root "$R" nvidia
	assert_success
	assert_line --index 0 "mknod -m 0666 $R/dev/nvidiactl c 195 255"
	assert_line --index 4 "mknod -m 0666 $R/dev/nvidia0 c 195 0"
	[ "${#lines[@]}" -eq 5 ]
}

@test "a second run makes nothing and says nothing; a node's mode is left as the admin set it" {
	ns system create-device-nodes -c "$CFG" --control-devices --devices all --dev-root "$R" >/dev/null
	chmod 0600 "$R/dev/nvidia0"
	before=$(nodes "$R/dev")
	run --separate-stderr ns system create-device-nodes -c "$CFG" --control-devices --devices all --dev-root "$R"
	assert_success
	assert_output ""
	[ -z "$stderr" ]
	[ "$(nodes "$R/dev")" = "$before" ]
	grep -qx 'nvidia0 character special file 195:0 600 root:root' <<<"$before"
}

@test "--dry-run prints what it would make and makes nothing" {
	ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R" >/dev/null
	before=$(fingerprint "$R")
	run --separate-stderr ns system create-device-nodes -c "$CFG" --control-devices --devices all --dev-root "$R" --dry-run
	assert_success
	assert_output "mknod -m 0666 $R/dev/nvidia1 c 195 1
mknod -m 0666 $R/dev/nvidia0 c 195 0"
	[ "$(fingerprint "$R")" = "$before" ]
	run ns system create-dev-char-symlinks -c "$CFG" --dev-char-path "$C" -n
	assert_success
	assert_line "ln -s $DR/dev/nvidia0 $C/195:0"
	[ ! -e "$C" ] && [ ! -L "$C" ]
}

@test "without --dev-root the nodes go in the driver root's dev: --driver-root, or NVIDIA's --root" {
	run ns system create-device-nodes -c "$CFG" --control-devices --driver-root "$R/"
	assert_success
	run nodes "$R/dev"
	assert_output "$CONTROL_NODES"
	rm -f "$R"/dev/*
	run ns system create-device-nodes -c "$CFG" --control-devices --root "$R" --load-kernel-modules
	assert_success
	run nodes "$R/dev"
	assert_output "$CONTROL_NODES"
	# the vendor file's driver_root, the fake root, has them all already
	run ns system create-device-nodes -c "$CFG" --devices all -r "$DR"
	assert_success
	assert_output ""
}

@test "a link planted where a node goes is refused, not followed; nothing is made" {
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$R/dev/nvidia-uvm"
	run ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R"
	assert_failure 1
	assert_output "ocidec system: $R/dev/nvidia-uvm: refused: a symbolic link is there, not the character device 510:0 (remove it, then run this again)"
	[ ! -e "$BATS_TEST_TMPDIR/elsewhere" ] && [ ! -L "$BATS_TEST_TMPDIR/elsewhere" ]
	[ "$(ls -A "$R/dev")" = nvidia-uvm ]
	# a link to the very node the name should be is refused as well
	rm "$R/dev/nvidia-uvm"
	ln -s "$DR/dev/nvidia-uvm" "$R/dev/nvidia-uvm"
	run ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R"
	assert_failure 1
	assert_output --partial "refused: a symbolic link is there"
	[ "$(ls -A "$R/dev")" = nvidia-uvm ]
}

@test "a file, a directory or another device under a node's name is refused" {
	for what in file dir dev; do
		rm -rf "${R:?}/dev" && mkdir "$R/dev"
		case $what in
		file) : >"$R/dev/nvidia0"; kind="a file" ;;
		dir) mkdir "$R/dev/nvidia0"; kind="a directory" ;;
		dev) mknod "$R/dev/nvidia0" c 1 3; kind="another character device" ;;
		esac
		run ns system create-device-nodes -c "$CFG" --control-devices --devices all --dev-root "$R"
		assert_failure 1
		assert_output "ocidec system: $R/dev/nvidia0: refused: $kind is there, not the character device 195:0 (remove it, then run this again)"
		[ "$(ls -A "$R/dev")" = nvidia0 ]
	done
}

@test "a driver /proc/devices does not list fails the run, naming it, before anything is made" {
	# nvidia-uvm not loaded; a block driver of that name is no character one
	printf 'Character devices:\n  1 mem\n195 nvidia\n\nBlock devices:\n510 nvidia-uvm\n' >"$PROCDEV"
	run ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R"
	assert_failure 1
	assert_output "ocidec system: nvidia: nvidia-uvm: /proc/devices has no driver nvidia-uvm: is its kernel module loaded?"
	[ -z "$(ls -A "$R/dev")" ]
	run ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R" --load-kernel-modules
	assert_failure 1
	assert_output --partial "loaded? (ocidec loads none: --load-kernel-modules is accepted, not done)"
	# the GPUs' nodes need only nvidia's
	run ns system create-device-nodes -c "$CFG" --devices all --dev-root "$R"
	assert_success
	[ "$(ls "$R/dev" | tr '\n' ' ')" = "nvidia0 nvidia1 " ]
}

@test "drivers before 550.40 call the GPUs' driver nvidia-frontend" {
	printf 'Character devices:\n  1 mem\n195 nvidia-frontend\n511 nvidia-uvm\n' >"$PROCDEV"
	run ns system create-device-nodes -c "$CFG" --control-devices --devices 1 --dev-root "$R"
	assert_success
	run nodes "$R/dev"
	assert_output "nvidia-modeset character special file 195:254 666 root:root
nvidia-uvm character special file 511:0 666 root:root
nvidia-uvm-tools character special file 511:1 666 root:root
nvidia0 character special file 195:0 666 root:root
nvidiactl character special file 195:255 666 root:root"
}

@test "bad usage is one line, exit 2, and nothing is made" {
	printf '[vendor]\nname = other\nactivation_flag = OCI_OTHER\n' | write_ini other
	refused() {  # EXPECTED ARGS...
		local want=$1
		shift
		run ns system "$@"
		assert_failure 2
		assert_output "$want"
		[ -z "$(ls -A "$R/dev")" ] && [ ! -e "$C" ]
	}
	refused "ocidec system: name a command: create-device-nodes or create-dev-char-symlinks (see ocidec system --help)"
	refused "ocidec system: unknown command 'create-nodes': create-device-nodes or create-dev-char-symlinks (see ocidec system --help)" \
		create-nodes
	refused "ocidec system: create-device-nodes: nothing to make: --control-devices, --devices SEL, or both (see ocidec system --help)" \
		create-device-nodes -c "$CFG" --dev-root "$R" --load-kernel-modules
	refused "ocidec system: nvidia: no device 2: $DR/proc/driver/nvidia/gpus/*/information finds 2" \
		create-device-nodes -c "$CFG" --control-devices --devices 0,2 --dev-root "$R"
	refused "ocidec system: invalid device selection 'GPU-x' (all, none or indices)" \
		create-device-nodes -c "$CFG" --devices GPU-x --dev-root "$R"
	refused "ocidec system: other: $CFG/other.ini has no device_numbers: ocidec knows no numbers of its nodes" \
		create-device-nodes -c "$CFG" --control-devices --dev-root "$R" nvidia other
	refused "ocidec system: no vendor 'amd' in $CFG (see ocidec system --help)" \
		create-device-nodes -c "$CFG" --control-devices --dev-root "$R" amd
	refused "ocidec system: --dev-root root: not an absolute path without . or .. (see ocidec system --help)" \
		create-device-nodes -c "$CFG" --devices 0 --dev-root root
	refused "ocidec system: --driver-root $R/../root: not an absolute path without . or .. (see ocidec system --help)" \
		create-device-nodes -c "$CFG" --control-devices --driver-root "$R/../root"
	refused "ocidec system: unknown option '--create-all' (see ocidec system --help)" \
		create-device-nodes -c "$CFG" --control-devices --dev-root "$R" --create-all
	refused "ocidec system: --watch: not supported (NVIDIA's toolkit dropped it in 1.18): run this again once nodes are made (see ocidec system --help)" \
		create-dev-char-symlinks -c "$CFG" --dev-char-path "$C" --watch
	refused "ocidec system: --dev-char-path char: not an absolute path without . or .. (see ocidec system --help)" \
		create-dev-char-symlinks -c "$CFG" --dev-char-path char
}

@test "device_numbers is checked when the vendor file is loaded" {
	line=$(grep -n '^device_numbers' "$CFG/nvidia.ini" | cut -d: -f1)
	for bad in nvidiactl:nvidia nvidiactl:nvidia:1048576 nvidiactl:nvidia:0x1 .:nvidia:1 'nvidia%u:nvidia:3' \
		nvidiactl:nvidia:%u 'nvidia%u%u:nvidia:%u' 'nvidiactl:nvidia||x:0' 'nvidiactl:|nvidia:0' \
		nvidiactl::0 'nvidia ctl:nvidia:0' nvidiactl:nvidia:1:2 'dri/card0:drm:0'; do
		sed "/^device_numbers/,/^[^[:space:]]/{/^\t/d}; s#^device_numbers = .*#device_numbers = $bad#" \
			"$CONF/nvidia.ini" >"$CFG/nvidia.ini"
		run ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R"
		assert_failure 2
		assert_output --regexp "^ocidec system: $CFG/nvidia.ini:$line: malformed list for 'device_numbers': '.*' (is not NODE:DRIVER:MINOR|has a)"
	done
	# a device's node: a per_device_nodes pattern, its minors from device_uuids
	sed "/^device_numbers/,/^[^[:space:]]/{/^\t/d}; s|^device_numbers = .*|device_numbers = gpu%u:nvidia:%u|" \
		"$CONF/nvidia.ini" >"$CFG/nvidia.ini"
	run ns system create-device-nodes -c "$CFG" --control-devices --dev-root "$R"
	assert_failure 2
	assert_output "ocidec system: $CFG/nvidia.ini:$line: device_numbers: gpu%u:nvidia:%u: a node with %u must be one of per_device_nodes, with device_uuids (what gives each device's minor)"
	[ -z "$(ls -A "$R/dev")" ]
}

@test "create-dev-char-symlinks: DIR/MAJOR:MINOR, a link to each character device of the vendors under the driver root" {
	# (no /proc/devices read: the nodes there give their numbers)
	run --separate-stderr system create-dev-char-symlinks -c "$CFG" --dev-char-path "$C"
	assert_success
	[ -z "$stderr" ]
	run links "$C"
	# nvidia-uvmfoo is no node nvidia.ini names
	assert_output "195:0 -> $DR/dev/nvidia0
195:1 -> $DR/dev/nvidia1
195:255 -> $DR/dev/nvidiactl
510:0 -> $DR/dev/nvidia-uvm"
	[ "$(stat -c %F "$C")" = directory ]
	# each leads to its device
	for l in "$C"/*; do [ "$(stat -L -c '%Hr:%Lr' "$l")" = "$(basename "$l")" ]; done
	# ocidec-system, as NVIDIA's name reads: the same, and nothing to do
	run ocidec-system create-dev-char-symlinks -c "$CFG" --dev-char-path "$C" nvidia
	assert_success
	assert_output ""
}

@test "links in the driver root's own dev/char are relative, as udev writes them" {
	mknod "$R/dev/nvidiactl" c 195 255
	mknod "$R/dev/nvidia3" c 195 3
	# (on stderr: the root has no ld.so.cache for the vendor's libraries)
	run --separate-stderr system create-dev-char-symlinks -c "$CFG" --driver-root "$R" --dev-char-path "$R/dev/char/"
	assert_success
	assert_output "ln -s ../nvidiactl $R/dev/char/195:255
ln -s ../nvidia3 $R/dev/char/195:3"
	run links "$R/dev/char"
	assert_output "195:255 -> ../nvidiactl
195:3 -> ../nvidia3"
}

@test "a second run makes nothing; a link already leading to the device (udev's) is kept" {
	mkdir "$C"
	ln -s "$DR/dev/../dev/nvidia0" "$C/195:0"
	run system create-dev-char-symlinks -c "$CFG" --dev-char-path "$C"
	assert_success
	refute_line --partial "$C/195:0"
	[ "${#lines[@]}" -eq 3 ]
	before=$(fingerprint "$C")
	run --separate-stderr system create-dev-char-symlinks -c "$CFG" --dev-char-path "$C"
	assert_success
	assert_output ""
	[ "$(fingerprint "$C")" = "$before" ]
}

@test "anything else at a link's name is refused, and nothing is made" {
	mkdir "$C"
	for what in file other dangling; do
		rm -f "$C"/*
		case $what in
		file) : >"$C/195:1"; kind="a file" ;;
		other) ln -s /dev/null "$C/195:1"; kind="a link elsewhere" ;;
		dangling) ln -s "$BATS_TEST_TMPDIR/nowhere" "$C/195:1"; kind="a link elsewhere" ;;
		esac
		run system create-dev-char-symlinks -c "$CFG" --dev-char-path "$C"
		assert_failure 1
		assert_output "ocidec system: $C/195:1: refused: $kind is there, not a link to $DR/dev/nvidia1 (remove it, then run this again)"
		[ "$(ls -A "$C")" = 195:1 ]
		[ ! -e "$BATS_TEST_TMPDIR/nowhere" ]
	done
}

@test "a links directory that is a symlink is refused, never followed" {
	mkdir "$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$C"
	run system create-dev-char-symlinks -c "$CFG" --dev-char-path "$C"
	assert_failure 1
	assert_output "ocidec system: $C: refused: a symbolic link, not a directory"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/target")" ]
}

@test "--create-all: links for device_numbers' nodes not made yet too; --create-device-nodes makes the control ones first" {
	run ns system create-dev-char-symlinks -c "$CFG" --driver-root "$R" --dev-char-path "$C" --create-all
	assert_success
	[ -z "$(ls -A "$R/dev")" ]
	run links "$C"
	# (relative: the nodes are below the links directory's parent)
	assert_output "195:0 -> ../root/dev/nvidia0
195:1 -> ../root/dev/nvidia1
195:254 -> ../root/dev/nvidia-modeset
195:255 -> ../root/dev/nvidiactl
510:0 -> ../root/dev/nvidia-uvm
510:1 -> ../root/dev/nvidia-uvm-tools"
	# (NVIDIA's takes --create-device-nodes only with --create-all)
	rm -rf "$C"
	run --separate-stderr ns system create-dev-char-symlinks -c "$CFG" --driver-root "$R" --dev-char-path "$C" --create-device-nodes \
		--load-kernel-modules
	assert_success
	assert_line --index 0 "mknod -m 0666 $R/dev/nvidiactl c 195 255"
	assert_line --index 4 "ln -s ../root/dev/nvidiactl $C/195:255"
	[ "${#lines[@]}" -eq 8 ]
	run nodes "$R/dev"
	assert_output "$CONTROL_NODES"
	for l in "$C"/*; do [ "$(stat -L -c '%Hr:%Lr' "$l")" = "$(basename "$l")" ]; done
}

@test "the defaults, /dev and /dev/char, over a tmpfs in a mount namespace of its own: the host's /dev untouched" {
	sed "s|^version_file.*|version = 550.54.15|; s|^device_uuids = |device_uuids = $DR|" "$CONF/nvidia.ini" | write_ini nvidia
	host=$(ls -A /dev /dev/char 2>/dev/null || true)
	run ns sh -c 'export LC_ALL=C && mount -t tmpfs -o mode=0755 tmpfs /dev &&
		system create-device-nodes -c "$0" --control-devices --devices all >/dev/null &&
		system create-dev-char-symlinks -c "$0" >/dev/null &&
		cd /dev && stat -c "%n %F %Hr:%Lr %a" -- nvidia* && cd char && for l in *; do echo "$l -> $(readlink "$l")"; done' "$CFG"
	assert_success
	assert_output "nvidia-modeset character special file 195:254 666
nvidia-uvm character special file 510:0 666
nvidia-uvm-tools character special file 510:1 666
nvidia0 character special file 195:0 666
nvidia1 character special file 195:1 666
nvidiactl character special file 195:255 666
195:0 -> ../nvidia0
195:1 -> ../nvidia1
195:254 -> ../nvidia-modeset
195:255 -> ../nvidiactl
510:0 -> ../nvidia-uvm
510:1 -> ../nvidia-uvm-tools"
	[ "$(ls -A /dev /dev/char 2>/dev/null || true)" = "$host" ]
}
