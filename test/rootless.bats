#!/usr/bin/env bats
# Rootless podman (4.3, with runc) and user namespaces, for real: a test user
# with subordinate id ranges runs `podman run --rootfs` with the hooks.d
# file, the vendor configs root-owned 0644 in a root-owned 0755 directory,
# as `make install` leaves them. Host root then injects into a rootless
# container, and rootful podman maps ids with --uidmap.

load helpers

RLUSER=ocidec-rl

setup_file() {
	# the user, once per machine, with 65536 subordinate uids and gids
	if ! id "$RLUSER" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin "$RLUSER"
	fi
	grep -q "^$RLUSER:" /etc/subuid || usermod --add-subuids 400000-465535 "$RLUSER"
	grep -q "^$RLUSER:" /etc/subgid || usermod --add-subgids 400000-465535 "$RLUSER"
	# everything the user reaches lives here (bats' own directories are 0700)
	export T
	T=$(mktemp -d /tmp/ocidec-rootless.XXXXXX)
	chmod 0755 "$T"
	install -d -o "$RLUSER" -g "$RLUSER" -m 0700 "$T/home" "$T/run"
	cat >"$T/containers.conf" <<-EOF
	[containers]
	default_ulimits = []
	[engine]
	runtime = "runc"
	cgroup_manager = "cgroupfs"
	events_logger = "file"
	EOF
	cat >"$T/storage.conf" <<-EOF
	[storage]
	driver = "vfs"
	graphroot = "$T/home/storage"
	runroot = "$T/run/storage"
	EOF
	chmod 0644 "$T/containers.conf" "$T/storage.conf"
}

teardown_file() {
	# rootless podman's pause process holds the user namespace: stop it
	local pid
	pid=$(cat "$T/run/libpod/tmp/pause.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
	rm -rf "$T"
}

setup() {
	common_setup
	# a fresh driver root, config dir, binary and rootfs per test
	D=$T/$BATS_TEST_NUMBER
	mkdir -m 0755 "$D"
	cp "$OCIDEC" "$D/ocidec"
	demo_vendor "$D/dr" "$D/cfg"
	"$FIXTURES/bundle.sh" "$D/b" >/dev/null
	# what runc mounts on and podman's nomap or --uidmap root may not make
	mkdir -p "$D/b/rootfs/run"
	chown -R "$RLUSER:" "$D/b"
	mkdir -m 0755 "$D/hooks"
	BIN=$D/ocidec CFG=$D/cfg LOG=$D/hook.log perl -MJSON::PP -e '
		local $/; my $h = decode_json(<STDIN>);
		$h->{hook}{path} = $ENV{BIN};
		splice @{$h->{hook}{args}}, 1, 0, "-c", $ENV{CFG}, "--log", $ENV{LOG}, "--syslog", "none";
		print encode_json($h);' <"$BATS_TEST_DIRNAME/../conf/hooks.d/ocidec.json" >"$D/hooks/ocidec.json"
	install -m 0666 /dev/null "$D/hook.log"
	chmod -R a+rX "$D/hooks" "$D/dr"
}

teardown() {
	if [ -n "${cid:-}" ]; then as_user podman rm -f -t 0 "$cid" >/dev/null 2>&1 || true; fi
	if [ -n "${ETC_SPEC:-}" ]; then
		rm -f "$ETC_SPEC" "${ETC_SPEC2:-}"
		[ -z "${MADE_ETC_CDI:-}" ] || rmdir /etc/cdi 2>/dev/null || true
	fi
}

# as_user CMD...: CMD as the test user, in its own runtime dir and home
as_user() {
	runuser -u "$RLUSER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$T/home" \
		XDG_RUNTIME_DIR="$T/run" CONTAINERS_CONF="$T/containers.conf" \
		CONTAINERS_STORAGE_CONF="$T/storage.conf" "$@"
}

# rl_run [PODMAN RUN OPTIONS] -- CMD...: a rootless container of the test's rootfs
rl_run() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	as_user timeout 120 podman --hooks-dir "$D/hooks" run --rm --network none "${opts[@]}" \
		--rootfs "$D/b/rootfs" "$@" 2> >(grep -v 'is not a shared mount' >&2)
}

# what the container sees: the program through the cache, the device, and
# who owns what the hook made (its root, whatever the id mapping)
CHECK='demo-tool; cat /dev/democtl </dev/null 2>&1; stat -c "%u:%g %n" /opt/demo /opt/demo/lib /opt/demo/lib/libdemo.so.1'
EXPECTED='demo-tool: the answer is 42
cat: read error: Invalid argument
0:0 /opt/demo
0:0 /opt/demo/lib
0:0 /opt/demo/lib/libdemo.so.1'

@test "rootless: a container that requests nothing starts with the root-owned configs" {
	run rl_run -- sh -c 'echo started; id -u'
	assert_success
	assert_output $'started\n0'
}

