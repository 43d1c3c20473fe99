#!/usr/bin/env bats
# The hook under runc: real bundles, a demo vendor (test/fixtures/demo-vendor.sh),
# the container's own view checked from inside it.

load helpers

setup_file() {
	export DR=$BATS_FILE_TMPDIR/dr
	demo_vendor "$DR" "$BATS_FILE_TMPDIR/cfg0"
}

setup() {
	common_setup
	demo_vendor
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-test-$$-$BATS_TEST_NUMBER
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
	if [ -n "${SPID:-}" ]; then kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null || true; fi
	[ -n "${CG1:-}" ] && umount "$CG1/devices.allow" 2>/dev/null || true
	for cg in "${CG:-}" "${CG1:-}" "${CGP:-}"; do
		[ -n "$cg" ] && [ -d "$cg" ] || continue
		while read -r p; do echo "$p" >"$(dirname "$cg")/cgroup.procs"; done <"$cg/cgroup.procs"
		rmdir "$cg"
	done
	[ -z "${CG2_MINE:-}" ] || umount "$CG2_MINE"
	[ -z "${CG2NAME:-}" ] || "$FIXTURES/cgroup2.sh" --clean "$CG2NAME"
}

# cg2: the unified hierarchy's mount point in CG2 (the host's, or one of the
# test's own under its directory: a hybrid host may mount none)
cg2() {
	CG2=$(awk '$9 == "cgroup2" && $4 == "/" { print $5; exit }' /proc/self/mountinfo)
	if [ -z "$CG2" ]; then
		CG2=$BATS_TEST_TMPDIR/cgroup2
		mkdir "$CG2"
		mount -t cgroup2 none "$CG2"
		CG2_MINE=$CG2
	fi
}

# bundle [KEY=VALUE...] [-- ARGS...]: the test's bundle, with the hook
bundle() {
	rm -rf "$B"
	HOOK="$OCIDEC ocidec-hook -c $CFG ${HOOK_ARGS:-}prestart" "$FIXTURES/bundle.sh" "$B" "$@"
}

# in_container SCRIPT [KEY=VALUE...]: run SCRIPT in a fresh container
in_container() {
	local script=$1
	shift
	bundle "$@" -- sh -c "$script" >/dev/null
	(cd "$B" && runc run "$ID")
}

@test "activated: device, library, program, file and directory are there, read-only, and the program runs" {
	run in_container 'grep -E " /(dev/democtl|dev/demo[01]|usr/bin/demo-tool|opt/demo/lib/libdemo.so.1.0|etc/demo/demo.conf|usr/share/demo) " /proc/self/mountinfo | cut -d" " -f5,6; demo-tool; readlink /opt/demo/lib/libdemo.so.1; cat /etc/demo/demo.conf; (echo x >/etc/demo/demo.conf) 2>&1; cat /usr/share/demo/README' OCI_DEMO=all
	assert_success
	assert_line "/dev/democtl ro,nosuid,noexec,relatime"
	assert_line "/dev/demo0 ro,nosuid,noexec,relatime"
	assert_line "/dev/demo1 ro,nosuid,noexec,relatime"
	assert_line "/usr/bin/demo-tool ro,nosuid,nodev,relatime"
	assert_line "/opt/demo/lib/libdemo.so.1.0 ro,nosuid,nodev,relatime"
	assert_line "/etc/demo/demo.conf ro,nosuid,nodev,relatime"
	assert_line "/usr/share/demo ro,nosuid,nodev,relatime"
	assert_line "demo-tool: the answer is 42"
	assert_line "libdemo.so.1.0"
	assert_line "answer = 42"
	assert_line --partial "Read-only file system"
	assert_line "demo data"
}

@test "not activated (unset, empty, void): the rootfs is left as it was" {
	for env in OTHER=1 OCI_DEMO= OCI_DEMO=void; do
		bundle "$env" -- sh -c 'grep -c demo /proc/self/mountinfo; true' >/dev/null
		before=$(cd "$B/rootfs" && find . -printf '%p %y %s %m\n' | sort)
		run bash -c "cd '$B' && runc run '$ID'"
		assert_success
		assert_output 0
		assert_equal "$(cd "$B/rootfs" && find . -printf '%p %y %s %m\n' | sort)" "$before"
		runc delete -f "$ID" >/dev/null 2>&1 || true
	done
}

@test "none gives the files but no per-device node; an index list gives exactly those" {
	run in_container 'ls /dev | grep demo; demo-tool' OCI_DEMO=none
	assert_success
	assert_output $'democtl\ndemo-tool: the answer is 42'
	runc delete -f "$ID"
	run in_container 'ls /dev | grep demo' OCI_DEMO=1
	assert_output $'demo1\ndemoctl'
}

@test "the annotation wins over env, both ways" {
	ANNOTATIONS=ocidec.io/demo=none run in_container 'ls /dev | grep demo' OCI_DEMO=all
	assert_output democtl
	runc delete -f "$ID"
	ANNOTATIONS=ocidec.io/demo=void run in_container 'ls /dev | grep -c demo; true' OCI_DEMO=all
	assert_output 0
	runc delete -f "$ID"
	ANNOTATIONS=ocidec.io/demo=0 run in_container 'ls /dev | grep demo'
	assert_output $'demo0\ndemoctl'
}

@test "the features the container names are what it gets" {
	run in_container 'grep -E " /(run/demo|usr/bin/demo-tool) " /proc/self/mountinfo | cut -d" " -f5,6' OCI_DEMO=all DEMO_FEATURES=ipc
	assert_success
	assert_output "/run/demo ro,nosuid,nodev,noexec,relatime"
	runc delete -f "$ID"
	run in_container 'test -e /run/demo || echo no-ipc; demo-tool' OCI_DEMO=all DEMO_FEATURES=bogus
	assert_output $'no-ipc\ndemo-tool: the answer is 42'
}

# syslogd: a system log stand-in at $SOCK, received lines in $SYSLOG
syslogd() {
	SOCK=$BATS_TEST_TMPDIR/log.sock SYSLOG=$BATS_TEST_TMPDIR/syslog
	"$FIXTURES/syslogd.py" "$SOCK" "$SYSLOG" &
	SPID=$!
	wait_until -t 5 '[ -S "$SOCK" ]'
}

@test "a broken vendor file fails only the containers that name it; the others start, and the logs say why" {
	printf '[vendor]\nactivation_flag = OCI_X\nbogus = 1\n' >"$CFG/bad.ini"
	chmod 0644 "$CFG/bad.ini"
	run in_container 'echo started' OCI_X=all
	assert_failure
	refute_output --partial started
	assert_output --partial "ocidec hook: container $ID: $CFG/bad.ini:3: unknown key 'bogus' in [vendor]"
	runc delete -f "$ID"
	# a container that activates another vendor gets it; the error is
	# logged, and reaches the system log (runc shows nothing of a hook
	# that succeeds)
	syslogd
	HOOK_ARGS="--log $BATS_TEST_TMPDIR/log --syslog $SOCK " run in_container 'demo-tool' OCI_DEMO=all
	assert_success
	assert_output "demo-tool: the answer is 42"
	grep -q "warn: $CFG/bad.ini:3: unknown key 'bogus' in \[vendor\] (ignored: the container names no vendor of it)" "$BATS_TEST_TMPDIR/log"
	grep -Eq "^<28>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} ocidec\[[0-9]+\]: ocidec hook: warn: $CFG/bad.ini:3: unknown key" "$SYSLOG"
}

@test "a vendor file or directory others may write fails only the containers that name a vendor in it" {
	chmod 0666 "$CFG/demo.ini"
	run in_container 'echo started' OCI_DEMO=all
	assert_failure
	assert_output --partial "ocidec hook: container $ID: $CFG/demo.ini: refused: writable by group or others (mode 0666)"
	runc delete -f "$ID"
	chmod 0644 "$CFG/demo.ini"
	chmod 0777 "$CFG"
	run in_container 'echo started' OCI_DEMO=all
	assert_failure
	assert_output --partial "ocidec hook: container $ID: $CFG: refused: writable by group or others (mode 0777)"
	runc delete -f "$ID"
	run in_container 'echo started'
	assert_success
	assert_output started
}