@test "rootless: a broken vendor file does not stop a container that requests nothing" {
	printf '[vendor]\nactivation_flag = OCI_X\nbogus = 1\n' >"$D/cfg/bad.ini"
	chmod 0644 "$D/cfg/bad.ini"
	run rl_run -- echo started
	assert_success
	assert_output started
	run rl_run -e OCI_DEMO=all -- demo-tool
	assert_success
	assert_output "demo-tool: the answer is 42"
	grep -q "bad.ini:3: unknown key 'bogus'" "$D/hook.log"
}

@test "rootless: the default user namespace gets the device, the library and the program" {
	run rl_run -e OCI_DEMO=all -- sh -c "$CHECK"
	assert_success
	assert_output "$EXPECTED"
}

@test "rootless --userns=keep-id: the same, what the hook made owned by the container's root" {
	run rl_run --userns=keep-id -e OCI_DEMO=all -- sh -c "id -u; $CHECK"
	assert_success
	assert_output "$(id -u "$RLUSER")"$'\n'"$EXPECTED"
}

@test "rootless --userns=nomap: the same" {
	# the container's root is the user's first subordinate id: the rootfs is its
	sub=$(awk -F: -v u="$RLUSER" '$1 == u { print $2; exit }' /etc/subuid)
	subg=$(awk -F: -v u="$RLUSER" '$1 == u { print $2; exit }' /etc/subgid)
	chown -R "$sub:$subg" "$D/b/rootfs"
	run rl_run --userns=nomap -e OCI_DEMO=all -- sh -c "$CHECK"
	assert_success
	assert_output "$EXPECTED"
}

@test "host root injects into a running rootless container" {
	cid=$(as_user podman run -d --network none --userns=keep-id --rootfs "$D/b/rootfs" sleep 300 2>/dev/null)
	pid=$(as_user podman inspect -f '{{.State.Pid}}' "$cid")
	run "$OCIDEC" inject -c "$D/cfg" --pid "$pid" demo
	assert_success
	run as_user podman exec "$cid" sh -c "$CHECK"
	assert_output "$EXPECTED"
}

@test "rootful podman --uidmap: the device, the library and the program, made as the mapped root" {
	export CONTAINERS_CONF=$T/containers.conf
	chown -R 300000:300000 "$D/b/rootfs"
	rm -rf "$D/b/rootfs/opt"
	run timeout 120 podman --hooks-dir "$D/hooks" run --rm --network none \
		--uidmap 0:300000:65536 --gidmap 0:300000:65536 -e OCI_DEMO=all --rootfs "$D/b/rootfs" sh -c "$CHECK"
	assert_success
	assert_output "$EXPECTED"
	# seen from the host, the mapped root owns them
	assert_equal "$(stat -c %u:%g "$D/b/rootfs/opt" "$D/b/rootfs/opt/demo/lib")" $'300000:300000\n300000:300000'
}

@test "rootless in a cgroup v1 devices sub-cgroup it may not write (RHEL 8 style): the container starts" {
	CG1=/sys/fs/cgroup/devices/ocidec-test-$$-$BATS_TEST_NUMBER
	[ -d /sys/fs/cgroup/devices ] || skip "no cgroup v1 devices controller"
	mkdir "$CG1"
	echo "c 10:237 rwm" >"$CG1/devices.deny"    # the administrator denies democtl
	run sh -c "echo \$\$ >'$CG1/cgroup.procs'; exec \"\$@\"" sh \
		runuser -u "$RLUSER" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$T/home" \
		XDG_RUNTIME_DIR="$T/run" CONTAINERS_CONF="$T/containers.conf" \
		CONTAINERS_STORAGE_CONF="$T/storage.conf" timeout 120 podman --hooks-dir "$D/hooks" \
		run --rm --network none -e OCI_DEMO=all --rootfs "$D/b/rootfs" sh -c 'demo-tool; cat /dev/democtl </dev/null 2>&1; true'
	# the hook leaves the cgroup alone: the administrator's rule holds
	while read -r p; do echo "$p" >/sys/fs/cgroup/devices/cgroup.procs; done <"$CG1/cgroup.procs"
	rmdir "$CG1"
	assert_success
	assert_line "demo-tool: the answer is 42"
	assert_line "cat: can't open '/dev/democtl': Operation not permitted"
}

@test "a config.json the hook may not read (podman --userns nomap): crun's state root and annotations activate" {
	# root's 0600 config.json, read by a hook in the user's namespace
	mkdir -m 0755 "$D/nb"
	printf '{"ociVersion": "1.0.2", "root": {"path": "%s"}, "process": {"env": ["OCI_DEMO=all"]}}\n' \
		"$D/b/rootfs" >"$D/nb/config.json"
	chmod 0600 "$D/nb/config.json"
	state="{\"bundle\": \"$D/nb\", \"root\": \"$D/b/rootfs\", \"annotations\": {\"ocidec.io/demo\": \"all\"}}"
	run as_user unshare -Ur "$D/ocidec" hook -c "$D/cfg" --dry-run <<<"$state"
	assert_success
	assert_line "mount $D/dr/dev/democtl /dev/democtl ro,nosuid,noexec"
	# without crun's root there is nothing to go on with
	run as_user unshare -Ur "$D/ocidec" hook -c "$D/cfg" --dry-run <<<"{\"bundle\": \"$D/nb\"}"
	assert_failure
	assert_output "ocidec hook: $D/nb/config.json: Permission denied"
}