@test "nothing silent: a missing device or driver fails the container (issue 33: missing_driver = start warns instead); an unknown feature, a squatting file warn" {
	LOG=$BATS_TEST_TMPDIR/log
	syslogd
	HOOK_ARGS="--log $LOG --syslog $SOCK "
	# a device asked for by index that the driver root does not have
	run in_container 'echo started' OCI_DEMO=0,7
	assert_failure
	refute_output --partial started
	assert_output --partial "demo: no device 7: $DR/dev/demo7 not found"
	runc delete -f "$ID"
	# an unknown feature: the known ones are given, with a warning
	run in_container 'demo-tool' OCI_DEMO=all DEMO_FEATURES=base,bogus
	assert_success
	grep -q "warn: demo: DEMO_FEATURES names unknown feature 'bogus'; ignored" "$LOG"
	runc delete -f "$ID"
	# a regular file of the image where the driver's SONAME link goes
	bundle OCI_DEMO=all -- sh -c 'cat /opt/demo/lib/libdemo.so.1' >/dev/null
	mkdir -p "$B/rootfs/opt/demo/lib"
	echo "the image's own" >"$B/rootfs/opt/demo/lib/libdemo.so.1"
	run sh -c "cd '$B' && runc run '$ID'"
	assert_output "the image's own"
	grep -q "warn: /opt/demo/lib/libdemo.so.1: the image has a file there; the driver's link to libdemo.so.1.0 is not made" "$LOG"
	runc delete -f "$ID"
	# an active vendor whose driver root has none of its files, or is not
	# there: the container fails, naming what is missing (issue 33, finding 3)
	mkdir "$BATS_TEST_TMPDIR/empty"
	sed -i "s|^driver_root = .*|driver_root = $BATS_TEST_TMPDIR/empty|" "$CFG/demo.ini"
	run in_container 'echo started' OCI_DEMO=all
	assert_failure
	refute_output started
	assert_output --partial "ocidec hook: container $ID: demo: asked for, but none of its files is under driver_root $BATS_TEST_TMPDIR/empty: is the driver installed? (missing_driver = start in $CFG/demo.ini lets such a container start without it)"
	runc delete -f "$ID"
	sed -i "s|^driver_root = .*|driver_root = $BATS_TEST_TMPDIR/gone|" "$CFG/demo.ini"
	run in_container 'echo started' OCI_DEMO=all
	assert_failure
	assert_output --partial "ocidec hook: container $ID: demo: asked for, but its driver is not there: driver_root $BATS_TEST_TMPDIR/gone: No such file or directory"
	runc delete -f "$ID"
	# a container that asks for nothing starts; one that asks for none of the devices too
	run in_container 'echo started'
	assert_success
	runc delete -f "$ID"
	# missing_driver = start: a mixed fleet's warn-and-start
	sed -i 's/^\[vendor\]$/[vendor]\nmissing_driver = start/' "$CFG/demo.ini"
	run in_container 'echo started' OCI_DEMO=all
	assert_success
	assert_output started
	grep -q "warn: demo: active, but driver_root $BATS_TEST_TMPDIR/gone: No such file or directory: the container gets nothing from it" "$LOG"
	runc delete -f "$ID"
	sed -i "s|^driver_root = .*|driver_root = $BATS_TEST_TMPDIR/empty|" "$CFG/demo.ini"
	run in_container 'echo started' OCI_DEMO=all
	assert_success
	grep -q "warn: demo: active, but none of its files is under driver_root $BATS_TEST_TMPDIR/empty: the container gets nothing from it" "$LOG"
	# every warning reached the system log too
	[ "$(grep -c "ocidec hook: warn: " "$SYSLOG")" -eq "$(grep -c "warn: " "$LOG")" ]
}

@test "a container that asks for nothing starts whatever state the configs are in" {
	printf '[vendor]\nactivation_flag = OCI_X\nbogus = 1\nmalformed line\n' >"$CFG/bad.ini"
	echo "garbage" >"$CFG/novendor.ini"
	chmod 0666 "$CFG/bad.ini"
	run in_container 'echo started'
	assert_success
	assert_output started
	runc delete -f "$ID"
	# a missing configuration directory means no vendors, active or not
	CFG=$BATS_TEST_TMPDIR/none run in_container 'echo started' OCI_DEMO=all
	assert_success
	assert_output started
}

@test "the idle scan reads a [vendor] section's activation keys as inih does" {
	# comments, other keys with their continuation lines and a malformed line
	# around the activation keys: only a continuation of an activation key
	# adds one; a broken file fails the containers that name it, and only them
	cat >"$CFG/odd.ini" <<-'EOF'
	; comment
	[vendor]
	  # indented comment
	name = odd
	driver_root = /
	   activation_flag = OCI_TRAP
	this line is malformed

	activation_aliases = OCI_ODD
	   OCI_ODD2 ; a continuation
	[feature.x]
	activation_flag = OCI_TRAP2
	EOF
	chmod 0644 "$CFG/odd.ini"
	for v in OCI_TRAP OCI_TRAP2 OCI_NONE; do
		run in_container 'echo started' "$v=all"
		assert_success
		assert_output started
		runc delete -f "$ID"
	done
	for v in OCI_ODD OCI_ODD2; do
		run in_container 'echo started' "$v=all"
		assert_failure
		assert_output --partial "ocidec hook: container $ID: $CFG/odd.ini:"
		runc delete -f "$ID"
	done
}

@test "cgroup v1: the 10:237 device opens only with cgroup control on" {
	run in_container 'cat /dev/democtl </dev/null' OCI_DEMO=all
	assert_output "cat: read error: Invalid argument"     # opened: the loop-control ioctl device
	runc delete -f "$ID"
	EXTRA='cgroup_devices = false' demo_vendor
	run in_container 'cat /dev/democtl </dev/null' OCI_DEMO=all
	assert_output "cat: can't open '/dev/democtl': Operation not permitted"
}

@test "a second run on the same container changes nothing; --dry-run prints the plan" {
	bundle OCI_DEMO=all >/dev/null
	(cd "$B" && runc create "$ID")         # the first run: the prestart hook
	pid=$(runc state "$ID" | perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->{pid}')
	state="{\"ociVersion\": \"1.0.2\", \"id\": \"$ID\", \"pid\": $pid, \"status\": \"created\", \"bundle\": \"$B\"}"
	mounts() { grep -c "$DR" "/proc/$pid/mountinfo"; }
	before=$(mounts)
	cache=$(cksum <"$B/rootfs/etc/ld.so.cache")
	[ "$before" -eq 7 ]
	run "$OCIDEC" hook -c "$CFG" prestart <<<"$state"
	assert_success
	assert_equal "$(mounts)" "$before"
	assert_equal "$(cksum <"$B/rootfs/etc/ld.so.cache")" "$cache"
	run "$OCIDEC" hook -c "$CFG" --dry-run <<<"$state"
	assert_success
	assert_line "mount $DR/opt/demo/lib/libdemo.so.1.0 /opt/demo/lib/libdemo.so.1.0 ro,nosuid,nodev"
	assert_line "symlink /opt/demo/lib/libdemo.so.1 libdemo.so.1.0"
	assert_line "mount $DR/dev/democtl /dev/democtl ro,nosuid,noexec"
	assert_line --regexp "^cgroup /sys/fs/cgroup/devices/.*/devices.allow c 10:237 rwm$"
	assert_line "ldcache /opt/demo/lib"
	assert_line "ldcache-entry libdemo.so.1 /opt/demo/lib/libdemo.so.1"
	assert_equal "$(mounts)" "$before"
}

@test "inject --pid puts a vendor into a running container" {
	RW=1 bundle -- sleep 100 >/dev/null
	(cd "$B" && runc run -d "$ID" >/dev/null 2>&1 </dev/null)
	pid=$(runc state "$ID" | perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->{pid}')
	run -127 runc exec "$ID" sh -c 'demo-tool'
	run inject -c "$CFG" --pid "$pid" demo
	assert_success
	run runc exec "$ID" demo-tool
	assert_success
	assert_output "demo-tool: the answer is 42"
	run inject -c "$CFG" --pid "$pid" demo       # again: nothing stacks
	assert_success
	run runc exec "$ID" sh -c 'grep -c " /usr/bin/demo-tool " /proc/self/mountinfo'
	assert_output 1
}

@test "malformed state or config.json: exit 1, one line" {
	mkdir -p "$B/rootfs"
	run hook -c "$CFG" <<<'{"bundle": '
	assert_failure 1
	assert_output "ocidec hook: container state: invalid JSON at byte 11"
	run hook -c "$CFG" <<<'[1]'
	assert_output "ocidec hook: container state: not a JSON object"
	run hook -c "$CFG" <<<'{"id": "x"}'
	assert_output "ocidec hook: container state: no \"bundle\""
	run hook -c "$CFG" <<<'{"id": "x", "pid": -4, "bundle": "/tmp"}'
	assert_output "ocidec hook: container state: \"pid\" is not a process id"
	# a config.json in which nothing can activate a vendor is not parsed:
	# the hook never fails a container that asks for nothing
	printf '{"root": {"path": "/"}, "process": ' >"$B/config.json"
	run hook -c "$CFG" <<<"{\"bundlePath\": \"$B\", \"pid\": 1}"
	assert_success
	assert_output ""
	printf '{"root": {"path": "/"}, "annotations": {"ocidec.io/demo": "all"}}' >"$B/config.json"
	run hook -c "$CFG" <<<"{\"bundlePath\": \"$B\", \"pid\": 1}"
	assert_failure 1
	assert_output "ocidec hook: $B/config.json: \"root\".\"path\" is the host's / (/)"
	printf '{"root": {"path": "rootfs"}, "process": {"env": "OCI_DEMO=all"}}' >"$B/config.json"
	run hook -c "$CFG" <<<"{\"bundle\": \"$B\", \"pid\": 1}"
	assert_output "ocidec hook: $B/config.json: \"process\".\"env\" is not an array"
	head -c 100000000 /dev/zero | tr '\0' ' ' >"$B/config.json"
	run hook -c "$CFG" <<<"{\"bundle\": \"$B\", \"pid\": 1}"
	assert_failure 1
	assert_output "ocidec hook: $B/config.json: larger than 8388608 bytes: File too large"
	run hook -c "$CFG" <<<"{\"bundle\": \"$B\", \"pid\": 1, \"root\": \"/\"}"
	assert_failure 1
	assert_output "ocidec hook: container state: \"root\" is the host's / (/)"
	run hook -c "$CFG" poststop </dev/null
	assert_success
}

@test "a warning is one write(2) of one whole line: lines of concurrent hooks never interleave (issue 23, finding 7)" {
	demo_vendor
	TRACE=$BATS_TEST_TMPDIR/trace run dry OCI_DEMO=all DEMO_FEATURES=base,nosuch
	assert_success
	assert_line "ocidec hook: warn: demo: DEMO_FEATURES names unknown feature 'nosuch'; ignored"
	line="ocidec hook: warn: demo: DEMO_FEATURES names unknown feature 'nosuch'; ignored"
	run grep -E '^[0-9]+ +write(v)?\(2,' "$BATS_TEST_TMPDIR/trace"
	assert_equal "${#lines[@]}" 1
	assert_output --partial "write(2, \"$line\\n\", $((${#line} + 1))) = $((${#line} + 1))"
}

@test "a program reached through a chain of links (Debian's /etc/alternatives): the container's link names the target it gets (issue 24)" {
	demo_vendor
	mkdir -p "$DR/usr/lib/demo/current" "$DR/etc/alternatives"
	cp "$DR/usr/bin/demo-tool" "$DR/usr/lib/demo/current/demo-tool2"
	ln -s /usr/lib/demo/current/demo-tool2 "$DR/etc/alternatives/demo-tool2"
	ln -s /etc/alternatives/demo-tool2 "$DR/usr/bin/demo-tool2"
	sed -i 's|^binaries = /usr/bin/demo-tool$|binaries = /usr/bin/demo-tool /usr/bin/demo-tool2|' "$CFG/demo.ini"
	run dry OCI_DEMO=all
	assert_success
	assert_line "mount $DR/usr/lib/demo/current/demo-tool2 /usr/lib/demo/current/demo-tool2 ro,nosuid,nodev"
	assert_line "symlink /usr/bin/demo-tool2 /usr/lib/demo/current/demo-tool2"
	# one hop keeps the driver's own text
	assert_line "symlink /opt/demo/lib/libdemo.so.1 libdemo.so.1.0"
	# in a container: the name runs the program (before: not found)
	run in_container 'demo-tool2' OCI_DEMO=all
	assert_success
	assert_output "demo-tool: the answer is 42"
}

@test "graphics: the selected GPU's DRM nodes by PCI address (bus_devices), the by-path links made; the other GPU's not (issue 24)" {
	mkdir -p "$BATS_TEST_TMPDIR/gpus/0000:01:00.0" "$BATS_TEST_TMPDIR/gpus/0000:02:00.0"
	printf 'Device Minor: 0\nGPU UUID: GPU-aaaa\n' >"$BATS_TEST_TMPDIR/gpus/0000:01:00.0/information"
	printf 'Device Minor: 1\nGPU UUID: GPU-bbbb\n' >"$BATS_TEST_TMPDIR/gpus/0000:02:00.0/information"
	EXTRA="device_uuids = $BATS_TEST_TMPDIR/gpus/*/information

[feature.graphics]
bus_devices = /dev/dri/by-path/pci-%s-card /dev/dri/by-path/pci-%s-render" demo_vendor
	# card numbers not in the GPUs' order (an iGPU took card0)
	mkdir -p "$DR/dev/dri/by-path"
	mknod "$DR/dev/dri/card1" c 226 1 && mknod "$DR/dev/dri/card2" c 226 2
	mknod "$DR/dev/dri/renderD128" c 226 128 && mknod "$DR/dev/dri/renderD129" c 226 129
	ln -s ../card2 "$DR/dev/dri/by-path/pci-0000:01:00.0-card"
	ln -s ../renderD129 "$DR/dev/dri/by-path/pci-0000:01:00.0-render"
	ln -s ../card1 "$DR/dev/dri/by-path/pci-0000:02:00.0-card"
	ln -s ../renderD128 "$DR/dev/dri/by-path/pci-0000:02:00.0-render"
	run dry OCI_DEMO=GPU-bbbb DEMO_FEATURES=graphics
	assert_success
	assert_line "mount $DR/dev/dri/card1 /dev/dri/card1 ro,nosuid,noexec"
	assert_line "mount $DR/dev/dri/renderD128 /dev/dri/renderD128 ro,nosuid,noexec"
	assert_line "symlink /dev/dri/by-path/pci-0000:02:00.0-card ../card1"
	refute_line --partial card2
	refute_line --partial renderD129
	# without graphics: none
	run dry OCI_DEMO=GPU-bbbb
	refute_line --partial /dev/dri
	# a pattern without %s is refused
	sed -i 's|^bus_devices = .*|bus_devices = /dev/dri/card0|' "$CFG/demo.ini"
	run dry OCI_DEMO=all
	assert_failure 2
	assert_output --partial "malformed list for 'bus_devices': '/dev/dri/card0' needs an absolute path with exactly one %s"
}

@test "activation aliases, UUIDs from information files, features from the env" {
	mkdir -p "$BATS_TEST_TMPDIR/gpus/0000:01:00.0" "$BATS_TEST_TMPDIR/gpus/0000:02:00.0"
	printf 'Model: Demo\nDevice Minor: 0\nGPU UUID: GPU-aaaa\n' >"$BATS_TEST_TMPDIR/gpus/0000:01:00.0/information"
	printf 'Model: Demo\nDevice Minor: 1\nGPU UUID: GPU-bbbb\n' >"$BATS_TEST_TMPDIR/gpus/0000:02:00.0/information"
	EXTRA="activation_aliases = DEMO_VISIBLE_DEVICES
device_uuids = $BATS_TEST_TMPDIR/gpus/*/information" demo_vendor
	run dry DEMO_VISIBLE_DEVICES=GPU-bbbb
	assert_success
	assert_line "mount $DR/dev/demo1 /dev/demo1 ro,nosuid,noexec"
	refute_line --partial /dev/demo0
	run dry OCI_DEMO=0 DEMO_VISIBLE_DEVICES=all    # each variable narrows (issue 22, finding 2)
	assert_line --partial /dev/demo0
	refute_line --partial /dev/demo1
	run dry OCI_DEMO=0 DEMO_VISIBLE_DEVICES=1
	assert_output "ocidec hook: warn: demo: OCI_DEMO=0 DEMO_VISIBLE_DEVICES=1: no device in common: none given"
	run dry OCI_DEMO=GPU-cccc
	assert_failure 1
	assert_output "ocidec hook: demo: no device 'GPU-cccc'"
	# by PCI address, as NVIDIA's toolkit takes it: /proc's spelling, NVML's
	# (8-digit domain, upper case), or without the domain (issue 25)
	for bus in 0000:02:00.0 00000000:02:00.0 02:00.0 0000:02:00.8; do
		run dry OCI_DEMO="$bus"
		if [ "$bus" = 0000:02:00.8 ]; then  # no such function
			assert_failure 1
			continue
		fi
		assert_success
		assert_line --partial /dev/demo1
		refute_line --partial /dev/demo0
	done
	run dry OCI_DEMO=all DEMO_FEATURES=ipc,nosuch
	assert_success
	assert_line "ocidec hook: warn: demo: DEMO_FEATURES names unknown feature 'nosuch'; ignored"
	assert_line "mount $DR/run/demo /run/demo ro,nosuid,nodev,noexec"
	refute_line --partial demo-tool
}

@test "env_needs_cap_sys_admin: env requests from unprivileged containers are refused, annotations are not" {
	EXTRA='env_needs_cap_sys_admin = true' demo_vendor
	CAPS="CAP_CHOWN CAP_KILL" run dry OCI_DEMO=all
	assert_success
	assert_output "ocidec hook: warn: demo: OCI_DEMO=all ignored: the vendor takes no device selection from 'env' for a container without CAP_SYS_ADMIN (unprivileged_selection)"
	CAPS="CAP_CHOWN CAP_SYS_ADMIN" run dry OCI_DEMO=all
	assert_line --partial "/usr/bin/demo-tool"
	CAPS="CAP_CHOWN" ANN='{"ocidec.io/demo": "1"}' run dry
	assert_line --partial "/dev/demo1"
}

# twice OLD NEW: config.json's text with its first OLD replaced by NEW
# (a key given twice cannot be written through a JSON library)
twice() {
	python3 - "$B/config.json" "$1" "$2" <<-'EOF'
		import sys
		text = open(sys.argv[1]).read()
		assert sys.argv[2] in text, sys.argv[2]
		open(sys.argv[1], "w").write(text.replace(sys.argv[2], sys.argv[3], 1))
		EOF
}

@test "config.json: a key given twice in a nested object (env in process, path in a hook, type in a mount), or one runc reads in another case (Process, proce\u017fs), is refused; annotations that differ in case are two (issue 46, finding 8)" {
	# runc (Go's encoding/json) takes "Process" for process, and the last one
	bundle -- echo first >/dev/null
	perl -MJSON::PP -i -0777 -pe '$_ = JSON::PP->new->canonical->encode(decode_json($_))' "$B/config.json"
	twice '"process":{' '"process":{"args":["echo","first"],"cwd":"/","env":["PATH=/bin"],"user":{"uid":0,"gid":0}},"Process":{'
	sed -i 's/"echo","first"\(.*\)"echo","first"/"echo","first"\1"echo","last"/' "$B/config.json"
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	assert_output last
	runc delete -f "$ID" >/dev/null 2>&1 || true
	for edit in \
		'"env":[|"env":["OCI_DEMO=all"],"env":[' \
		'"path":"'"${OCIDEC%/*}"'|"path":"/bin/true","path":"'"${OCIDEC%/*}"'' \
		'"type":"proc"|"type":"bind","type":"proc"' \
		'"process":{|"Process":{"env":["OCI_DEMO=all"]},"process":{' \
		'"process":{|"process":{"env":["OCI_DEMO=all"]},"PROCESS":{' \
		'"process":{|"process":{"env":["OCI_DEMO=all"]},"proce\u017fs":{' \
		'"capabilities":{|"capabilities":{"bounding":["CAP_SYS_ADMIN"]},"Capabilities":{' \
		'"k7":"v"|"k7":"all","k7":"v"'; do
		# (20 annotations: an object too big to compare pairwise)
		ANNOTATIONS=$(seq -f 'k%g=v' -s, 20) bundle OCI_DEMO=0 -- true >/dev/null
		perl -MJSON::PP -i -0777 -pe '$_ = JSON::PP->new->canonical->encode(decode_json($_))' "$B/config.json"
		twice "${edit%%|*}" "${edit#*|}"
		refused_by_hook_and_shim ": refused" --regexp "^ocidec hook: $B/config.json: (the key \"(env|path|type|k7)\" is given twice in one object \(runtimes read the last, ocidec would read the first\)|the keys \"[^\"]+\" and \"[^\"]+\" are one to a runtime \(Go's JSON matches a name in any case, and reads the last\), two to ocidec): refused$"
	done
	# annotations are a map to Go: keys that differ in case are two
	bundle -- true >/dev/null
	perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{annotations} = { "ocidec.io/demo" => "0", "OCIDEC.IO/DEMO" => "1" };
		$_ = JSON::PP->new->canonical->encode($c)' "$B/config.json"
	run hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
	assert_success
	assert_line --partial "/dev/demo0"
	refute_line --partial "/dev/demo1"
	# so are linux.resources.rdma and linux.timeOffsets (review of issue 46)
	perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); $c->{linux}{resources}{rdma} = { "mlx5_0" => {}, "MLX5_0" => {} };
		$c->{linux}{timeOffsets} = { "boottime" => {}, "BOOTTIME" => {} }; $_ = JSON::PP->new->canonical->encode($c)' "$B/config.json"
	run hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
	assert_success
	assert_line --partial "/dev/demo0"
}

@test "a device named twice in one list (by index and by UUID, or by one UUID twice) is that device, not a missing one (review of issue 46)" {
	"$FIXTURES/driver-root.sh" "$BATS_TEST_TMPDIR/nv" >/dev/null
	nvidia_ini "$BATS_TEST_TMPDIR/nv"
	# (GPU 0 in PCI order is the node of minor 1)
	for v in GPU-11111111-2222-3333-4444-555555555555,GPU-11111111-2222-3333-4444-555555555555 \
		0,GPU-11111111-2222-3333-4444-555555555555 0,0; do
		run dry "NVIDIA_VISIBLE_DEVICES=$v"
		assert_success
		assert_line --partial "/dev/nvidia1 "
		refute_line --partial "/dev/nvidia0 "
	done
}

@test "--log appends to a file, and refuses a symlink there" {
	LOG=$BATS_TEST_TMPDIR/hook.log run dry OCI_DEMO=all DEMO_FEATURES=nosuch
	assert_success
	run cat "$BATS_TEST_TMPDIR/hook.log"
	assert_output --regexp "^[0-9-]+T[0-9:]+Z \[[0-9]+\] ocidec hook: warn: demo: DEMO_FEATURES names unknown feature 'nosuch'; ignored$"
	ln -s "$BATS_TEST_TMPDIR/victim" "$BATS_TEST_TMPDIR/link.log"
	LOG=$BATS_TEST_TMPDIR/link.log run dry OCI_DEMO=all
	assert_success
	assert_line --partial "link.log: cannot open the log file"
	assert_not_exist "$BATS_TEST_TMPDIR/victim"
}

# v2_test_cgroup: CG, a cgroup v2 of the test's own (under CG2: cg2
# first), DENY the loader of test/fixtures/devcg-deny.c (DENY CG [N]
# attaches a device program of N more instructions that denies the demo's
# nodes), a rootfs directory for inject
v2_test_cgroup() {
	CG=$CG2/ocidec-test-$$-$BATS_TEST_NUMBER
	mkdir "$CG"
	DENY=$BATS_TEST_TMPDIR/devcg-deny
	gcc -o "$DENY" "$FIXTURES/devcg-deny.c"
	mkdir -p "$BATS_TEST_TMPDIR/rootfs"
}

# v2_sleeper [WRAPPER...]: SPID, a process in CG (started through WRAPPER)
v2_sleeper() {
	"$@" sh -c "echo \$\$ >'$CG/cgroup.procs'; exec sleep 300" &
	SPID=$!
	wait_until -t 5 'grep -q "^0::/ocidec-test" "/proc/$SPID/cgroup"'
}

# in_cg CMD: run CMD (a shell command line) inside CG
in_cg() { sh -c "echo \$\$ >'$CG/cgroup.procs'; exec $*"; }

@test "cgroup v2: a device the runtime's program denies opens after inject, the runtime's rules kept" {
	cg2
	v2_test_cgroup
	"$DENY" "$CG"
	v2_sleeper unshare -m --propagation private
	run in_cg "cat $DR/dev/democtl </dev/null"
	assert_output --partial "Operation not permitted"
	run in_cg "cat /dev/null"
	assert_success
	run inject -c "$CFG" --pid "$SPID" --rootfs "$BATS_TEST_TMPDIR/rootfs" --dry-run demo
	assert_line "cgroup2 $CG c 10:237 rwm"
	run inject -c "$CFG" --pid "$SPID" --rootfs "$BATS_TEST_TMPDIR/rootfs" --devices 0 demo
	assert_success
	run in_cg "cat $DR/dev/democtl </dev/null"
	assert_output --partial "democtl: Invalid argument"      # it opened (loop-control has no read)
	run in_cg "cat $DR/dev/demo0 </dev/null"
	assert_success                                          # 1:3, allowed by both
	run in_cg "head -c1 /dev/vda"
	assert_output --partial "Operation not permitted"       # the runtime's denial stands
	# one program attached, ours in front: a second run merges, it does not stack
	progs() { bpftool -j cgroup show "$CG" | perl -MJSON::PP -e 'local $/; my $p = decode_json(<STDIN>); print scalar(grep { $_->{attach_type} eq "cgroup_device" } @$p), " ", join(",", map { $_->{name} } @$p), "\n"'; }
	insns() { bpftool prog dump xlated id "$(bpftool -j cgroup show "$CG" | perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->[0]{id}')" | grep -c '^ *[0-9]*:'; }
	assert_equal "$(progs)" "1 ocidec_devices"
	first=$(insns)
	[ "$first" -eq $((11 + 6 + 5 * 2)) ]    # the runtime's 11, our prefix for democtl, demo0
	run inject -c "$CFG" --pid "$SPID" --rootfs "$BATS_TEST_TMPDIR/rootfs" demo   # all: demo1 too
	assert_success
	assert_equal "$(progs)" "1 ocidec_devices"
	assert_equal "$(insns)" $((first + 5))   # one rule more, the old prefix not kept
	run inject -c "$CFG" --pid "$SPID" --rootfs "$BATS_TEST_TMPDIR/rootfs" demo   # again: nothing
	assert_equal "$(insns)" $((first + 5))
	run in_cg "cat $DR/dev/democtl </dev/null"
	assert_output --partial "democtl: Invalid argument"
}

@test "cgroup v2 only (a Fedora, Debian or Ubuntu default): runc's own device program takes the hook's rules (issue 21, finding 1)" {
	# the real runtimes build their programs (runc 1.1: some 300
	# instructions with the default rules) on a cgroup2-only layout
	CG2NAME=ocidec-test-$$-$BATS_TEST_NUMBER
	bundle OCI_DEMO=all -- sh -c "$DEMO_SEE" >/dev/null
	run bash -c "cd '$B' && '$FIXTURES/cgroup2.sh' '$CG2NAME' runc run '$ID'"
	assert_success
	assert_output "$DEMO_SEEN_ALL"
	# a container that asks for nothing: untouched
	bundle -- sh -c 'head -c 0 /dev/null && echo null; ls /dev | grep -c demo' >/dev/null
	run bash -c "cd '$B' && '$FIXTURES/cgroup2.sh' '$CG2NAME' runc run '$ID-2'"
	runc delete -f "$ID-2" >/dev/null 2>&1 || true
	assert_output "null
0"
}

@test "a device's rule is for its minor alone: under cgroup v2's device program and v1's devices.allow, the neighbouring minors of the same major stay denied in a real container (issue 46, finding 7)" {
	# 10:236 and 10:238, democtl's neighbours (runc's default rules deny
	# both), bind-mounted into the container beside the vendor's 10:237
	mknod -m 0666 "$BATS_TEST_TMPDIR/nb236" c 10 236
	mknod -m 0666 "$BATS_TEST_TMPDIR/nb238" c 10 238
	bundle OCI_DEMO=all -- sh -c 'for d in democtl nb236 nb238; do head -c 0 /dev/$d && echo "$d opened"; done; true' >/dev/null
	NB=$BATS_TEST_TMPDIR perl -MJSON::PP -i -0777 -pe '$c = decode_json($_); push @{$c->{mounts}}, map { { destination => "/dev/$_",
		type => "bind", source => "$ENV{NB}/$_", options => ["bind"] } } qw(nb236 nb238); $_ = encode_json($c)' "$B/config.json"
	neighbours_denied() {
		assert_success
		assert_line "democtl opened"
		assert_line --regexp "^head: .*/dev/nb236.*: Operation not permitted$"
		assert_line --regexp "^head: .*/dev/nb238.*: Operation not permitted$"
		refute_line --partial "nb23[68] opened"
	}
	# cgroup v2 only: runc's device program, the hook's prefix in front
	CG2NAME=ocidec-test-$$-$BATS_TEST_NUMBER
	run bash -c "cd '$B' && '$FIXTURES/cgroup2.sh' '$CG2NAME' runc run '$ID' 2>&1"
	neighbours_denied
	runc delete -f "$ID" >/dev/null 2>&1 || true
	# this host's cgroups (v1 devices where it has them): devices.allow
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	neighbours_denied
}

@test "cgroup v2: a program near the kernel's size limit is refused with a clear error, nothing half-applied" {
	cg2
	v2_test_cgroup
	small=$("$DENY" "$CG")
	big=$("$DENY" "$CG" 999900)   # 999,911 instructions
	[ -n "$small" ] && [ -n "$big" ]
	v2_sleeper
	ids() { bpftool -j cgroup show "$CG" | perl -MJSON::PP -e 'local $/; print join(",", sort map { $_->{id} } @{decode_json(<STDIN>)}), "\n"'; }
	before=$(ids)
	run inject -c "$CFG" --pid "$SPID" --rootfs "$BATS_TEST_TMPDIR/rootfs" --devices 0 demo
	assert_failure 1
	assert_output --regexp "^ocidec inject: .*/ocidec-test-[0-9-]+: (reading|loading the) device program.*: nothing changed"
	assert_equal "$(ids)" "$before"       # the small program not replaced either
	run in_cg "cat $DR/dev/democtl </dev/null"
	assert_output --partial "Operation not permitted"
}

# v1_denying_cgroup: CG1, a devices cgroup (v1) of the test's own that
# denies everything, and SPID, a process in it (skips without v1)
v1_denying_cgroup() {
	CG1=/sys/fs/cgroup/devices/ocidec-test-$$-$BATS_TEST_NUMBER
	[ -d /sys/fs/cgroup/devices ] || skip "no cgroup v1 devices controller"
	mkdir "$CG1"
	echo a >"$CG1/devices.deny"
	sh -c "echo \$\$ >'$CG1/cgroup.procs'; exec sleep 300" &
	SPID=$!
	wait_until 'grep -q "devices:/ocidec-test" "/proc/$SPID/cgroup"'
}

@test "the device cgroup follows the hook's user namespace, not config.json's" {
	# a process in a devices cgroup of its own (v1) that denies everything
	v1_denying_cgroup
	export DRYPID=$SPID
	run dry OCI_DEMO=all
	assert_line "cgroup $CG1/devices.allow c 10:237 rwm"
	# a rootful container with a user namespace of its own: the runtime
	# enforces its cgroup all the same, so it gets the rule
	USERNS=1 run dry OCI_DEMO=all
	assert_success
	assert_line "cgroup $CG1/devices.allow c 10:237 rwm"
	# the hook in a user namespace (rootless podman's): no cgroup to write,
	# and the root-owned configs are accepted there (they show as nobody)
	run unshare -Ur "$OCIDEC" hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\", \"pid\": $SPID}"
	assert_success
	assert_line --partial "mount $DR/dev/democtl"
	refute_line --regexp "^cgroup2? "
	# a cgroup that allows everything (a rootless container's session) is left alone
	echo a >"$CG1/devices.allow"
	run dry OCI_DEMO=all
	assert_success
	refute_line --regexp "^cgroup2? "
}

@test "a container in its runtime's own cgroup (podman --cgroups=disabled) gets no device rules there: they would open the devices to every process of the caller's cgroup (issue 32, left from round 2)" {
	v1_denying_cgroup
	# the hook run from the very cgroup the container's process is in (this
	# test's shell joins it for the run, then goes back)
	back=/sys/fs/cgroup/devices$(sed -n 's/^[0-9]*:devices://p' /proc/$BASHPID/cgroup)/cgroup.procs
	for d in "c 1:* rwm" "c 5:* rwm" "c 136:* rwm"; do echo "$d" >"$CG1/devices.allow"; done  # the shell's own
	export DRYPID=$SPID
	echo "$BASHPID" >"$CG1/cgroup.procs"
	sed -i 's/^log_level = .*/log_level = info/' "$CFG/demo.ini"
	run dry OCI_DEMO=all
	echo "$BASHPID" >"$back"
	assert_success
	assert_line --partial "mount $DR/dev/democtl"
	refute_line --regexp "^cgroup2? "
	assert_output --partial "the container (pid $SPID) has no cgroup of its own, it is in its runtime's: its device cgroup left as it is"
	# a container in a cgroup of its own: its rules, as before
	export DRYPID=$SPID
	run dry OCI_DEMO=all
	assert_line "cgroup $CG1/devices.allow c 10:237 rwm"
}

# shared_devices_cgroup: CG1 (v1 devices, denying all but what a shell
# needs) and CGP (v1 pids), two cgroups of the test's own, and SPID, a
# process in both (in a mount namespace of its own, for inject); BACK the
# devices cgroup.procs this test's shell goes back to (skips without v1)
shared_devices_cgroup() {
	[ -d /sys/fs/cgroup/devices ] && [ -d /sys/fs/cgroup/pids ] || skip "no cgroup v1 devices and pids controllers"
	CG1=/sys/fs/cgroup/devices/ocidec-test-$$-$BATS_TEST_NUMBER
	CGP=/sys/fs/cgroup/pids/ocidec-test-$$-$BATS_TEST_NUMBER
	mkdir "$CG1" "$CGP"
	echo a >"$CG1/devices.deny"
	for d in "c 1:* rwm" "c 5:* rwm" "c 136:* rwm"; do echo "$d" >"$CG1/devices.allow"; done  # the shell's own
	BACK=/sys/fs/cgroup/devices$(sed -n 's/^[0-9]*:devices://p' /proc/$BASHPID/cgroup)/cgroup.procs
	unshare -m --propagation private sh -c "echo \$\$ >'$CG1/cgroup.procs'; echo \$\$ >'$CGP/cgroup.procs'; exec sleep 300" &
	SPID=$!
	wait_until 'grep -q "devices:/ocidec-test" "/proc/$SPID/cgroup" && grep -q "pids:/ocidec-test" "/proc/$SPID/cgroup"'
	mkdir -p "$BATS_TEST_TMPDIR/rootfs"
	sed -i 's/^log_level = .*/log_level = info/' "$CFG/demo.ini"
}

# from_cgroup PROCS BACK: the hook's dry run for SPID (its output in
# $BATS_TEST_TMPDIR/dry.out) and inject of the demo's device 0 into SPID
# (bats' $output), both from the cgroup whose cgroup.procs is PROCS; this
# shell back to BACK's after
from_cgroup() {
	export DRYPID=$SPID
	echo "$BASHPID" >"$1"
	dry OCI_DEMO=all >"$BATS_TEST_TMPDIR/dry.out" 2>&1 || echo "failed: $?" >>"$BATS_TEST_TMPDIR/dry.out"
	run inject -c "$CFG" --pid "$SPID" --rootfs "$BATS_TEST_TMPDIR/rootfs" --devices 0 demo
	echo "$BASHPID" >"$2"
}

@test "a container in its runtime's devices cgroup that has a pids cgroup of its own gets no rule in the shared one: only the lines that place devices are compared (issue 46, finding 5)" {
	shared_devices_cgroup
	before=$(cat "$CG1/devices.list")
	# the hook and inject run from the container's devices cgroup, not
	# from its pids cgroup: /proc/PID/cgroup differs as a whole
	from_cgroup "$CG1/cgroup.procs" "$BACK"
	assert_success
	assert_equal "$(cat "$CG1/devices.list")" "$before"
	refute_output --partial "cgroup: allowed"
	assert_output --partial "the container (pid $SPID) has no cgroup of its own, it is in its runtime's: its device cgroup left as it is"
	run cat "$BATS_TEST_TMPDIR/dry.out"
	refute_line --partial "failed: "
	assert_line --partial "mount $DR/dev/democtl"
	refute_line --regexp "^cgroup2? "
	# from outside its devices cgroup: its rules, as before
	run dry OCI_DEMO=all
	assert_line "cgroup $CG1/devices.allow c 10:237 rwm"
}

@test "hybrid cgroups: a container in its runtime's unified cgroup, with a devices cgroup (v1) of its own, gets its v1 rule; the device program of the shared cgroup2 is left as it is (issue 46, finding 5)" {
	cg2
	shared_devices_cgroup
	v2_test_cgroup
	"$DENY" "$CG" >/dev/null
	ids() { bpftool -j cgroup show "$CG" | perl -MJSON::PP -e 'local $/; print join(",", sort map { $_->{id} } @{decode_json(<STDIN>)}), "\n"'; }
	before=$(ids)
	[ -n "$before" ]
	# the container and its caller in one cgroup2 (with a device program),
	# the container alone in its devices cgroup
	echo "$SPID" >"$CG/cgroup.procs"
	from_cgroup "$CG/cgroup.procs" "$CG2$(sed -n 's/^0:://p' /proc/$BASHPID/cgroup)/cgroup.procs"
	assert_success
	assert_equal "$(ids)" "$before"        # not replaced
	grep -qx "c 10:237 rwm" "$CG1/devices.list"
	assert_line --partial "cgroup: allowed c 10:237 rwm"
	assert_output --partial "the container (pid $SPID) is in its runtime's cgroup2 /ocidec-test-$$-$BATS_TEST_NUMBER, not one of its own: its device programs left as they are"
	run cat "$BATS_TEST_TMPDIR/dry.out"
	refute_line --partial "failed: "
	assert_line "cgroup $CG1/devices.allow c 10:237 rwm"
	refute_line --regexp "^cgroup2 "
}

@test "a rootful hook that may not write the device cgroup fails, and says so" {
	v1_denying_cgroup
	# RHEL 8 style: the cgroup is read-only to the hook (here: its file is)
	mount --bind -o ro "$CG1/devices.allow" "$CG1/devices.allow"
	mount -o remount,bind,ro "$CG1/devices.allow"
	bundle OCI_DEMO=all >/dev/null
	run "$OCIDEC" hook -c "$CFG" <<<"{\"bundle\": \"$B\", \"pid\": $SPID}"
	umount "$CG1/devices.allow"
	assert_failure
	assert_output --partial "the container's device cgroup: $CG1/devices.allow: c 10:237 rwm: Read-only file system"
}

@test "--dry-run needs no pid: the plan without the cgroup rules; a real run needs one" {
	bundle OCI_DEMO=all >/dev/null
	run "$OCIDEC" hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
	assert_success
	assert_line "mount $DR/dev/democtl /dev/democtl ro,nosuid,noexec"
	refute_line --regexp "^cgroup2? "
	run "$OCIDEC" hook -c "$CFG" <<<"{\"bundle\": \"$B\"}"
	assert_failure
	assert_output "ocidec hook: container state: no \"pid\" (crun's createContainer hooks get none: the vendor hook runs at prestart or createRuntime)"
	# the CDI spec's hook takes no pid only in a container's mount namespace
	run "$OCIDEC" hook --cdi --library /opt/demo/lib/libdemo.so.1 <<<"{\"bundle\": \"$B\", \"pid\": 0}"
	assert_failure
	assert_output "ocidec cdi-hook: container state: no \"pid\", and the hook is not in the container's mount namespace (only crun's createContainer hooks come without one)"
}

@test "the cache survives the container's own ldconfig: a drop-in in /etc/ld.so.conf.d" {
	# an image with glibc's ldconfig and the usual include
	RW=1 bundle OCI_DEMO=all -- sh -c 'ldconfig && demo-tool && cat /etc/ld.so.conf.d/00-ocidec-opt-demo-lib.conf' >/dev/null
	mkdir -p "$B/rootfs/etc/ld.so.conf.d" "$B/rootfs/sbin"
	echo 'include /etc/ld.so.conf.d/*.conf' >"$B/rootfs/etc/ld.so.conf"
	cp /sbin/ldconfig "$B/rootfs/sbin/ldconfig"
	run sh -c "cd '$B' && runc run '$ID'"
	assert_success
	assert_output $'demo-tool: the answer is 42\n/opt/demo/lib'
	runc delete -f "$ID"
	# a second run leaves the drop-in as it is
	ino=$(stat -c %i "$B/rootfs/etc/ld.so.conf.d/00-ocidec-opt-demo-lib.conf")
	run sh -c "cd '$B' && runc run '$ID'"
	assert_success
	assert_equal "$(stat -c %i "$B/rootfs/etc/ld.so.conf.d/00-ocidec-opt-demo-lib.conf")" "$ino"
}

@test "--dry-run --format json: the same container edits as the text, as one JSON object" {
	bundle OCI_DEMO=all >/dev/null
	run "$OCIDEC" hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
	assert_success
	text=$output
	run "$OCIDEC" hook -c "$CFG" --dry-run --format json <<<"{\"bundle\": \"$B\"}"
	assert_success
	# the JSON, put back into the text's lines, is the text
	run perl -MJSON::PP -e 'local $/; my $e = decode_json(<STDIN>);
		# a driver link is made next to what it names: libdemo.so.1 -> libdemo.so.1.0
		my %link_to = map { ($_->{path} =~ s{[^/]+$}{}r) . $_->{target} => $_ } @{$e->{symlinks}};
		for my $m (@{$e->{mounts}}) {
			my @o = grep { $_ ne "bind" } @{$m->{options}};
			print "mount $m->{source} $m->{destination} ", join(",", @o), "\n";
			my $l = $link_to{$m->{destination}};
			print "symlink $l->{path} $l->{target}\n" if $l;
		}
		print "ldcache $_\n" for @{$e->{ldcache}{directories}};
		print "ldcache-entry $_->{soname} $_->{path}\n" for @{$e->{ldcache}{entries}};
		print "device $_->{path} $_->{type} $_->{major}:$_->{minor} $_->{fileMode}\n" for @{$e->{devices}};
		print "rule $_->{type} $_->{major}:$_->{minor} $_->{access}\n" for @{$e->{deviceRules}};' <<<"$output"
	assert_success
	assert_equal "$(grep -v '^device \|^rule ' <<<"$output")" "$text"
	assert_line "device /dev/democtl c 10:237 438"
	assert_line "rule c 10:237 rwm"
	run "$OCIDEC" hook -c "$CFG" --dry-run --format yaml <<<"{\"bundle\": \"$B\"}"
	assert_failure 2
}

@test "kernels without the new mount API: bind mounts between /proc/self/fd paths, same result" {
	HOOK_ARGS="--mount-api legacy " bundle OCI_DEMO=all -- sh -c 'grep -E " /(dev/democtl|usr/bin/demo-tool|usr/share/demo) " /proc/self/mountinfo | cut -d" " -f5,6; demo-tool' >/dev/null
	grep -q '"legacy"' "$B/config.json"
	run bash -c "cd '$B' && runc run '$ID'"
	assert_success
	assert_line "/dev/democtl ro,nosuid,noexec,relatime"
	assert_line "/usr/bin/demo-tool ro,nosuid,nodev,relatime"
	assert_line "/usr/share/demo ro,nosuid,nodev,relatime"
	assert_line "demo-tool: the answer is 42"
}

@test "NVIDIA's hook names run the hook with NVIDIA's command line (Docker's --gpus): -config and -debug ignored, other stages do nothing" {
	for name in nvidia-container-runtime-hook nvidia-container-toolkit; do
		ln -s "$OCIDEC" "$BIN/$name"
		run "$name" -config=/etc/nvidia-container-runtime/config.toml poststart </dev/null
		assert_success
		assert_output ""
		run "$name" -debug whatever </dev/null
		assert_success
		run "$name" </dev/null
		assert_success
	done
	# Docker's entry: no env, args [PATH, "prestart"], NVIDIA_VISIBLE_DEVICES
	# in the container's env; the configs at the default directory, here an
	# overlay over the host's /etc in a mount namespace of the test's own
	EXTRA="activation_aliases = NVIDIA_VISIBLE_DEVICES" demo_vendor "$DR" "$BATS_TEST_TMPDIR/etc-cfg"
	rm -rf "$B"
	HOOK="$BIN/nvidia-container-runtime-hook nvidia-container-runtime-hook -config /etc/nvidia-container-runtime/config.toml -debug prestart" \
		"$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=1 -- sh -c 'demo-tool; ls /dev | grep demo' >/dev/null
	mkdir -p "$BATS_TEST_TMPDIR/upper" "$BATS_TEST_TMPDIR/work"
	run unshare -m --propagation private bash -c "
		mount -t overlay overlay -o lowerdir=/etc,upperdir=$BATS_TEST_TMPDIR/upper,workdir=$BATS_TEST_TMPDIR/work /etc &&
		mkdir -p /etc/ocidec/ocidec.d && cp '$BATS_TEST_TMPDIR/etc-cfg/demo.ini' /etc/ocidec/ocidec.d/ &&
		cd '$B' && runc run '$ID' 2>&1"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl'
}

@test "IMEX channels (nvidia-imex.ini): NVIDIA_IMEX_CHANNELS, the device plugin's imex/N mounts and CDI's nvidia.com/imex-channel=N give those channels' nodes only; nvidia.ini ignores the imex mounts (issue 25)" {
	local dr=$BATS_TEST_TMPDIR/imex
	mkdir -p "$dr/dev/nvidia-caps-imex-channels"
	for n in 0 1 2; do mknod "$dr/dev/nvidia-caps-imex-channels/channel$n" c 511 "$n"; done
	rm -f "$CFG"/*.ini
	sed "s|^driver_root = /\$|driver_root = $dr|" "$CONF/nvidia-imex.ini" | write_ini nvidia-imex
	run dry NVIDIA_IMEX_CHANNELS=1
	assert_success
	assert_output "mount $dr/dev/nvidia-caps-imex-channels/channel1 /dev/nvidia-caps-imex-channels/channel1 ro,nosuid,noexec"
	run dry NVIDIA_IMEX_CHANNELS=0,1,2
	assert_equal "$(grep -c '^mount ' <<<"$output")" 3
	# "all" from the environment selects none, as NVIDIA's toolkit takes it
	run dry NVIDIA_IMEX_CHANNELS=all
	assert_success
	refute_output --partial "mount "
	assert_output --partial "nvidia-imex: NVIDIA_IMEX_CHANNELS=all selects nothing: name the devices (env_all = false)"
	# the device plugin's list: /dev/null at .../imex/N
	mkdir -p "$B/rootfs"
	perl -MJSON::PP -e 'print encode_json({ ociVersion => "1.0.2", root => { path => "rootfs" }, process => { env => [] },
		mounts => [ { destination => "/var/run/nvidia-container-devices/imex/2", source => "/dev/null", type => "bind" } ] });' \
		>"$B/config.json"
	run "$OCIDEC" hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\", \"pid\": $$}"
	assert_success
	assert_output "mount $dr/dev/nvidia-caps-imex-channels/channel2 /dev/nvidia-caps-imex-channels/channel2 ro,nosuid,noexec"
	# nvidia.ini takes no GPU from them
	driver_root
	nvidia_ini "$DR"
	run "$OCIDEC" hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\", \"pid\": $$}"
	refute_output --partial /dev/nvidia0
	refute_output --partial /dev/nvidia1
	# CDI: NVIDIA's kind and names
	run cdi -c "$CFG" nvidia-imex
	assert_success
	assert_equal "$(python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["kind"], *[d["name"] for d in s["devices"]])' <<<"$output")" \
		"nvidia.com/imex-channel 0 1 2 all"
}

@test "an error and a usage error are one write(2) of one whole line each, however long (issue 34, finding 3)" {
	run env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -s 512 -e trace=write,writev -o "$BATS_TEST_TMPDIR/t1" "$OCIDEC" hook </dev/null
	assert_failure 2
	line=${output%%$'\n'*}
	[ "${#line}" -gt 80 ]
	run grep -E '^[0-9]+ +write(v)?\(2,' "$BATS_TEST_TMPDIR/t1"
	assert_equal "${#lines[@]}" 1
	run env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -s 512 -e trace=write,writev -o "$BATS_TEST_TMPDIR/t2" "$OCIDEC" cdi --list -o /nonexistent/x.json
	assert_failure 2
	assert_output --partial "--list prints the device names: no -o (see ocidec cdi --help)"
	run grep -E '^[0-9]+ +write(v)?\(2,' "$BATS_TEST_TMPDIR/t2"
	assert_equal "${#lines[@]}" 1
}

# idle_hook [ENV...]: the hook (--dry-run) on a container with these env
# entries, /run the test's $RUN
idle_hook() {
	OCIDEC=$BATS_TEST_TMPDIR/ocidec-run dry "$@"
}

# private_hook_setup: $RUN, and $BATS_TEST_TMPDIR/ocidec-run: the binary
# under test with $RUN bind-mounted over /run in a mount namespace of its
# own (the index, /run/ocidec, is the test's $RUN/ocidec, kept from one run
# to the next)
private_hook_setup() {
	RUN=$BATS_TEST_TMPDIR/run
	mkdir -m 0755 "$RUN"
	printf '#!/bin/sh\nexec unshare -m sh -c %s "%s" "%s" "$@"\n' \
		"'mount --make-rprivate / && mount --bind \"\$0\" /run && exec \"\$@\"'" "$RUN" "$OCIDEC" \
		>"$BATS_TEST_TMPDIR/ocidec-run"
	chmod +x "$BATS_TEST_TMPDIR/ocidec-run"
	sleep 3  # the demo vendor's file settles (keycache.h: KEYCACHE_SETTLE)
}

@test "the idle path's index (issue 34): made once the configs settle; then the idle hook reads no vendor file" {
	private_hook_setup
	run idle_hook PATH=/bin
	assert_success
	assert_output ""
	run find "$RUN/ocidec" -printf '%M %u %f\n'
	assert_line --regexp '^drwxr-xr-x root ocidec$'
	assert_line --regexp '^-rw------- root keys-[0-9]+-[0-9]+$'
	assert_equal "${#lines[@]}" 2
	grep -qx 'k OCI_DEMO' "$RUN"/ocidec/keys-*
	TRACE=$BATS_TEST_TMPDIR/trace
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat -o "$TRACE" "$BATS_TEST_TMPDIR/ocidec-run" hook -c "$CFG" --dry-run \
		<<<"{\"bundle\": \"$B\", \"pid\": $$}"
	grep -q '"/run/ocidec"' "$TRACE"
	grep -q '"keys-[0-9]*-[0-9]*", O_RDONLY' "$TRACE"
	run grep '\.ini"' "$TRACE"
	assert_failure
	# and a container that names the vendor still gets it
	run idle_hook OCI_DEMO=all
	assert_success
	assert_output --partial "mount $DR/"
}

@test "the idle path's index: an edit in place, a new file, a removed file and a rename are seen by the next container" {
	private_hook_setup
	idle_hook PATH=/bin >/dev/null
	ls "$RUN"/ocidec/keys-* >/dev/null
	run idle_hook OCI_EDITED=all
	assert_output ""
	# in place: the same inode, the same size (one name for another of its length)
	ino=$(stat -c %i "$CFG/demo.ini") size=$(stat -c %s "$CFG/demo.ini")
	sed 's/^activation_flag = OCI_DEMO$/activation_flag = OCI_EDIT/' "$CFG/demo.ini" >"$BATS_TEST_TMPDIR/edited"
	cat "$BATS_TEST_TMPDIR/edited" >"$CFG/demo.ini"
	assert_equal "$(stat -c %i:%s "$CFG/demo.ini")" "$ino:$size"
	run idle_hook OCI_EDIT=all
	assert_success
	assert_output --partial "mount $DR/"
	run idle_hook OCI_DEMO=all
	assert_output ""
	# a new file
	printf '[vendor]\nactivation_flag = OCI_NEWFILE\ndriver_root = /nonexistent\n' | write_ini new
	run idle_hook OCI_NEWFILE=all
	assert_failure
	assert_output --partial "$CFG/new.ini"
	# removed
	rm "$CFG/new.ini"
	run idle_hook OCI_NEWFILE=all
	assert_success
	assert_output ""
	# renamed over (as editors and package managers write)
	sed 's/^activation_flag = OCI_EDIT$/activation_flag = OCI_RENAMED/' "$CFG/demo.ini" >"$CFG/.demo.tmp"
	mv "$CFG/.demo.tmp" "$CFG/demo.ini"
	run idle_hook OCI_RENAMED=all
	assert_output --partial "mount $DR/"
	# and once all that settled, the new index says the same
	sleep 3
	idle_hook PATH=/bin >/dev/null
	grep -qx 'k OCI_RENAMED' "$RUN"/ocidec/keys-*
	run grep -x 'k OCI_EDIT' "$RUN"/ocidec/keys-*
	assert_failure
	run idle_hook OCI_RENAMED=all
	assert_output --partial "mount $DR/"
}

@test "the idle path's index is trusted only when it and its directory are root's and written by no one else, for a minute at most; a link at /run/ocidec is not followed" {
	private_hook_setup
	idle_hook PATH=/bin >/dev/null
	ix=$(echo "$RUN"/ocidec/keys-*)
	# an index that would hide the vendor (its stamps right, no key)
	grep -v '^k ' "$ix" >"$BATS_TEST_TMPDIR/hiding"
	cp "$BATS_TEST_TMPDIR/hiding" "$ix"
	chown 65534 "$ix"
	run idle_hook OCI_DEMO=all
	assert_output --partial "mount $DR/"
	run grep -c '^k ' "$ix"  # (and a good one written over it)
	assert_output --regexp '^[1-9]'
	cp "$BATS_TEST_TMPDIR/hiding" "$ix"
	chmod 0666 "$ix"
	run idle_hook OCI_DEMO=all
	assert_output --partial "mount $DR/"
	# (the check is what stands between: root's own, it is believed)
	cp "$BATS_TEST_TMPDIR/hiding" "$ix"
	chmod 0600 "$ix"
	run idle_hook OCI_DEMO=all
	assert_success
	assert_output ""
	# ... but for a minute at most: an edit no stamp shows is seen then
	touch -d '2 minutes ago' "$ix"
	run idle_hook OCI_DEMO=all
	assert_output --partial "mount $DR/"
	# and not in a directory others may write, or not root's
	cp "$BATS_TEST_TMPDIR/hiding" "$ix"
	chmod 0777 "$RUN/ocidec"
	run idle_hook OCI_DEMO=all
	assert_output --partial "mount $DR/"
	cmp "$BATS_TEST_TMPDIR/hiding" "$ix"  # (nor written there)
	chmod 0755 "$RUN/ocidec" && chown 65534 "$RUN/ocidec"
	run idle_hook OCI_DEMO=all
	assert_output --partial "mount $DR/"
	chown 0 "$RUN/ocidec"
	# a directory others may write, or a link, is neither read nor written
	rm -r "$RUN/ocidec"
	mkdir -m 0777 "$BATS_TEST_TMPDIR/elsewhere"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$RUN/ocidec"
	idle_hook PATH=/bin >/dev/null
	run idle_hook OCI_DEMO=all
	assert_output --partial "mount $DR/"
	run ls -A "$BATS_TEST_TMPDIR/elsewhere"
	assert_output ""
	rm "$RUN/ocidec"
	mkdir -m 0777 "$RUN/ocidec"
	idle_hook PATH=/bin >/dev/null
	run ls -A "$RUN/ocidec"
	assert_output ""
}

@test "the idle path's index: one an hour old is swept when another is written" {
	private_hook_setup
	mkdir -m 0755 "$RUN/ocidec"
	echo stale >"$RUN/ocidec/keys-1-2"
	echo mine >"$RUN/ocidec/unrelated"
	touch -d '2 hours ago' "$RUN/ocidec/keys-1-2" "$RUN/ocidec/unrelated"
	idle_hook PATH=/bin >/dev/null
	run ls "$RUN/ocidec"
	refute_line keys-1-2
	assert_line unrelated
	assert_line --regexp '^keys-[0-9]+-[0-9]+$'
}

@test "application_profile: NVIDIA's driver application profile names only the container's GPUs (EGLVisibleDGPUDevices), from the hook, from a CDI spec, and for NVIDIA's update-application-profile (issue 37)" {
	local p=/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf
	local want='{"profiles":[{"name":"_container_","settings":["EGLVisibleDGPUDevices",0x%s]}],"rules":[{"pattern":[],"profile":"_container_"}]}'
	"$FIXTURES/driver-root.sh" "$BATS_TEST_TMPDIR/nv" >/dev/null
	nvidia_ini "$BATS_TEST_TMPDIR/nv"
	# index 0 is the GPU of minor 1 (PCI bus order): bit 1
	run in_container "cat $p; echo; ls -l $p | cut -c1-10" NVIDIA_VISIBLE_DEVICES=0
	assert_success
	assert_line "$(printf "$want" 2)"
	assert_line -- "-r--r--r--"
	run in_container "cat $p" NVIDIA_VISIBLE_DEVICES=all
	assert_output "$(printf "$want" 3)"
	# no GPU node in the container: no profile
	run in_container "cat $p 2>/dev/null || echo none" NVIDIA_VISIBLE_DEVICES=none
	assert_output none
	# a CDI spec's hook carries it (the shim's config.json the same)
	run cdi -c "$CFG" nvidia
	assert_success
	assert_output --partial '"--application-profile", "/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf"'
	# NVIDIA's own spec: its update-application-profile, the node the engine made (GPU 3)
	ln -s "$OCIDEC" "$BATS_TEST_TMPDIR/nvidia-cdi-hook"
	rm -rf "$B"
	"$FIXTURES/bundle.sh" "$B" -- sh -c "cat $p" >/dev/null
	HOOK=$BATS_TEST_TMPDIR/nvidia-cdi-hook python3 -c 'import json, os, sys
c = json.load(open(sys.argv[1]))
c["linux"].setdefault("devices", []).append({"path": "/dev/nvidia3", "type": "c", "major": 195, "minor": 3})
c.setdefault("hooks", {})["createContainer"] = [{"path": os.environ["HOOK"],
	"args": ["nvidia-cdi-hook", "update-application-profile"], "env": ["ASAN_OPTIONS=detect_leaks=0"]}]
json.dump(c, open(sys.argv[1], "w"))' "$B/config.json"
	run bash -c "cd '$B' && runc run $ID 2>&1"
	assert_success
	assert_output "$(printf "$want" 8)"
}