@test "rootless: CDI devices through the spec, its hook in the user's namespaces" {
	# Rootless runc binds a device node from the host's path of the same
	# name (linux.devices has no host path), so a device under a driver
	# root cannot come through CDI there: a host device (driver_root /)
	# and the demo vendor's files and library, from two specs.
	[ -c /dev/net/tun ] || skip "no /dev/net/tun on this host"
	[ -d /etc/cdi ] || { mkdir /etc/cdi; MADE_ETC_CDI=1; }
	sed -i '/^per_device_nodes/d; /^devices/d' "$D/cfg/demo.ini"
	printf '[vendor]\nname = hostdev\nactivation_flag = OCI_HOSTDEV\n[feature.base]\ndevices = /dev/net/tun\n' >"$D/cfg/hostdev.ini"
	chmod 0644 "$D/cfg/hostdev.ini"
	ETC_SPEC=/etc/cdi/ocidec-test-$$-$BATS_TEST_NUMBER.json
	"$D/ocidec" cdi -c "$D/cfg" -o "$ETC_SPEC" demo
	ETC_SPEC2=/etc/cdi/ocidec-test-$$-$BATS_TEST_NUMBER-2.json
	"$D/ocidec" cdi -c "$D/cfg" -o "$ETC_SPEC2" hostdev
	for userns in "" --userns=keep-id; do
		rm -rf "$D/b/rootfs/etc/ld.so.cache" "$D/b/rootfs/opt"   # what the last run made
		run rl_run --device ocidec.io/demo=all --device ocidec.io/hostdev=all ${userns} -- \
			sh -c 'demo-tool; stat -c "%t:%T %n" /dev/net/tun; stat -c "%u:%g %n" /opt/demo/lib/libdemo.so.1'
		assert_success
		assert_output $'demo-tool: the answer is 42\na:c8 /dev/net/tun\n0:0 /opt/demo/lib/libdemo.so.1'
	done
	rm -f "$ETC_SPEC2"
}

@test "in a user namespace the overflow uid is anyone, not root: an IPC directory it owns in a directory others may write is refused, whoever made it; rootless podman gets a root's one read-only (issue 32, finding 2)" {
	mkdir -m 0755 "$D/nb"
	printf '{"ociVersion": "1.0.2", "root": {"path": "%s"}, "process": {"env": ["OCI_DEMO=all", "DEMO_FEATURES=ipc"]}}\n' \
		"$D/b/rootfs" >"$D/nb/config.json"
	chmod 0644 "$D/nb/config.json"
	# another local user's directory where the daemon's would be (/tmp/nvidia-mps
	# made before the daemon): shows as the overflow uid in the namespace
	chmod 1777 "$D/dr/run"
	chown 1000:1000 "$D/dr/run/demo"
	run as_user unshare -Ur "$D/ocidec" hook -c "$D/cfg" --dry-run <<<"{\"bundle\": \"$D/nb\"}"
	assert_success
	refute_line --partial "mount $D/dr/run/demo "
	assert_output --partial "demo: skipped /run/demo: owned by uid 65534 in a directory anyone may write: not the daemon's (in this user namespace the overflow uid may be any user)"
	# root's in the same place looks the same from here: refused too
	chown 0:0 "$D/dr/run/demo"
	run as_user unshare -Ur "$D/ocidec" hook -c "$D/cfg" --dry-run <<<"{\"bundle\": \"$D/nb\"}"
	refute_line --partial "mount $D/dr/run/demo "
	# in a directory only its owner may write: root's, mounted read-only
	chmod 0755 "$D/dr/run"
	run as_user unshare -Ur "$D/ocidec" hook -c "$D/cfg" --dry-run <<<"{\"bundle\": \"$D/nb\"}"
	assert_success
	assert_line "mount $D/dr/run/demo /run/demo ro,nosuid,nodev,noexec"
	# rootless podman: the container sees it read-only and writes nothing there
	run rl_run -e OCI_DEMO=all -e DEMO_FEATURES=base,ipc -- \
		sh -c 'grep " /run/demo " /proc/self/mountinfo | cut -d" " -f6; busybox touch /run/demo/x; echo touch=$?'
	assert_line --regexp '^ro,nosuid,nodev,noexec'
	assert_line "touch=1"
	assert_file_not_exists "$D/dr/run/demo/x"
}
