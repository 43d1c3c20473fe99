#!/usr/bin/env bats
# The engines users run today, for real, in a root of their own
# (test/fixtures/testbed.sh, bed.sh) with ocidec installed as a package
# installs it, on two cgroup layouts: cgroup2 only (Fedora, RHEL 9, Debian
# 12+, Ubuntu 22.04+ by default), with systemd as init or not, and this
# host's hybrid one. Two beds run the same tests:
#   engines.bats           Debian 13's podman 5.4, crun 1.21, runc 1.1.15,
#                          containerd 1.7 (its CRI driven as kubelet drives
#                          it) and Docker 26
#   engines-unstable.bats  (a link to this file) Debian unstable's podman
#                          5.8, crun 1.28, runc 1.3, containerd 2.1 and
#                          Docker 28 (CDI on by default, --gpus through CDI
#                          specs where nvidia-cdi-hook is on its PATH)
# BED_SUITE (trixie, unstable) names the bed; the file's name picks it when
# unset. The demo vendor (test/fixtures/demo-vendor.sh) stands for a GPU:
# its control device is one every runtime's default rules deny. Once, in
# the static build's pass (the bed runs the static binary).

load helpers

case ${BED_SUITE:-$(basename "$BATS_TEST_FILENAME")} in
*unstable* | *sid*) BED_SUITE=unstable ;;
*) BED_SUITE=trixie ;;
esac
export BED_SUITE
# the engines' names in the tests' names, as the bed has them
if [ "$BED_SUITE" = unstable ]; then
	DOCKER="Docker 28" CONTAINERD="containerd 2.1"
else
	DOCKER="Docker 26" CONTAINERD="containerd 1.7"
fi

# cri_bed: the bed whose containerd runs pods: Debian 13's cgroup2 bed;
# on the unstable bed the hybrid one, as for containerd 2.x below
# (containerd 2.x has no disable_cgroup, and this host's cgroup2 has no CPU
# controller for what the CRI sets). node_config DIR: the node's own
# config.toml for the bed's containerd (1.7: version 2, 2.x: version 3);
# cri_table: its CRI runtime table's name, for the settings tests append
cri_bed() { if [ "$BED_SUITE" = unstable ]; then echo "$HY"; else echo "$V2"; fi; }
node_config() { if [ "$BED_SUITE" = unstable ]; then containerd3_config "$1"; else containerd_config "$1"; fi; }
cri_table() { if [ "$BED_SUITE" = unstable ]; then echo 'plugins."io.containerd.cri.v1.runtime"'; else echo 'plugins."io.containerd.grpc.v1.cri"'; fi; }

setup_file() {
	is_static || return 0
	export V2 HY SD
	V2=$(mktemp -d "/tmp/ocidec-bed2-$BED_SUITE.XXXXXX")
	HY=$(mktemp -d "/tmp/ocidec-bedh-$BED_SUITE.XXXXXX")
	SD=$(mktemp -d "/tmp/ocidec-beds-$BED_SUITE.XXXXXX")
	"$BATS_TEST_DIRNAME/fixtures/cri-proto.sh" >/dev/null
	"$BATS_TEST_DIRNAME/fixtures/bed-setup.sh" "$V2" v2 "$OCIDEC"
	"$BATS_TEST_DIRNAME/fixtures/bed-setup.sh" "$HY" hybrid "$OCIDEC"
	"$BATS_TEST_DIRNAME/fixtures/bed-setup.sh" "$SD" systemd "$OCIDEC"
}

teardown_file() {
	for d in "${V2:-}" "${HY:-}" "${SD:-}"; do
		[ -n "$d" ] || continue
		"$BATS_TEST_DIRNAME/fixtures/bed.sh" stop "$d"
		rm -rf "$d"
	done
}

setup() {
	common_setup
	is_static || skip "the engines run once, in the static build's pass"
}

DEMO_SEE_SHORT='demo-tool; ls /dev | grep demo; head -c 0 /dev/democtl && echo opened'

@test "the $BED_SUITE bed's engines, their versions as the bed has them" {
	run bed "$V2" sh -c 'docker --version; podman --version; runc --version | head -n 1; crun --version | head -n 1
		containerd --version; systemctl --version | head -n 1; uname -r'
	assert_success
	echo "# $BED_SUITE: $(tr '\n' ';' <<<"$output")" >&3
	if [ "$BED_SUITE" = unstable ]; then
		assert_line --regexp '^Docker version 28\.'
		assert_line --regexp '^podman version 5\.8\.'
		assert_line --regexp '^runc version 1\.3\.'
		assert_line --regexp '^crun version 1\.28'
		assert_line --regexp '^containerd .* 2\.1\.'
	else
		assert_line --regexp '^Docker version 26\.'
		assert_line --regexp '^podman version 5\.4\.'
		assert_line --regexp '^runc version 1\.1\.'
		assert_line --regexp '^crun version 1\.21'
		assert_line --regexp '^containerd .* 1\.7\.'
	fi
}

@test "podman 5 hooks.d, rootful: crun and runc on cgroup v2, runc on the hybrid layout; the hook make install put where podman reads it (issue 21, findings 1, 4)" {
	for rt in "$V2 crun" "$V2 runc" "$HY runc"; do
		set -- $rt
		run bed "$1" podman run --rm --runtime "$2" -e OCI_DEMO=all --rootfs "$1/b/rootfs" sh -c "$DEMO_SEE"
		assert_success
		assert_output "$DEMO_SEEN_ALL"
		# a container that asks for nothing: nothing added
		run bed "$1" podman run --rm --runtime "$2" --rootfs "$1/b/rootfs" sh -c 'ls /dev | grep -c demo; grep -c " /usr/bin/demo-tool " /proc/self/mountinfo'
		assert_output $'0\n0'
	done
	# crun on the hybrid layout refuses any container, ours or not
	run bed "$HY" podman run --rm --runtime crun --rootfs "$HY/b/rootfs" true
	assert_failure
}

@test "crun discards a failing hook's output and podman says only its exit code: the reason is in the system log (issue 21, finding 8)" {
	local sock=$V2/log.sock log=$V2/syslog spid
	"$FIXTURES/syslogd.py" "$sock" "$log" &
	spid=$!
	wait_until -t 5 '[ -S "$sock" ]'
	# the installed hook, its system log at our stand-in (the bed's /dev is
	# the host's: its /dev/log is not this test's)
	mkdir -p "$V2/hooks-syslog"
	sed "s|\"ocidec-hook\", \"prestart\"|\"ocidec-hook\", \"--syslog\", \"$sock\", \"prestart\"|" \
		"$CONF/hooks.d/ocidec.json" >"$V2/hooks-syslog/ocidec.json"
	grep -q -- --syslog "$V2/hooks-syslog/ocidec.json"
	run bed "$V2" podman --hooks-dir "$V2/hooks-syslog" run --rm --runtime crun -e OCI_DEMO=GPU-nonexistent \
		--rootfs "$V2/b/rootfs" true
	kill "$spid"
	assert_failure
	assert_output --partial "exit code: 1"
	refute_output --partial "nonexistent"
	run cat "$log"
	assert_output --regexp "^<27>.* ocidec\[[0-9]+\]: ocidec hook: container [0-9a-f]+: demo: no device 'GPU-nonexistent'"
}

@test "podman 5 CDI: crun (a createContainer hook with pid 0) and runc, on both layouts (issue 21, finding 2)" {
	for rt in "$V2 crun" "$V2 runc" "$HY runc"; do
		set -- $rt
		run bed "$1" podman run --rm --runtime "$2" --device ocidec.io/demo=1 --rootfs "$1/b/rootfs" sh -c "$DEMO_SEE_SHORT"
		assert_success
		assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	done
	run bed "$V2" sh -c 'grep -o "\"cdiVersion\":[^,]*" /etc/cdi/ocidec.io-demo.json'
	assert_output --regexp '"cdiVersion":[[:space:]]*"0\.[5-8]\.0"'
}

@test "podman 5 CDI with the hook installed too: an image's OCI_DEMO=all gets no more than the spec's device; device nodes keep their host group (issue 22, finding 4)" {
	chgrp 44 "$V2/dr/dev/demo1"
	bed "$V2" ocidec cdi -o /etc/cdi demo
	run bed "$V2" podman run --rm --runtime crun --device ocidec.io/demo=1 -e OCI_DEMO=all --rootfs "$V2/b/rootfs" \
		sh -c 'ls /dev | grep demo; stat -c %g /dev/demo1; echo "$OCI_DEMO"'
	chgrp 0 "$V2/dr/dev/demo1"
	bed "$V2" ocidec cdi -o /etc/cdi demo
	assert_success
	assert_output $'demo1\ndemoctl\n44\nvoid'
}

@test "systemd as init, the systemd cgroup driver: the hook's devices go to the container's unit and survive systemd re-applying it; crun, runc, CDI, the shim (issue 21: systemd)" {
	# what systemd does to a unit's cgroup: daemon-reload, daemon-reexec
	# (a package upgrade), set-property, and a sibling container's start
	# after either (systemd then re-applies the slice's units)
	probe() {
		bed "$SD" podman exec "$1" sh -c 'head -c 0 /dev/democtl 2>/dev/null && echo opened || echo denied'
	}
	for how in "hook crun" "hook runc" "cdi crun" "cdi runc" "shim runc"; do
		set -- $how
		case $1 in
		hook) args=(--runtime "$2" -e OCI_DEMO=all) ;;
		cdi) args=(--runtime "$2" --device ocidec.io/demo=1) ;;
		shim) args=(--runtime /usr/bin/ocidec-runtime -e OCI_DEMO=all) ;;
		esac
		bed "$SD" podman rm -f -t 0 c >/dev/null 2>&1 || true
		run bed "$SD" podman run -d --name c "${args[@]}" --rootfs "$SD/b/rootfs" sleep 600
		assert_success
		id=${output##*$'\n'}
		run probe c
		assert_output "opened"
		# the runtime's scope, and its DeviceAllow= holds the device
		run bed "$SD" systemctl show -p DevicePolicy -p DeviceAllow "libpod-$id.scope"
		assert_line "DevicePolicy=strict"
		assert_line "DeviceAllow=/dev/char/10:237 rwm"
		bed "$SD" systemctl daemon-reload
		run probe c
		assert_output "opened"
		bed "$SD" systemctl daemon-reexec
		bed "$SD" podman run --rm --runtime runc --rootfs "$SD/b/rootfs" true
		run probe c
		assert_output "opened"
		bed "$SD" systemctl set-property --runtime "libpod-$id.scope" TasksMax=1000
		run probe c
		assert_output "opened"
		bed "$SD" podman rm -f -t 0 c >/dev/null
	done
	# nothing left behind by the runtime property: it went with the scope
	run bed "$SD" sh -c 'ls /run/systemd/system.control 2>/dev/null | grep -c libpod'
	assert_output 0
	# a privileged container's unit restricts nothing: left so
	run bed "$SD" podman run -d --name p --privileged --runtime runc -e OCI_DEMO=all --rootfs "$SD/b/rootfs" sleep 600
	assert_success
	id=${output##*$'\n'}
	run bed "$SD" systemctl show -p DevicePolicy -p DeviceAllow "libpod-$id.scope"
	assert_output "DevicePolicy=auto"
	run probe p
	assert_output "opened"
	bed "$SD" podman rm -f -t 0 p >/dev/null
	# a container that asks for nothing: its unit untouched
	run bed "$SD" podman run --rm --runtime crun --rootfs "$SD/b/rootfs" sh -c 'head -c 0 /dev/democtl 2>/dev/null || echo denied'
	assert_output "denied"
	# the dry run names the unit
	run bed "$SD" sh -c 'podman run -d --name d --runtime runc -e OCI_DEMO=all --rootfs "$1/b/rootfs" sleep 600 >/dev/null
		id=$(podman inspect -f "{{.Id}}" d); pid=$(podman inspect -f "{{.State.Pid}}" d)
		echo "$id"
		printf "{\"ociVersion\":\"1.0.2\",\"id\":\"%s\",\"status\":\"running\",\"pid\":%s,\"bundle\":\"%s\"}" \
			"$id" "$pid" "/var/lib/containers/storage/overlay-containers/$id/userdata" | ocidec hook --dry-run prestart
		podman rm -f -t 0 d >/dev/null' sh "$SD"
	assert_success
	id=${lines[0]}
	assert_line "systemd libpod-$id.scope DeviceAllow=/dev/char/10:237 rwm"
}

@test "the CDI specs stay true under systemd: ocidec-cdi-refresh.service (as installed) writes /var/run/cdi at boot; the .path unit makes them again when a driver upgrade runs depmod or a vendor config changes; podman's next container gets the new files; after a reboot (/run emptied) the spec is there again (issue 35)" {
	local kver spec=/var/run/cdi/ocidec.io-demo.json lib=$SD/dr/opt/demo/lib
	kver=$(uname -r)
	run bed "$SD" systemctl cat ocidec-cdi-refresh.path
	assert_success
	bed "$SD" mkdir -p "/lib/modules/$kver"
	bed "$SD" touch "/lib/modules/$kver/modules.dep"
	bed "$SD" systemctl enable --now ocidec-cdi-refresh.path ocidec-cdi-refresh.service
	run bed "$SD" sh -c "grep -c '\"kind\":' $spec /var/run/cdi/management.ocidec.io-demo.json"
	assert_success
	run bed "$SD" podman run --rm --runtime crun --device ocidec.io/demo=1 --rootfs "$SD/b/rootfs" \
		sh -c 'demo-tool; head -c 0 /dev/democtl && echo opened'
	assert_output $'demo-tool: the answer is 42\nopened'
	# a driver upgrade: a new library version in the driver root, the link
	# moved, depmod run; the path unit makes the spec again
	cp "$lib/libdemo.so.1.0" "$lib/libdemo.so.1.1"
	ln -sfn libdemo.so.1.1 "$lib/libdemo.so.1"
	bed "$SD" touch "/lib/modules/$kver/modules.dep"
	for _ in $(seq 100); do bed "$SD" grep -q libdemo.so.1.1 "$spec" && break; sleep 0.1; done
	run bed "$SD" grep -c libdemo.so.1.1 "$spec"
	assert_success
	run bed "$SD" podman run --rm --runtime runc --device ocidec.io/demo=1 --rootfs "$SD/b/rootfs" \
		sh -c 'readlink /opt/demo/lib/libdemo.so.1; demo-tool'
	assert_output $'libdemo.so.1.1\ndemo-tool: the answer is 42'
	# a vendor config changed: the service runs again
	ran() { bed "$SD" systemctl show -p ExecMainStartTimestampMonotonic --value ocidec-cdi-refresh.service; }
	before=$(ran)
	bed "$SD" sh -c 'printf "\n" >>/etc/ocidec/ocidec.d/demo.ini'
	for _ in $(seq 100); do [ "$(ran)" != "$before" ] && break; sleep 0.1; done
	[ "$(ran)" != "$before" ] || fail "ocidec-cdi-refresh.service did not run after a vendor config changed"
	# a reboot: /run emptied; the service enabled at boot writes the spec
	"$FIXTURES/bed.sh" stop "$SD"
	"$FIXTURES/bed.sh" start "$SD" systemd
	run bed "$SD" sh -c "for i in \$(seq 100); do [ -s $spec ] && break; sleep 0.1; done; grep -c libdemo.so.1.1 $spec"
	assert_success
	# back as the other tests expect it
	ln -sfn libdemo.so.1.0 "$lib/libdemo.so.1"
	rm "$lib/libdemo.so.1.1"
	bed "$SD" systemctl disable --now ocidec-cdi-refresh.path ocidec-cdi-refresh.service
	bed "$SD" rm -f "$spec" /var/run/cdi/management.ocidec.io-demo.json
}

@test "the CDI specs stay true through a driver module's reload: udev's rule (as installed) matches module loads and unloads, PCI binds, DRM, accel and partition nodes, a vendor's or not (udevadm verify, udevadm test on a sysfs of those devices), not a node's change nor another class's node; the demo's node made again with a new minor and its udev event refresh the spec through the rule's timer and the service, once for a burst of events, with no depmod; check names the spec older than the device before (issue 49)" {
	local spec=/var/run/cdi/ocidec.io-demo.json kver fsys=$SD/fsys
	kver=$(uname -r)
	run bed "$SD" udevadm verify /usr/lib/udev/rules.d/60-ocidec-cdi-refresh.rules
	assert_success
	run bed "$SD" systemctl cat ocidec-cdi-refresh.timer
	assert_success
	# the rule against devices this host lacks: a sysfs of them bound over
	# /sys in a mount namespace of the test's own (udevadm test runs no
	# RUN: it says what udevd would run)
	"$FIXTURES/fake-sysfs.sh" "$fsys"
	udevrun() {
		bed "$SD" unshare -m sh -c 'mount --bind "$1" /sys && SYSTEMD_DEVICE_VERIFY_SYSFS=0 udevadm test --action="$2" "/sys/$3" 2>&1' \
			sh "${4:-$fsys}" "$1" "$2" | sed -n '/^Queued commands:/,$s/^  RUN{program} : //p'
	}
	local start="/usr/bin/systemctl --no-block start ocidec-cdi-refresh.timer" pci=devices/pci0000:00
	for ev in "add module/nvidia" "remove module/nvidia_uvm" "add module/amdgpu" "remove module/habanalabs" \
		"unbind $pci/0000:00:02.0" "bind $pci/0000:00:01.0" "add $pci/0000:00:01.0/drm/card1" \
		"remove $pci/0000:00:01.0/drm/renderD128" "remove $pci/0000:00:03.0/accel/accel0" \
		"add devices/platform/amdgpu_xcp_1" "remove devices/platform/amdgpu_xcp_1" "add module/loop"; do
		run udevrun $ev
		[ "$output" = "$start" ] || fail "udev's rule on $ev: '$output', not the refresh's timer"
	done
	# not a node's coming or going (a monitor plugged in), another class's node
	# (kfd's node comes with amdgpu's module: matched there)
	for ev in "change $pci/0000:00:01.0/drm/card1" "add devices/virtual/misc/loop-control" "add devices/virtual/kfd/kfd"; do
		run udevrun $ev
		[ -z "$output" ] || fail "udev's rule on $ev: '$output', not nothing"
	done
	# the demo vendor's own rule, as an administrator adds one for a vendor
	# of theirs (the shipped rule's comment): its control node, the misc
	# device 10:237, loop-control's numbers, whose sysfs device is real here
	bed "$SD" sh -c 'mkdir -p /etc/udev/rules.d && echo "SUBSYSTEM==\"misc\", KERNEL==\"loop-control\", ENV{OCIDEC_CDI_REFRESH}=\"1\"" >/etc/udev/rules.d/59-ocidec-demo.rules'
	bed "$SD" mkdir -p "/lib/modules/$kver"
	bed "$SD" touch "/lib/modules/$kver/modules.dep"
	bed "$SD" ocidec cdi --refresh
	run bed "$SD" grep -c '"minor":[[:space:]]*5' "$spec"
	assert_success
	local dep
	dep=$(bed "$SD" stat -c %Y.%Z "/lib/modules/$kver/modules.dep")
	# the driver's module reloaded: demo1 (1:5) removed and made again with
	# another minor (1:7), no depmod; check names the spec
	rm "$SD/dr/dev/demo1"
	mknod -m 0666 "$SD/dr/dev/demo1" c 1 7
	run bed "$SD" ocidec check
	assert_line --partial "PROBLEM  cdi: $spec (ocidec.io/demo): older than the vendor's devices: 1 device node it names made again with other numbers since ($SD/dr/dev/demo1 is c 1:7 here, the spec's c 1:5: made again"
	assert_line "         fix: systemctl start ocidec-cdi-refresh.service"
	# the module's events, a burst (the node removed, made again, its
	# module): what udevd runs for each, run
	runs() { bed "$SD" journalctl -q -u ocidec-cdi-refresh.service -o cat | grep -c '^Starting ocidec-cdi-refresh.service' || true; }
	before=$(runs)
	for action in remove add remove add; do
		run udevrun "$action" devices/virtual/misc/loop-control /sys
		assert_output "$start"
		bed "$SD" $output
	done
	run bed "$SD" systemctl is-active ocidec-cdi-refresh.timer
	assert_output active
	for _ in $(seq 50); do bed "$SD" grep -q '"minor":[[:space:]]*7' "$spec" && break; sleep 0.1; done
	run bed "$SD" grep -c '"minor":[[:space:]]*7' "$spec"
	assert_success
	refute_output 0
	sleep 1.5
	after=$(runs)
	[ "$((after - before))" = 1 ] || fail "the refresh ran $((after - before)) times for one burst of events, not once"
	run bed "$SD" systemctl is-active ocidec-cdi-refresh.timer
	assert_output inactive
	# no depmod ran: modules.dep as it was
	[ "$(bed "$SD" stat -c %Y.%Z "/lib/modules/$kver/modules.dep")" = "$dep" ] || fail "modules.dep changed"
	# the containers' devices: the new one
	run bed "$SD" podman run --rm --runtime crun --device ocidec.io/demo=1 --rootfs "$SD/b/rootfs" stat -c %t:%T /dev/demo1
	assert_output "1:7"
	run bed "$SD" ocidec check
	refute_line --partial "$spec (ocidec.io/demo): older than"
	refute_line --partial "management.ocidec.io-demo.json (management.ocidec.io/demo): older than"
	# (bed-setup's copy in /etc/cdi, which no refresh writes: named, its command)
	assert_line "         fix: ocidec cdi -o /etc/cdi/ocidec.io-demo.json demo"
	# back as the other tests expect it
	rm "$SD/dr/dev/demo1"
	mknod -m 0666 "$SD/dr/dev/demo1" c 1 5
	bed "$SD" rm -f "$spec" /var/run/cdi/management.ocidec.io-demo.json /etc/udev/rules.d/59-ocidec-demo.rules
	rm -rf "$fsys"
}

# rl_user: a user rl (uid 1500, subordinate ids, its runtime directory)
# in the v2 bed, the test image readable by it; rl_setup: that, with the
# image loaded into its podman; rl CMD runs CMD as that user, rootless
# podman's way
rl_user() {
	bed "$V2" sh -c 'id rl >/dev/null 2>&1 || useradd -m -u 1500 rl
		echo rl:200000:65536 >/etc/subuid; echo rl:200000:65536 >/etc/subgid
		mkdir -p /run/user/1500 && chown rl /run/user/1500 && chmod 0700 /run/user/1500'
	chmod 0755 "$V2"
	chmod 0644 "$V2/image.tar"
}

rl_setup() {
	rl_user
	rl "podman load -q -i $V2/image.tar" >/dev/null
}

rl() {
	bed "$V2" su rl -s /bin/sh -c "cd; export XDG_RUNTIME_DIR=/run/user/1500; $1" 2>&1 |
		grep -v 'is not a shared mount'
}

@test "rootless podman 5 (crun and runc, cgroup v2): the hook gives a user's container the devices" {
	rl_setup
	for rt in crun runc; do
		run rl "podman run --rm --runtime $rt -e OCI_DEMO=all docker.io/library/ocidec-test:1 sh -c '$DEMO_SEE_SHORT'"
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
		run rl "podman run --rm --runtime $rt docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo'"
		assert_output 0
	done
}

@test "rootless podman 5 (crun and runc): the IPC directory comes read-only; an MPS stand-in's socket and FIFO are reached through it; the container writes nothing there (issue 32, findings 1, 2)" {
	rl_setup
	gcc -static -O2 -o "$V2/mps-client" "$FIXTURES/mps-client.c"
	chmod 0755 "$V2/mps-client"
	for rt in crun runc; do
		rm -f "$V2/mps.log"
		"$FIXTURES/mps-daemon.py" "$V2/dr/run/demo" "$V2/mps.log" &
		daemon=$!
		wait_until "grep -q ready '$V2/mps.log' 2>/dev/null"
		run rl "podman run --rm --runtime $rt -e OCI_DEMO=all -e DEMO_FEATURES=base,ipc -v $V2/mps-client:/mps-client:ro docker.io/library/ocidec-test:1 sh -c '/mps-client /run/demo; busybox touch /run/demo/x; echo touch=\$?; busybox rm -f /run/demo/control; echo rm=\$?; grep \" /run/demo \" /proc/self/mountinfo | cut -d\" \" -f6'"
		echo "# $rt: $output" >&3
		wait "$daemon" || true
		assert_line "socket: mps-daemon: hello"
		assert_line "fifo: written"
		assert_line "touch=1"
		assert_line "rm=1"
		assert_line --regexp '^ro,nosuid,nodev,noexec'
		[ ! -e "$V2/dr/run/demo/x" ] && [ -S "$V2/dr/run/demo/control" ]
		run cat "$V2/mps.log"
		assert_line "socket got hello"
		assert_line "fifo got ping"
	done
}

@test "ocidec install --runtime podman: podman 5 runs the hook without --hooks-dir, also where /usr is read-only (CoreOS) (issue 21, finding 4)" {
	# a vendor only the installed configs have: the installed hook is the one that runs
	mkdir -p "$V2/cfgx"
	sed 's/^name = demo$/name = demox/; s/^activation_flag = OCI_DEMO$/activation_flag = OCI_DEMOX/' \
		"$V2/root/etc/ocidec/ocidec.d/demo.ini" >"$V2/cfgx/demox.ini"
	chmod 0644 "$V2/cfgx/demox.ini"
	for ro in "" ro; do
		run bed "$V2" unshare -m --propagation private sh -c '
			set -e
			# CoreOS: /usr read-only, /usr/local (/var/usrlocal) writable
			if [ -n "$1" ]; then mount --bind /usr /usr; mount -o remount,bind,ro /usr; mount -t tmpfs tmpfs /usr/local; fi
			ocidec install --host-root / -c "$2/cfgx" --runtime podman >"$2/install.out"
			podman run --rm -e OCI_DEMOX=all --rootfs "$2/b/rootfs" sh -c "$3"
			ocidec install --host-root / --uninstall >/dev/null' sh "$ro" "$V2" "$DEMO_SEE_SHORT"
		assert_success
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
		run cat "$V2/install.out"
		if [ -n "$ro" ]; then
			assert_line "wrote /etc/containers/oci/hooks.d/ocidec.json"
			assert_line "wrote /etc/containers/containers.conf.d/ocidec.conf"
		else
			# the package's file (make install's) kept, and put back by --uninstall
			assert_line "wrote /usr/share/containers/oci/hooks.d/ocidec.json (the original kept as /usr/share/containers/oci/hooks.d/ocidec.json.ocidec-orig)"
		fi
	done
	assert_file_not_exists "$V2/root/etc/containers/containers.conf.d/ocidec.conf"
	assert_file_not_exists "$V2/root/usr/local/ocidec"
}

@test "the shim in front of crun: crun's value-taking options, the container gets the devices (issue 21, finding 7)" {
	printf '[runtime]\npath = /usr/bin/crun\n' >"$V2/root/etc/ocidec/ocidec.d/runtime.conf"
	chmod 0644 "$V2/root/etc/ocidec/ocidec.d/runtime.conf"
	rm -rf "$V2/b7" && cp -a "$V2/b" "$V2/b7"
	python3 - "$V2/b7/config.json" "$DEMO_SEE_SHORT" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["process"]["env"].append("OCI_DEMO=all")
		c["process"]["args"] = ["sh", "-c", sys.argv[2]]
		c["linux"].pop("cgroupsPath", None)
		json.dump(c, open(sys.argv[1], "w"))
		EOF
	run bed "$V2" ocidec-runtime --cgroup-manager cgroupfs --log-level error --root /run/crun-shim run --bundle "$V2/b7" shim7
	rm -f "$V2/root/etc/ocidec/ocidec.d/runtime.conf"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
}

@test "crun 1.28 moves a device's network interfaces (linux.netDevices from the vendor's pci_net, through the shim) into the container: there inside, gone from the runtime's network namespace while it runs; a virtual one destroyed with the container's namespace, said at create; runc 1.3 ignores the member (the interface stays); a container on the host's network namespace is refused where it asked for some devices (it would see every device's interfaces), starts where it asked for all (issue 49)" {
	[ "$BED_SUITE" = unstable ] || skip "crun 1.28 (the unstable bed's, engines-unstable.bats) moves linux.netDevices; Debian 13's runc 1.1 ignores the member"
	# the systemd bed: a network namespace of its own (this host's untouched).
	# A Gaudi's port is a PCI device's interface, which the kernel gives back
	# to its first network namespace when the container's goes; none here,
	# so the port is a virtual interface (ifb: this kernel has no dummy
	# module), which the kernel destroys with the container's namespace
	d=$SD
	local ini=$d/root/etc/ocidec/ocidec.d/habana.ini rc=$d/root/etc/ocidec/ocidec.d/runtime.conf
	rm -rf "$d/ga" "$d/bn"
	"$FIXTURES/gpu-sysfs.sh" "$d/ga" 4242 gaudi
	rm -r "$d/ga/sys/devices/pci0000:00/0000:00:00.0/0000:19:00.0/net/enp25s0p23"   # device 0: one port
	sed "s|^driver_root = /\$|driver_root = $d/ga/root|; /^pci_devices/s| /sys/| $d/ga/sys/|" "$CONF/habana.ini" >"$ini"
	printf '[runtime]\npath = /usr/bin/crun\n' >"$rc"
	chmod 0644 "$ini" "$rc"
	bed "$d" busybox ip link add enp25s0p22 type ifb
	"$FIXTURES/bundle.sh" "$d/bn" HABANA_VISIBLE_DEVICES=0 -- sleep 600 >/dev/null
	run bed "$d" sh -c 'ocidec-runtime --cgroup-manager cgroupfs --root /run/crun-net create --bundle "$1/bn" net1 </dev/null >/dev/null 2>"$1/bn/create.err"; echo "rc $?"; cat "$1/bn/create.err"' sh "$d"
	rm -f "$rc"
	assert_line "rc 0"
	assert_line "ocidec runtime: warn: network interface enp25s0p22 is a virtual one: it goes with the container's network namespace when the container ends, not back here"
	run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["linux"]["netDevices"])' "$d/bn/config.json"
	assert_output "{'enp25s0p22': {'name': 'enp25s0p22'}}"
	bed "$d" crun --root /run/crun-net start net1
	run bed "$d" crun --root /run/crun-net exec net1 ls /sys/class/net /dev/accel
	assert_line enp25s0p22
	assert_line accel0
	run bed "$d" busybox ip link show enp25s0p22
	assert_failure
	bed "$d" crun --root /run/crun-net delete -f net1
	run bed "$d" busybox ip link show enp25s0p22
	assert_failure
	# runc 1.3.6 (runtime spec 1.2.1) reads no linux.netDevices: the
	# interface stays where it is, the container starts without it
	bed "$d" busybox ip link add enp25s0p22 type ifb
	"$FIXTURES/bundle.sh" "$d/bn" HABANA_VISIBLE_DEVICES=0 -- ls /sys/class/net >/dev/null
	run bed "$d" ocidec-runtime --root /run/runc-net run --bundle "$d/bn" net2
	assert_success
	assert_line --partial "network interface enp25s0p22 is a virtual one"
	assert_line lo
	refute_line enp25s0p22
	run bed "$d" busybox ip link show enp25s0p22
	assert_success
	# the host's network namespace, which the container shares: device 0
	# alone cannot have its port there (the container would see device 1's
	# too): refused, in the runtime's error, nothing started
	local nohostns='import json,sys; c=json.load(open(sys.argv[1])); c["linux"]["namespaces"]=[n for n in c["linux"]["namespaces"] if n["type"]!="network"]; json.dump(c,open(sys.argv[1],"w"))'
	"$FIXTURES/bundle.sh" "$d/bn" HABANA_VISIBLE_DEVICES=0 -- true >/dev/null
	python3 -c "$nohostns" "$d/bn/config.json"
	run bed "$d" ocidec-runtime --root /run/runc-net run --bundle "$d/bn" net3
	assert_failure 1
	assert_line --partial "network interfaces enp25s0p22: the devices asked for cannot have them alone in the host's network namespace, which the container shares (it would see every device's): give it a network namespace of its own, or ask for all devices"
	run bed "$d" runc --root /run/runc-net state net3
	assert_failure
	# all of them (Habana's own `docker run --net=host`): every interface is
	# already where the container is, it starts, nothing to move
	"$FIXTURES/bundle.sh" "$d/bn" HABANA_VISIBLE_DEVICES=all -- true >/dev/null
	python3 -c "$nohostns" "$d/bn/config.json"
	run bed "$d" ocidec-runtime --root /run/runc-net run --bundle "$d/bn" net4
	assert_success
	refute_output --partial "enp25s0p22"
	run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["linux"].get("netDevices"))' "$d/bn/config.json"
	assert_output None
	bed "$d" busybox ip link del enp25s0p22
	rm -f "$ini"
}

# dockerd DIR: Docker (26 or 28) in the bed with /etc/docker/daemon.json, its data
# under DIR/docker, its socket DIR/docker.sock; DK is the client
dockerd_start() {
	local d=$1
	mkdir -p "$d/docker"
	bed "$d" sh -c "exec dockerd --data-root $d/docker/data --exec-root /run/docker -H unix://$d/docker.sock \
		--pidfile $d/docker.pid --bridge=none --iptables=false --ip6tables=false --ip-forward=false \
		>$d/docker.log 2>&1" &
	wait_until -t 30 'bed "$d" docker -H "unix://$d/docker.sock" version >/dev/null 2>&1' && return 0
	echo "dockerd did not come up: $(tail -n 5 "$d/docker.log")" >&2
	return 1
}

dockerd_stop() {
	local d=$1 pid
	pid=$(cat "$d/root$d/docker.pid" 2>/dev/null || cat "$d/docker.pid" 2>/dev/null) || return 0
	bed "$d" sh -c "kill $pid; for i in \$(seq 100); do kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done" || true
}

@test "$DOCKER: ocidec install --runtime docker --runtime-name nvidia; --runtime nvidia, --gpus, CDI, --ulimit core=-1; nothing asked, nothing changed (issue 21, findings 5, 8)" {
	for d in "$V2" "$HY"; do
		run bed "$d" ocidec install --host-root / -c "$d/nv" --runtime docker --runtime-name nvidia
		assert_success
		# (no systemd in this bed: Debian's init script restarts dockerd)
		assert_line 'ocidec install: dockerd runs runtime "nvidia" once it restarts: service docker restart (or --restart)'
		assert_line "linked /usr/local/bin/nvidia-container-runtime-hook -> /usr/local/ocidec/bin/ocidec"
		# the administrator turns CDI on
		python3 - "$d/root/etc/docker/daemon.json" <<-'EOF'
			import json, sys
			c = json.load(open(sys.argv[1])); c["features"] = {"cdi": True}
			json.dump(c, open(sys.argv[1], "w"))
			EOF
		dockerd_start "$d"
		dk() { bed "$d" docker -H "unix://$d/docker.sock" "$@"; }
		bed "$d" sh -c "tar -C $d/b/rootfs -c . | docker -H unix://$d/docker.sock import - ocidec-test:1" >/dev/null
		run dk run --rm --network none --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=all ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
		run dk run --rm --network none --gpus all ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
		run dk run --rm --network none --device ocidec.io/demo=0 ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
		run dk run --rm --network none --runtime nvidia --ulimit core=-1 -e NVIDIA_VISIBLE_DEVICES=0 ocidec-test:1 sh -c 'ulimit -c; ls /dev | grep demo'
		assert_output $'unlimited\ndemo0\ndemoctl'
		run dk run --rm --network none --runtime nvidia ocidec-test:1 sh -c 'ls /dev | grep -c demo'
		assert_output 0
		dockerd_stop "$d"
		bed "$d" ocidec install --host-root / --uninstall >/dev/null
	done
}

@test "$DOCKER, the package's way: ocidec install on the host itself --set-as-default --enable-cdi; docker run with no --runtime, --gpus all and --device nvidia.com/gpu=all get the devices; a refusal is ocidec's line in docker's error; nothing copied; --uninstall gives daemon.json back (issue 33, findings 1, 2)" {
	d=$V2
	# the demo vendor under NVIDIA's name and CDI kind, as the installed configs
	mv "$d/root/etc/ocidec/ocidec.d/nvidia.ini" "$d/nvidia.ini.aside"
	sed '/^\[vendor\]$/a cdi_kind = nvidia.com/gpu' "$d/nv/nvidia.ini" >"$d/root/etc/ocidec/ocidec.d/nvidia.ini"
	bed "$d" ocidec cdi -o /etc/cdi nvidia >/dev/null
	had=$( [ -e "$d/root/etc/docker/daemon.json" ] && sha256sum <"$d/root/etc/docker/daemon.json" || echo none)
	run bed "$d" ocidec install --runtime docker --set-as-default --enable-cdi
	assert_success
	assert_line 'ocidec install: dockerd runs runtime "ocidec" once it restarts: service docker restart (or --restart)'
	assert_line "linked /usr/local/bin/nvidia-container-runtime-hook -> /usr/bin/ocidec"
	[ ! -e "$d/root/usr/local/ocidec" ]
	dockerd_start "$d"
	dk() { bed "$d" docker -H "unix://$d/docker.sock" "$@"; }
	bed "$d" sh -c "tar -C $d/b/rootfs -c . | docker -H unix://$d/docker.sock import - ocidec-test:1" >/dev/null
	run dk info --format '{{.DefaultRuntime}}'
	assert_output ocidec
	run dk run --rm --network none -e NVIDIA_VISIBLE_DEVICES=all ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none --gpus all ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none --device nvidia.com/gpu=all ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none --device nvidia.com/gpu=1 ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none -e NVIDIA_VISIBLE_DEVICES=7 ocidec-test:1 true
	assert_failure
	assert_output --partial "ocidec runtime: nvidia: no device 7: $d/dr/dev/demo7 not found (this host has 0, 1)"
	echo "# $DOCKER: $output" >&3
	run dk run --rm --network none ocidec-test:1 sh -c 'ls /dev | grep -c demo'
	assert_output 0
	dockerd_stop "$d"
	run bed "$d" ocidec install --uninstall
	assert_success
	now=$( [ -e "$d/root/etc/docker/daemon.json" ] && sha256sum <"$d/root/etc/docker/daemon.json" || echo none)
	assert_equal "$now" "$had"
	[ ! -e "$d/root/usr/local/bin/nvidia-container-runtime-hook" ]
	mv "$d/nvidia.ini.aside" "$d/root/etc/ocidec/ocidec.d/nvidia.ini"
	rm -f "$d/root/etc/cdi/nvidia.com-gpu.json"
}

# docker28_vendors D: the demo vendor under NVIDIA's name and CDI kind and
# under AMD's (AMD_VISIBLE_DEVICES, amd.com/gpu), the installed nvidia.ini
# and amd.ini set aside; their CDI specs made as the refresh makes them.
# docker28_vendors_off D: back as the other tests expect it
docker28_vendors() {
	local d=$1
	for v in nvidia amd; do mv "$d/root/etc/ocidec/ocidec.d/$v.ini" "$d/$v.ini.d28-aside"; done
	sed '/^\[vendor\]$/a cdi_kind = nvidia.com/gpu' "$d/nv/nvidia.ini" >"$d/root/etc/ocidec/ocidec.d/nvidia.ini"
	sed 's/^name = nvidia$/name = amd/; s/^activation_flag = NVIDIA_VISIBLE_DEVICES$/activation_flag = OCI_AMD\nactivation_aliases = AMD_VISIBLE_DEVICES/; /^\[vendor\]$/a cdi_kind = amd.com/gpu' \
		"$d/nv/nvidia.ini" >"$d/root/etc/ocidec/ocidec.d/amd.ini"
	chmod 0644 "$d/root/etc/ocidec/ocidec.d/nvidia.ini" "$d/root/etc/ocidec/ocidec.d/amd.ini"
	bed "$d" ocidec cdi -o /etc/cdi nvidia amd >/dev/null
}

docker28_vendors_off() {
	local d=$1
	[ -e "$d/nvidia.ini.d28-aside" ] || return 0
	# (a test that failed midway: its dockerd and its install undone)
	dockerd_stop "$d"
	[ ! -e "$d/nvidia-hook.d28-aside" ] || mv "$d/nvidia-hook.d28-aside" "$d/root/usr/local/bin/nvidia-container-runtime-hook"
	[ ! -e "$d/root/var/lib/ocidec/install.json" ] || bed "$d" ocidec install --uninstall >/dev/null 2>&1 || true
	for v in nvidia amd; do mv "$d/$v.ini.d28-aside" "$d/root/etc/ocidec/ocidec.d/$v.ini"; done
	rm -f "$d/root/etc/cdi/nvidia.com-gpu.json" "$d/root/etc/cdi/amd.com-gpu.json" "$d/root/etc/docker/daemon.json" \
		"$d/root/usr/local/bin/amd-container-runtime" "$d/root/usr/local/bin/nvidia-container-runtime-hook"
}

# d28_gpus CMD OUT MISSING: in the Docker 28 test, docker run --gpus all
# and --gpus '"device=1"' give the demo's GPUs (CMD run first in the
# container, OUT its output), --gpus '"device=7"' fails saying MISSING
d28_gpus() {
	run dk run --rm --network none --gpus all ocidec-test:1 sh -c "$1$DEMO_SEE_SHORT"
	assert_success
	assert_output "$2"$'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none --gpus '"device=1"' ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none --gpus '"device=7"' ocidec-test:1 true
	assert_failure
	assert_output --partial "$3"
}

@test "Docker 28's --gpus and CDI (its CDI on by default since 28.2): --device nvidia.com/gpu=N and amd.com/gpu=N through ocidec's refreshed specs with no daemon.json; --gpus all, --gpus '\"device=1\"' through ocidec's hook (CDI off) and its runtime, for NVIDIA's kind and (amd-container-runtime on the PATH) AMD's; a missing GPU fails with ocidec's line or Docker's CDI error naming it, never a silent start; check says which path docker run takes (issue 49)" {
	[ "$BED_SUITE" = unstable ] || skip "Docker 28 is the unstable bed's (engines-unstable.bats); Debian 13's Docker 26 has CDI off by default"
	d=$V2
	dk() { bed "$d" docker -H "unix://$d/docker.sock" "$@"; }
	docker28_vendors "$d"
	rm -f "$d/root/etc/docker/daemon.json"
	# a node with no daemon.json: Docker 28's own CDI, ocidec's specs
	# (and NVIDIA's CDI hook name on dockerd's PATH: Debian's 28.5 has no
	# CDI-first --gpus, which a later Docker takes where it finds that name)
	ln -s /usr/bin/ocidec "$d/root/usr/local/bin/nvidia-cdi-hook"
	dockerd_start "$d"
	bed "$d" sh -c "tar -C $d/b/rootfs -c . | docker -H unix://$d/docker.sock import - ocidec-test:1" >/dev/null
	run dk info --format '{{json .CDISpecDirs}}'
	assert_output '["/etc/cdi","/var/run/cdi"]'
	run dk run --rm --network none --device nvidia.com/gpu=1 ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none --device amd.com/gpu=0 ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
	run dk run --rm --network none --device nvidia.com/gpu=7 ocidec-test:1 true
	assert_failure
	assert_output --partial "unresolvable CDI devices nvidia.com/gpu=7"
	echo "# $DOCKER, CDI, a missing GPU: ${lines[0]}" >&3
	# --gpus with no hook on dockerd's PATH: Docker's own refusal
	run dk run --rm --network none --gpus all ocidec-test:1 true
	assert_failure
	assert_output --partial 'could not select device driver "" with capabilities: [[gpu]]'
	run bed "$d" ocidec check
	assert_line --regexp '^info +docker: dockerd runs without /etc/docker/daemon.json: docker run gets no vendor but through CDI'
	# check says which way --gpus goes, from the binary dockerd runs
	assert_line --regexp '^info +docker: docker run --gpus, an NVIDIA GPU: through the hook nvidia-container-runtime-hook, which is not on its PATH: --gpus fails \(the running dockerd has no CDI-first --gpus, a later Docker.s where nvidia-cdi-hook is on its PATH\)$'
	rm "$d/root/usr/local/bin/nvidia-cdi-hook"
	dockerd_stop "$d"
	# CDI off, the hook only (install's link, dockerd's runc): --gpus
	# through the hook
	run bed "$d" ocidec install --runtime docker
	assert_success
	python3 - "$d/root/etc/docker/daemon.json" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1])); c["features"] = {"cdi": False}
		json.dump(c, open(sys.argv[1], "w"))
		EOF
	dockerd_start "$d"
	run dk info --format '{{.DefaultRuntime}} {{json .CDISpecDirs}}'
	assert_output 'runc []'
	d28_gpus "" "" "nvidia: no device 7: $d/dr/dev/demo7 not found (this host has 0, 1)"
	echo "# $DOCKER, --gpus through the hook, a missing GPU: ${lines[0]}" >&3
	run bed "$d" ocidec check
	assert_line --regexp '^info +docker: docker run --gpus, an NVIDIA GPU: through the hook nvidia-container-runtime-hook \(the running dockerd has no CDI-first --gpus'
	echo "# $DOCKER, CDI off, the hook: $(grep -E '^(ok|info|PROBLEM) +docker' <<<"$output" | tr '\n' ';')" >&3
	dockerd_stop "$d"
	# the package's way, CDI on: ocidec's runtime the default; AMD's --gpus
	# (Docker 28 registers it where amd-container-runtime is on its PATH,
	# and sets AMD_VISIBLE_DEVICES), NVIDIA's hook link taken away (an AMD
	# node: Docker picks either GPU driver when both are there)
	run bed "$d" ocidec install --runtime docker --set-as-default --enable-cdi
	assert_success
	printf '#!/bin/sh\nexec /usr/bin/ocidec-runtime "$@"\n' >"$d/root/usr/local/bin/amd-container-runtime"
	chmod 0755 "$d/root/usr/local/bin/amd-container-runtime"
	mv "$d/root/usr/local/bin/nvidia-container-runtime-hook" "$d/nvidia-hook.d28-aside"
	dockerd_start "$d"
	d28_gpus 'echo $AMD_VISIBLE_DEVICES; ' $'all\n' "ocidec runtime: amd: no device 7: $d/dr/dev/demo7 not found (this host has 0, 1)"
	echo "# $DOCKER, AMD's --gpus, a missing GPU: ${lines[0]}" >&3
	run dk run --rm --network none --device amd.com/gpu=1 ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	run dk run --rm --network none ocidec-test:1 sh -c 'ls /dev | grep -c demo'
	assert_output 0
	run bed "$d" ocidec check
	echo "# $DOCKER, the package's way, AMD: $(grep -E '^(ok|info|PROBLEM) +docker' <<<"$output" | tr '\n' ';')" >&3
	dockerd_stop "$d"
	mv "$d/nvidia-hook.d28-aside" "$d/root/usr/local/bin/nvidia-container-runtime-hook"
	run bed "$d" ocidec install --uninstall
	assert_success
	docker28_vendors_off "$d"
}

# as_rl CMD...: CMD as the user rl (rl_user) in the v2 bed, its HOME and
# XDG_RUNTIME_DIR set as a login sets them, its arguments as they are
as_rl() {
	bed "$V2" setpriv --reuid rl --regid rl --init-groups env HOME=/home/rl XDG_RUNTIME_DIR=/run/user/1500 "$@"
}

# rl_dockerd_start: Docker's rootless mode, as the user rl starts it
# (dockerd-rootless.sh: dockerd in RootlessKit's user and mount
# namespaces), reading that user's ~/.config/docker/daemon.json; its data,
# socket and pid file in $V2/rl-docker (RLD). The bed has no network: no
# network namespace of RootlessKit's (its host network, no port driver),
# no bridge, containers --network none. RLD_PID: the process it runs under
# (RootlessKit's parent); rl_dockerd_stop ends dockerd by its pid file and
# waits for RootlessKit to follow. rdk ARGS...: the user's docker client.
RLD=
rl_dockerd_start() {
	RLD=$V2/rl-docker
	mkdir -p "$RLD"
	chown 1500:1500 "$RLD"   # (rl: the bed shares this machine's user ids)
	# Docker 28's dockerd-rootless.sh refuses RootlessKit's host network
	# (Docker 26's takes it); the bed has no network for slirp4netns or
	# pasta: there RootlessKit is started as the script starts it, with
	# --net=host, and runs the script's own second half (dockerd)
	local launch=(env DOCKERD_ROOTLESS_ROOTLESSKIT_NET=host DOCKERD_ROOTLESS_ROOTLESSKIT_PORT_DRIVER=none)
	grep -q 'Unsupported RootlessKit network driver: \$net' "$V2/root/usr/share/docker.io/contrib/dockerd-rootless.sh" &&
		launch=(rootlesskit --state-dir=/run/user/1500/dockerd-rootless --net=host --port-driver=none
			--copy-up=/etc --copy-up=/run --propagation=rslave env _DOCKERD_ROOTLESS_CHILD=1)
	"$FIXTURES/bed.sh" exec "$V2" setpriv --reuid rl --regid rl --init-groups \
		env HOME=/home/rl XDG_RUNTIME_DIR=/run/user/1500 "${launch[@]}" \
		/usr/share/docker.io/contrib/dockerd-rootless.sh --data-root "$RLD/data" -H "unix://$RLD/docker.sock" \
		--pidfile "$RLD/docker.pid" --bridge=none --iptables=false --ip6tables=false --ip-forward=false \
		>"$RLD/dockerd.log" 2>&1 </dev/null &
	RLD_PID=$!
	# (info, not version: Docker 26.1.5's version handler dereferences
	# RootlessKit's network driver, which its host network has none of)
	wait_until -t 60 'rdk info >/dev/null 2>&1' && return 0
	echo "rootless dockerd did not come up: $(grep -m 5 -E 'level=(fatal|error)|panic' "$RLD/dockerd.log"; tail -n 5 "$RLD/dockerd.log")" >&2
	return 1
}

rdk() { as_rl docker -H "unix://$RLD/docker.sock" "$@"; }

rl_dockerd_stop() {
	local pid
	[ -n "$RLD" ] || return 0
	if pid=$(cat "$RLD/docker.pid" 2>/dev/null); then
		bed "$V2" sh -c "kill $pid; for i in \$(seq 100); do kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done" || true
	fi
	wait_until -t 10 '! kill -0 "$RLD_PID" 2>/dev/null' || kill "$RLD_PID" 2>/dev/null || true
	RLD=
}

@test "rootless $DOCKER (dockerd-rootless.sh, RootlessKit, cgroup v2): the user registers ocidec-runtime in its own ~/.config/docker/daemon.json, as ocidec-install(1) says; --runtime ocidec gives a container the demo vendor's devices, one that asks for nothing is untouched, a refusal is ocidec's line in docker run's error; CDI from the user's spec dir; --gpus (issue 37)" {
	rl_user
	bed "$V2" sh -c 'command -v rootlesskit && test -x /usr/share/docker.io/contrib/dockerd-rootless.sh' >/dev/null ||
		skip "the bed has no rootlesskit or no dockerd-rootless.sh (test/fixtures/testbed.sh installs rootlesskit and docker.io)"
	as_rl unshare -U true 2>/dev/null ||
		skip "no user namespace for an unprivileged user here (kernel.unprivileged_userns_clone, user.max_user_namespaces): rootless Docker needs one"
	# install is root's: the user is told what to write
	run as_rl ocidec install --runtime docker
	assert_failure 1
	assert_output --partial '"runtimes": {"ocidec": {"path": "/usr/bin/ocidec-runtime"}} (ocidec-install(1), ROOTLESS DOCKER)'
	# what the user does (ocidec-install(1), ROOTLESS DOCKER): the runtime
	# in its daemon.json; for CDI, its own spec dir (RootlessKit's copy of
	# /etc shows /etc/cdi as a link, which Docker 26's CDI scan skips)
	as_rl sh -c 'mkdir -p "$HOME/.config/docker" "$HOME/.config/cdi" && ocidec cdi -o "$HOME/.config/cdi" demo' >/dev/null
	as_rl sh -c 'cat >"$HOME/.config/docker/daemon.json"' <<-'EOF'
		{
		  "runtimes": { "ocidec": { "path": "/usr/bin/ocidec-runtime" } },
		  "features": { "cdi": true },
		  "cdi-spec-dirs": [ "/home/rl/.config/cdi" ]
		}
		EOF
	rl_dockerd_start
	run rdk info --format '{{json .SecurityOptions}} {{.CgroupDriver}} {{.Driver}} {{json .Runtimes.ocidec}}'
	echo "# rootless dockerd: ${output%%\{*} ..." >&3
	assert_output --regexp '"name=rootless".* \{"path":"/usr/bin/ocidec-runtime"'
	# (Docker 26 loads no OCI layout: the root file system imported)
	tar -C "$V2/b/rootfs" -c . | rdk import - ocidec-test:1 >/dev/null
	run rdk run --rm --network none --runtime ocidec -e OCI_DEMO=all ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run rdk run --rm --network none --runtime ocidec -e OCI_DEMO=1 ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	# nothing asked, nothing added; the container is in the user's
	# namespace (its root is rl, uid 1500, outside)
	run rdk run --rm --network none --runtime ocidec ocidec-test:1 \
		sh -c 'ls /dev | grep -c demo; grep -c " /usr/bin/demo-tool " /proc/self/mountinfo; set -- $(head -n 1 /proc/self/uid_map); echo "$1 $2 $3"'
	assert_output $'0\n0\n0 1500 1'
	# a refusal: ocidec's line in docker run's error
	run rdk run --rm --network none --runtime ocidec -e OCI_DEMO=7 ocidec-test:1 true
	assert_failure
	assert_output --partial "ocidec runtime: demo: no device 7: $V2/dr/dev/demo7 not found (this host has 0, 1)"
	echo "# rootless $DOCKER: $output" >&3
	# Docker's own CDI (its runc, no ocidec in the way)
	run rdk run --rm --network none --device ocidec.io/demo=0 ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
	rl_dockerd_stop
	# Docker's --gpus: the hook under NVIDIA's name on the user's dockerd's
	# PATH when it starts (the link root's ocidec install makes), the demo
	# vendor as nvidia.ini; the hook runs in the user's namespace
	mv "$V2/root/etc/ocidec/ocidec.d/nvidia.ini" "$V2/nvidia.ini.rl-aside"
	cp -p "$V2/nv/nvidia.ini" "$V2/root/etc/ocidec/ocidec.d/nvidia.ini"
	bed "$V2" ln -s /usr/bin/ocidec /usr/local/bin/nvidia-container-runtime-hook
	rl_dockerd_start
	run rdk run --rm --network none --gpus all ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	rl_dockerd_stop
	bed "$V2" rm /usr/local/bin/nvidia-container-runtime-hook
	mv "$V2/nvidia.ini.rl-aside" "$V2/root/etc/ocidec/ocidec.d/nvidia.ini"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	rm -rf "$V2/rl-docker" "$V2/root/home/rl/.config/docker" "$V2/root/home/rl/.config/cdi"
}

@test "$CONTAINERD CRI as kubelet drives it: after ocidec install the CRI plugin loads with every node setting; handler ocidec, CDI field and annotation give the devices; --uninstall restores config.toml (issue 21, finding 3)" {
	local beds=("$V2" "$HY") t
	[ "$BED_SUITE" = unstable ] && beds=("$HY")
	for d in "${beds[@]}"; do
		# the node's own CRI settings
		node_config "$d" >"$d/root/etc/containerd/config.toml"
		t=$(cri_table)
		cat >>"$d/root/etc/containerd/config.toml" <<-EOF
		  enable_cdi = true
		  [$t.containerd.runtimes.runc]
		    runtime_type = "io.containerd.runc.v2"
		  [$t.containerd.runtimes.runc.options]
		    NoNewKeyring = true
		EOF
		[ "$BED_SUITE" = unstable ] || printf '  [%s.registry]\n    config_path = "/etc/containerd/certs.d"\n' "$t" \
			>>"$d/root/etc/containerd/config.toml"
		cp "$d/root/etc/containerd/config.toml" "$d/orig.toml"
		bed "$d" containerd config dump >"$d/before.dump"
		run bed "$d" ocidec install --host-root / -c /etc/ocidec/ocidec.d --vendor demo --runtime containerd
		assert_success
		bed "$d" containerd config dump >"$d/after.dump"
		run diff "$d/before.dump" "$d/after.dump"
		refute_line --regexp '^< [^i]'                  # nothing of the node's lost
		assert_line --regexp '^> +NoNewKeyring = true$'  # runc's options inherited
		containerd_start "$d"
		run bed "$d" ctr -a "$d/ctrd/ctrd.sock" plugins ls
		# (containerd 2.x lists the CRI service with no platform)
		assert_line --regexp '^io\.containerd\.grpc\.v1 +cri +(linux/amd64|-) +ok *$'
		bed "$d" ctr -a "$d/ctrd/ctrd.sock" -n k8s.io images import "$d/image.tar" >/dev/null
		run pod "$d" --handler ocidec --env OCI_DEMO=all docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_success
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
		run pod "$d" --handler ocidec docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo'
		assert_output 0
		run pod "$d" --cdi ocidec.io/demo=0 docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
		run pod "$d" --ann cdi.k8s.io/ocidec=ocidec.io/demo=1 docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
		# ctr run through the shim as its runc binary (ctr sets CPU
		# weights, which this host's cgroup2 has no controller for)
		[ "$d" = "$HY" ] && run bed "$d" ctr -a "$d/ctrd/ctrd.sock" -n k8s.io run --rm --runc-binary /usr/local/ocidec/bin/ocidec-runtime \
			--env OCI_DEMO=1 docker.io/library/ocidec-test:1 "ctr-$$" sh -c "$DEMO_SEE_SHORT" &&
		assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
		containerd_stop "$d"
		run bed "$d" ocidec install --host-root / --uninstall
		assert_success
		cmp "$d/orig.toml" "$d/root/etc/containerd/config.toml"
	done
}

# default_runtime_pods DIR WHAT: with ocidec as containerd's default runtime
# and CDI on, pods as kubelet makes them: without a runtime handler they get
# what they ask for (and nothing when they ask for nothing), by variable and
# by the CRI's CDI field; an impossible request fails CreateContainer with
# ocidec's line in the CRI's error (printed, for the note)
default_runtime_pods() {
	local d=$1
	bed "$d" ctr -a "$d/ctrd/ctrd.sock" -n k8s.io images import "$d/image.tar" >/dev/null
	run pod "$d" --env OCI_DEMO=all docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_success
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemo1\ndemoctl\nopened'
	run pod "$d" docker.io/library/ocidec-test:1 sh -c 'ls /dev | grep -c demo'
	assert_output 0
	run pod "$d" --cdi ocidec.io/demo=1 docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	run pod "$d" --handler ocidec --env OCI_DEMO=0 docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
	assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
	run pod "$d" --env OCI_DEMO=7 docker.io/library/ocidec-test:1 true
	assert_failure
	assert_output --partial "ocidec runtime: demo: no device 7: $d/dr/dev/demo7 not found (this host has 0, 1)"
	echo "# $2: the CRI's error: $(grep -o 'details = "[^"]*' <<<"$output" | head -n 1)" >&3
}

@test "$CONTAINERD CRI, the package's way: ocidec install on the host itself --set-as-default --enable-cdi; a pod without a runtime handler gets its devices; a request that cannot be met fails with ocidec's line in the CRI's error; --uninstall gives config.toml back (issue 33, findings 1, 2)" {
	d=$(cri_bed)
	node_config "$d" >"$d/root/etc/containerd/config.toml"
	cp "$d/root/etc/containerd/config.toml" "$d/orig.toml"
	run bed "$d" ocidec install --runtime containerd --set-as-default --enable-cdi
	assert_success
	assert_line --partial "/usr/bin/ocidec registered, as it is installed"
	[ ! -e "$d/root/usr/local/ocidec" ]
	run bed "$d" containerd config dump
	# (containerd 2.x's dump quotes with ')
	assert_line --regexp "^ +default_runtime_name = [\"']ocidec[\"']\$"
	assert_line --regexp '^ +enable_cdi = true$'
	containerd_start "$d"
	default_runtime_pods "$d" "$CONTAINERD"
	containerd_stop "$d"
	run bed "$d" ocidec install --uninstall
	assert_success
	cmp "$d/orig.toml" "$d/root/etc/containerd/config.toml"
}

teardown() {
	[ -z "${SYSTEMD_ENGINES:-}" ] || systemd_engines_off "$SYSTEMD_ENGINES"
	rl_dockerd_stop
	if [ -n "${V2:-}" ] && [ -e "$V2/nvidia.ini.rl-aside" ]; then
		bed "$V2" rm -f /usr/local/bin/nvidia-container-runtime-hook
		mv "$V2/nvidia.ini.rl-aside" "$V2/root/etc/ocidec/ocidec.d/nvidia.ini"
	fi
	containerd2_out
	[ -z "${V2:-}" ] || docker28_vendors_off "$V2"
}

@test "containerd 2.x (Debian unstable's) CRI as kubelet drives it, the package's way: ocidec install on the host itself --set-as-default --enable-cdi; config version 3, and a node's version 2 config.toml with every setting kept; a pod without a runtime handler gets its devices; an impossible request fails with ocidec's line in the CRI's error; --uninstall gives config.toml back (issue 33)" {
	# the hybrid layout: containerd 2.x has no disable_cgroup, and this
	# host's cgroup2 has no CPU controller for what the CRI sets
	d=$HY
	containerd2_in "$d"
	run bed "$d" containerd --version
	assert_output --regexp '^containerd [^ ]+ 2\.'
	echo "# $output" >&3
	mkdir -p "$d/ctrd" "$d/logs"
	for version in 3 2; do
		if [ "$version" = 3 ]; then
			{
				containerd3_config "$d"
				printf '[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]\n  NoNewKeyring = true\n'
			} >"$d/root/etc/containerd/config.toml"
		else
			# 1.7's configuration (containerd 2.x has no disable_cgroup)
			{
				containerd_config "$d" | grep -v disable_cgroup
				printf '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]\n    NoNewKeyring = true\n'
			} >"$d/root/etc/containerd/config.toml"
		fi
		cp "$d/root/etc/containerd/config.toml" "$d/orig.toml"
		run bed "$d" ocidec install --runtime containerd --set-as-default --enable-cdi
		assert_success
		assert_line --partial "/usr/bin/ocidec registered, as it is installed"
		run bed "$d" containerd config dump
		assert_line --regexp "^ +default_runtime_name = 'ocidec'$"
		assert_line --regexp "^ +enable_cdi = true$"
		assert_line --regexp "^ +BinaryName = '/usr/bin/ocidec-runtime'$"
		# the node's own settings, read (the sandbox image is the only one
		# there is: this machine reaches no registry)
		assert_line --regexp "^ +sandbox = 'docker.io/library/ocidec-test:1'$"
		refute_line --partial 'level=warning'
		containerd_start "$d"
		default_runtime_pods "$d" "containerd 2.x, config version $version"
		containerd_stop "$d"
		run bed "$d" ocidec install --uninstall
		assert_success
		cmp "$d/orig.toml" "$d/root/etc/containerd/config.toml"
	done
}

@test "deploy/kubernetes with OCIDEC_RUNTIME=containerd (the shim), through containerd's CRI: a pod that sets NVIDIA_VISIBLE_DEVICES itself gets nothing; the device plugin's mounts give exactly their GPU; its own privileged pod keeps the environment (issue 22, finding 3)" {
	d=$(cri_bed)
	K=$BATS_TEST_DIRNAME/../deploy/kubernetes
	mkdir -p "$d/nvk"
	node_config "$d" >"$d/root/etc/containerd/config.toml"
	# NVIDIA's file as the DaemonSet installs it, the demo vendor standing
	# in for the GPUs: its device-list dir is the shipped one's
	sed "/^activation_flag/a $(grep '^device_list_dir' "$BATS_TEST_DIRNAME/../conf/nvidia.ini")" \
		"$d/nv/nvidia.ini" >"$d/nvk/nvidia.ini"
	chmod 0644 "$d/nvk/nvidia.ini"
	# the DaemonSet's args, its /host being the bed's /, the driver
	# container's root at /run/nvidia/driver
	mapfile -t args < <("$FIXTURES/k8s-args.py" "$K/ocidec-toolkit.yaml" OCIDEC_RUNTIME=containerd)
	handler=$(/usr/bin/python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["handler"])' "$K/shim/runtimeclass.yaml")
	inst=()
	for a in "${args[@]}"; do
		case $a in
		--wait) ;;
		--host-root=/host) inst+=(--host-root=/) ;;
		*) inst+=("$a") ;;
		esac
	done
	bed "$d" sh -c 'mkdir -p /run/nvidia/driver && mount --bind "$1/dr" /run/nvidia/driver' sh "$d"
	run bed "$d" ocidec install -c "$d/nvk" "${inst[@]}"
	assert_success
	containerd_start "$d"
	bed "$d" ctr -a "$d/ctrd/ctrd.sock" -n k8s.io images import "$d/image.tar" >/dev/null
	see='ls /dev | grep demo; true'
	# a tenant's pod: the variable, the vendor's annotation on the pod, a
	# CUDA image's all: nothing, and its log (kubectl logs) says why
	run pod "$d" --handler "$handler" --env NVIDIA_VISIBLE_DEVICES=all --pod-ann ocidec.io/nvidia=all \
		docker.io/library/ocidec-test:1 sh -c "$see"
	assert_success
	assert_output "ocidec runtime: warn: nvidia: NVIDIA_VISIBLE_DEVICES=all ignored: the vendor takes no device selection from 'env' for a container without CAP_SYS_ADMIN (unprivileged_selection)"
	# the device plugin's volume-mounts allocation (kubelet passes its
	# mounts and env): that GPU, and the image's all does not widen it
	run pod "$d" --handler "$handler" --mount /dev/null:/var/run/nvidia-container-devices/1 \
		--env NVIDIA_VISIBLE_DEVICES=/var/run/nvidia-container-devices docker.io/library/ocidec-test:1 sh -c "$see"
	assert_success
	assert_output $'demo1\ndemoctl'
	# the device plugin's own pod (privileged, CAP_SYS_ADMIN): its env
	run pod "$d" --handler "$handler" --cap-add SYS_ADMIN --env NVIDIA_VISIBLE_DEVICES=all \
		docker.io/library/ocidec-test:1 sh -c "$see"
	assert_success
	assert_output $'demo0\ndemo1\ndemoctl'
	containerd_stop "$d"
	run bed "$d" ocidec install --host-root / --uninstall
	assert_success
	bed "$d" umount /run/nvidia/driver
}

@test "a spec in nvidia-ctk's shape, its hooks answered by the installed nvidia-cdi-hook (ocidec): podman 5 with crun and runc, containerd's CRI (the CDI field), as ocidec's own spec (issue 25); NVIDIA's DRA driver's claim spec through the CRI (issue 50)" {
	for d in "$V2" "$HY"; do
		# nvidia-ctk's shape (test/fixtures/nvidia-ctk-spec.py), its hooks
		# the link make install put in the bed
		/usr/bin/python3 "$FIXTURES/nvidia-ctk-spec.py" "$d/dr" /usr/libexec/ocidec/nvidia-cdi-hook \
			>"$d/root/etc/cdi/nvidia.json"
		bed "$d" test -L /usr/libexec/ocidec/nvidia-cdi-hook
	done
	for rt in "$V2 crun" "$V2 runc" "$HY runc"; do
		set -- $rt
		run bed "$1" podman run --rm --runtime "$2" --device nvidia.com/gpu=1 --rootfs "$1/b/rootfs" sh -c "$DEMO_SEE_SHORT"
		assert_success
		assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
		# ocidec's own spec: the same
		run bed "$1" podman run --rm --runtime "$2" --device ocidec.io/demo=1 --rootfs "$1/b/rootfs" sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
	done
	local beds=("$V2" "$HY")
	[ "$BED_SUITE" = unstable ] && beds=("$HY")
	for d in "${beds[@]}"; do
		# the node's config.toml as the tests before left it, put back after
		cp -p "$d/root/etc/containerd/config.toml" "$d/ctk-keep.toml" 2>/dev/null || rm -f "$d/ctk-keep.toml"
		node_config "$d" >"$d/root/etc/containerd/config.toml"
		printf '  enable_cdi = true\n  cdi_spec_dirs = ["/etc/cdi"]\n' >>"$d/root/etc/containerd/config.toml"
		containerd_start "$d"
		bed "$d" ctr -a "$d/ctrd/ctrd.sock" -n k8s.io images import "$d/image.tar" >/dev/null
		run pod "$d" --cdi nvidia.com/gpu=0 docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
		run pod "$d" --cdi ocidec.io/demo=0 docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo0\ndemoctl\nopened'
		# NVIDIA's DRA driver's claim spec (its --nvidia-cdi-hook-path at
		# ocidec's nvidia-cdi-hook), as kubelet passes its device from a
		# prepared claim: the claim's device, every hook answered (issue 50)
		/usr/bin/python3 "$FIXTURES/nvidia-ctk-spec.py" "$d/dr" /usr/libexec/ocidec/nvidia-cdi-hook --dra-claim 5d1f0a2e \
			>"$d/root/etc/cdi/k8s.gpu.nvidia.com-claim_5d1f0a2e.json"
		run pod "$d" --cdi k8s.gpu.nvidia.com/claim=5d1f0a2e-gpu-1 docker.io/library/ocidec-test:1 sh -c "$DEMO_SEE_SHORT"
		assert_output $'demo-tool: the answer is 42\ndemo1\ndemoctl\nopened'
		containerd_stop "$d"
		rm -f "$d/root/etc/cdi/nvidia.json" "$d/root/etc/cdi/k8s.gpu.nvidia.com-claim_5d1f0a2e.json" \
			"$d/root/etc/containerd/config.toml"
		[ ! -e "$d/ctk-keep.toml" ] || mv "$d/ctk-keep.toml" "$d/root/etc/containerd/config.toml"
	done
	rm -f "$V2/root/etc/cdi/nvidia.json"
}

@test "ocidec check: each engine's registration as the engine reads it, each problem with its fix" {
	d=$V2
	run bed "$d" ocidec check
	assert_line --regexp '^ok +demo: driver_root .*: 3 device nodes'
	assert_line --regexp '^info +vendors: not here: .*nvidia, .*\(nothing under /\)'
	assert_line --regexp '^ok +podman: the hook /usr/libexec/oci/hooks.d/ocidec-hook, from /usr/share/containers/oci/hooks.d/ocidec.json'
	# the hooks.d file where podman does not look (what install wrote before)
	bed "$d" sh -c 'mkdir -p /etc/containers/oci/hooks.d && mv /usr/share/containers/oci/hooks.d/ocidec.json /etc/containers/oci/hooks.d/'
	run bed "$d" ocidec check
	assert_failure 1
	assert_line "PROBLEM  podman: /etc/containers/oci/hooks.d/ocidec.json: podman does not read /etc/containers/oci/hooks.d (its hooks_dir is elsewhere)"
	assert_line "         fix: ocidec install --runtime podman"
	bed "$d" mv /etc/containers/oci/hooks.d/ocidec.json /usr/share/containers/oci/hooks.d/
	# containerd 1.7 with a drop-in that holds only a runtime (finding 3):
	# the CRI section replaced, the default runtime gone
	mkdir -p "$d/root/etc/containerd/conf.d"
	printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.x]\n  runtime_type = "io.containerd.runc.v2"\n' \
		>"$d/root/etc/containerd/conf.d/x.toml"
	cp "$d/root/etc/containerd/config.toml" "$d/keep.toml"
	printf 'version = 2\nimports = ["/etc/containerd/conf.d/x.toml"]\nroot = "%s"\nstate = "%s"\n[grpc]\n  address = "%s"\n' \
		"$d/ctrd/root" "$d/ctrd/state" "$d/ctrd/ctrd.sock" >"$d/root/etc/containerd/config.toml"
	run bed "$d" ocidec check --json
	if [ "$BED_SUITE" = unstable ]; then
		# containerd 2.x merges an import into the table it names: the
		# default runtime stays, and check says nothing of it
		run python3 -c 'import json,sys; [print(c["status"], c["detail"]) for c in json.load(sys.stdin)["checks"] if c["check"] == "containerd"]' <<<"$output"
		refute_line --partial 'has no runtime table'
	else
		assert_failure 1
		run python3 -c 'import json,sys; [print(c["status"], c["detail"]) for c in json.load(sys.stdin)["checks"] if c["check"] == "containerd"]' <<<"$output"
		assert_line 'problem default_runtime_name "runc" has no runtime table: the CRI plugin does not load, no pod starts'
	fi
	rm "$d/root/etc/containerd/conf.d/x.toml"
	# a runtime that passes a pod's own ocidec.io annotations to its containers (issue 22)
	printf 'version = 2\nroot = "%s"\nstate = "%s"\n[grpc]\n  address = "%s"\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n  pod_annotations = ["ocidec.io/*"]\n' \
		"$d/ctrd/root" "$d/ctrd/state" "$d/ctrd/ctrd.sock" >"$d/root/etc/containerd/config.toml"
	run bed "$d" ocidec check
	assert_line --regexp '^PROBLEM  containerd: a runtime.s pod_annotations pass a pod.s own ocidec.io/ annotations to its containers: any pod selects devices with them \(pod_annotations = \[["'"'"']ocidec.io/\*["'"'"']\]\)$'
	# installed, then containerd started, then its configuration changed
	printf 'version = 2\nroot = "%s"\nstate = "%s"\n[grpc]\n  address = "%s"\n[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n' \
		"$d/ctrd/root" "$d/ctrd/state" "$d/ctrd/ctrd.sock" >"$d/root/etc/containerd/config.toml"
	bed "$d" ocidec install --host-root / -c /etc/ocidec/ocidec.d --vendor demo --runtime containerd >/dev/null
	containerd_start "$d"
	run bed "$d" ocidec check
	assert_line --regexp '^ok +containerd: runtime "ocidec" \(io.containerd.runc.v2\): /usr/local/ocidec/bin/ocidec-runtime'
	refute_line --partial "systemctl restart containerd"
	sleep 1
	touch "$d/root/etc/containerd/config.toml"
	run bed "$d" ocidec check
	assert_line "PROBLEM  containerd: containerd started before its configuration last changed: it runs the old one"
	# (no systemd, no init script for containerd in this bed)
	assert_line "         do: restart containerd the way this host starts it (no systemd, no init script of its own here)"
	containerd_stop "$d"
	bed "$d" ocidec install --host-root / --uninstall >/dev/null
	cp "$d/keep.toml" "$d/root/etc/containerd/config.toml"
}

# systemd_engines_on DIR: the bed's Debian units for containerd and Docker
# (masked by bed-setup.sh) run by its systemd as a node runs them: their
# packaged units, with what this machine refuses taken out (a negative
# OOMScoreAdjust needs CAP_SYS_RESOURCE; bridge and iptables), the
# containerd configuration of containerd_config on containerd's default
# socket. systemd_engines_off DIR: stopped, masked again, every file back.
systemd_engines_on() {
	local d=$1 u
	SYSTEMD_ENGINES=$d
	for u in containerd.service docker.service docker.socket; do rm -f "$d/root/etc/systemd/system/$u"; done
	for u in containerd docker; do
		mkdir -p "$d/root/etc/systemd/system/$u.service.d"
		printf '[Service]\nOOMScoreAdjust=0\n' >"$d/root/etc/systemd/system/$u.service.d/bed.conf"
	done
	node_config "$d" | sed "s|^  address = .*|  address = \"/run/containerd/containerd.sock\"|" \
		>"$d/root/etc/containerd/config.toml"
	mkdir -p "$d/docker"
	echo "DOCKER_OPTS=\"--data-root $d/docker/data --bridge=none --iptables=false --ip6tables=false --ip-forward=false\"" \
		>"$d/root/etc/default/docker"
	bed "$d" systemctl daemon-reload
	bed "$d" systemctl start containerd.service docker.service
}

systemd_engines_off() {
	local d=$1 u
	bed "$d" systemctl stop docker.service docker.socket containerd.service || true
	bed "$d" ocidec install --uninstall >/dev/null || true
	for u in containerd.service docker.service docker.socket; do ln -sf /dev/null "$d/root/etc/systemd/system/$u"; done
	rm -rf "$d/root/etc/systemd/system/containerd.service.d" "$d/root/etc/systemd/system/docker.service.d" \
		"$d/root/etc/default/docker" "$d/root/etc/containerd/config.toml" "$d/root/etc/docker/daemon.json"
	bed "$d" systemctl daemon-reload || true
	SYSTEMD_ENGINES=
}

# check_fixes DIR: every fix `ocidec check` prints in the bed DIR (its JSON's
# "fix", what the text prints after "fix:"), run as printed, each must
# succeed, and the line it fixes must be gone from the check after; rounds
# until check prints no fix (a fix may bring the next step: a runtime
# registered, then the daemon to reload). Each fix is printed (for the
# note) and added to FIXES.
check_fixes() {
	local d=$1 round fixes what detail fix
	for round in 1 2 3 4; do
		run bed "$d" ocidec check --json
		fixes=$(python3 -c 'import json, sys
for c in json.load(sys.stdin)["checks"]:
    if "fix" in c: print(c["check"] + "\t" + c["detail"] + "\t" + c["fix"])' <<<"$output")
		[ -n "$fixes" ] || return 0
		while IFS=$'\t' read -r what detail fix; do
			echo "#   $what: $fix" >&3
			run bed "$d" sh -c "$fix"
			[ "$status" -eq 0 ] || fail "the fix for \"$detail\" failed as pasted: $fix: $output"
			FIXES+=("$fix")
		done <<<"$fixes"
		# (a reload, SIGHUP, is done when dockerd has read the file
		# again, a moment after the command returns: 10 s at most)
		while IFS=$'\t' read -r what detail fix; do
			DETAIL=$detail wait_until -t 10 'bed "$d" ocidec check --json | python3 -c '"'"'import json, os, sys
sys.exit(any(c["detail"] == os.environ["DETAIL"] for c in json.load(sys.stdin)["checks"]))'"'"'' ||
				fail "after \"$fix\", check still says: $detail"
		done <<<"$fixes"
	done
	fail "check still prints fixes after 4 rounds: $fixes"
}

@test "check's fixes work as pasted: on a node whose systemd runs Debian's containerd and Docker, each fix: line check prints, run in the state it describes, makes check report it fixed, until it says ready; a fresh node, a runtime binary gone, a stale CDI spec, --gpus without its hook, containerd 1.x's drop-in shadowing an edit (issue 33, finding 4)" {
	d=$SD
	FIXES=()
	systemd_engines_on "$d"
	run bed "$d" systemctl is-active containerd.service docker.service
	assert_output $'active\nactive'
	# the package installed, nothing registered with the engines: not ready
	# while docker run gets no vendor (issue 47, finding 3)
	run bed "$d" ocidec check
	if [ "$BED_SUITE" = unstable ]; then
		# Docker 28 has CDI on by default: docker run --device gets
		# ocidec's specs with no daemon.json, and check says so
		assert_line --regexp "^info +docker: dockerd runs without /etc/docker/daemon.json: docker run gets no vendor but through CDI"
	else
		assert_failure 1
		assert_line --regexp "^PROBLEM  docker: .*no docker run gets a vendor \(--gpus: \"could not select device driver\"\)$"
	fi
	echo "# a fresh node:" >&3
	check_fixes "$d"
	run bed "$d" ocidec check
	assert_success
	assert_line "0 problems: ready"
	refute_line --partial "fix:"
	# what the fixes did, seen by the engines themselves
	run bed "$d" docker info --format '{{json .Runtimes.ocidec}} {{.DefaultRuntime}}'
	assert_output --partial '"path":"/usr/bin/ocidec-runtime"'
	run bed "$d" sh -c 'containerd config dump | grep -c "BinaryName = [\"'"'"']/usr/bin/ocidec-runtime[\"'"'"']"'
	assert_output 1
	# Docker's runtime names a binary gone (an earlier toolkit's prefix)
	echo "# a runtime binary gone:" >&3
	python3 - "$d/root/etc/docker/daemon.json" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1])); c["runtimes"]["ocidec"]["path"] = "/usr/local/ocidec/bin/ocidec-runtime"
		json.dump(c, open(sys.argv[1], "w"))
	EOF
	check_fixes "$d"
	# ocidec made the default runtime, dockerd not told (a reload does)
	echo "# the default runtime changed:" >&3
	bed "$d" ocidec install --runtime docker --set-as-default >/dev/null
	check_fixes "$d"
	run bed "$d" docker info --format '{{.DefaultRuntime}}'
	assert_output ocidec
	# a spec of ocidec's gone stale (the driver changed under it)
	echo "# a stale CDI spec:" >&3
	sed -i 's|libdemo.so.1.0|libdemo.so.0.9|' "$d/root/etc/cdi/ocidec.io-demo.json"
	check_fixes "$d"
	# Docker's --gpus without the hook it runs
	echo "# --gpus without its hook:" >&3
	rm "$d/root/usr/local/bin/nvidia-container-runtime-hook"
	check_fixes "$d"
	[ -L "$d/root/usr/local/bin/nvidia-container-runtime-hook" ]
	# containerd 1.x: the administrator's CRI edit after install, shadowed
	echo "# containerd's drop-in shadowing an edit:" >&3
	printf '  max_container_log_line_size = 4096\n' >>"$d/root/etc/containerd/config.toml"
	check_fixes "$d"
	run bed "$d" sh -c 'containerd config dump | grep -c "max_container_log_line_size = 4096"'
	assert_output 1
	run bed "$d" ocidec check
	assert_success
	assert_line "0 problems: ready"
	# every kind of fix ran: install per engine, the exact cdi command,
	# systemd's reload and restart of each daemon
	for f in "ocidec install --runtime docker" "ocidec install --runtime containerd" \
		"ocidec cdi -o /etc/cdi/ocidec.io-demo.json demo" "systemctl reload docker" \
		"systemctl restart docker" "systemctl restart containerd"; do
		printf '%s\n' "${FIXES[@]}" | grep -qF -- "$f" || fail "no fix ran: $f (${FIXES[*]})"
	done
}

@test "install --restart again and again never trips systemd's start limit (Docker's unit: 3 starts a minute): the units are reset first, docker and containerd stay up and answer (issue 47, finding 4)" {
	d=$SD
	systemd_engines_on "$d"
	for i in 1 2 3 4; do
		run bed "$d" ocidec install --runtime docker,containerd --set-as-default --restart
		assert_success
		assert_line --partial "restarted docker"
		run bed "$d" ocidec install --uninstall --restart
		assert_success
	done
	run bed "$d" systemctl is-active containerd.service docker.service
	assert_output $'active\nactive'
	run bed "$d" docker info --format '{{.DefaultRuntime}}'
	assert_output runc
}

@test "check: an engine systemd gave up on (its start limit hit, as restarts in a row do) is a problem while it does not run, and its fix as pasted starts it; install --restart waits until the engine answers (issue 47, findings 3, 4)" {
	d=$SD
	FIXES=()
	systemd_engines_on "$d"
	run bed "$d" ocidec install --runtime docker,containerd --set-as-default --restart
	assert_success
	run bed "$d" ocidec check
	assert_success
	# restarts in a row: Docker's unit allows 3 a minute, containerd's
	# systemd's default 5 in 10 s
	for i in 1 2 3 4 5; do bed "$d" systemctl restart docker.service >/dev/null 2>&1 || true; done
	for i in 1 2 3 4 5 6 7; do bed "$d" systemctl restart containerd.service >/dev/null 2>&1 || true; done
	bed "$d" systemctl stop docker.service >/dev/null 2>&1 || true
	run bed "$d" systemctl is-active containerd.service docker.service
	assert_output $'failed\nfailed'
	run bed "$d" ocidec check
	assert_failure 1
	assert_line --regexp "^PROBLEM  docker: docker.service failed \(systemd; journalctl -u docker.service says why\): dockerd does not run"
	assert_line --regexp "^PROBLEM  containerd: containerd.service failed \(systemd; journalctl -u containerd.service says why\): containerd does not run"
	assert_line --partial "fix: systemctl reset-failed containerd.service && systemctl start containerd.service"
	check_fixes "$d"
	run bed "$d" systemctl is-active containerd.service docker.service
	assert_output $'active\nactive'
	run bed "$d" ocidec check
	assert_success
	# a dockerd that runs and does not answer on its socket (stopped here,
	# as a hung one): a problem, its restart the fix
	bed "$d" sh -c 'kill -STOP $(cat /var/run/docker.pid)'
	run bed "$d" ocidec check
	assert_failure 1
	assert_line "PROBLEM  docker: dockerd runs but does not answer on /run/docker.sock (3 s): every docker command fails (its log says why: journalctl -u docker.service)"
	assert_line "         fix: systemctl restart docker"
	check_fixes "$d"
	run bed "$d" ocidec check
	assert_success
	# install --restart returns with the engines answering: the next
	# command finds them without a wait
	run bed "$d" sh -c 'ocidec install --uninstall --restart && docker info --format "{{.DefaultRuntime}}" && ctr --address /run/containerd/containerd.sock version >/dev/null && echo answered'
	assert_success
	assert_line runc
	assert_line answered
	# one that does not come back is said plainly, exit 1: a dockerd
	# whose unit starts nothing that answers (its start stands in for a
	# daemon that hangs before its socket)
	mkdir -p "$d/root/etc/systemd/system/docker.service.d"
	printf '[Service]\nType=simple\nExecStart=\nExecStart=/bin/sleep 1000\n' >"$d/root/etc/systemd/system/docker.service.d/hang.conf"
	bed "$d" systemctl daemon-reload
	bed "$d" systemctl stop docker.service docker.socket
	run bed "$d" ocidec install --runtime docker --set-as-default --restart --restart-timeout 5
	assert_failure 1
	assert_line --partial "--restart: dockerd does not answer on its socket 5 s after: no container starts there; see why in its log (journalctl -u docker.service), then start it"
	rm "$d/root/etc/systemd/system/docker.service.d/hang.conf"
	bed "$d" systemctl daemon-reload
	bed "$d" ocidec install --uninstall --restart >/dev/null
	run bed "$d" systemctl is-active docker.service
	assert_output active
}

# dockerd_by_hand DIR: dockerd as a node without systemd starts it (its
# default socket and pid file), in the background
dockerd_by_hand() {
	local d=$1
	mkdir -p "$d/docker"
	bed "$d" sh -c "exec dockerd -p /var/run/docker.pid --data-root $d/docker/hand-data --bridge=none --iptables=false \
		--ip6tables=false --ip-forward=false >>$d/docker-hand.log 2>&1" &
	wait_until -t 30 'bed "$d" docker version >/dev/null 2>&1'
}

@test "check's fixes work as pasted on a node without systemd or init script (dockerd started by hand): kill -HUP as printed reloads it; a restart is said in words, and done by hand is seen (issue 33, finding 4)" {
	# (Debian's init script for Docker raises the open files limit past
	# what this machine allows: set aside, the node starts dockerd itself)
	d=$HY
	FIXES=()
	[ ! -e "$d/root/run/systemd/system" ]
	mv "$d/root/etc/init.d/docker" "$d/docker.init"
	dockerd_by_hand "$d"
	check_fixes "$d"
	# the --gpus hook is looked up when dockerd starts: a restart, which no
	# command here does
	run bed "$d" ocidec check
	assert_failure 1
	assert_line --regexp '^PROBLEM  docker: the running dockerd .*started before nvidia-container-runtime-hook was there'
	assert_line "         do: restart dockerd the way this host starts it (no systemd, no init script of its own here)"
	bed "$d" sh -c 'kill "$(cat /var/run/docker.pid)"; while [ -e /var/run/docker.pid ]; do sleep 0.1; done'
	dockerd_by_hand "$d"
	run bed "$d" ocidec check
	assert_success
	assert_line "0 problems: ready"
	# the default runtime: a reload, by the pid file, as printed
	bed "$d" ocidec install --runtime docker --set-as-default >/dev/null
	check_fixes "$d"
	run bed "$d" docker info --format '{{.DefaultRuntime}}'
	assert_output ocidec
	printf '%s\n' "${FIXES[@]}" | grep -qxF 'kill -HUP "$(cat /var/run/docker.pid)"' || fail "no kill -HUP ran: ${FIXES[*]}"
	bed "$d" sh -c 'kill "$(cat /var/run/docker.pid)"; while [ -e /var/run/docker.pid ]; do sleep 0.1; done'
	bed "$d" ocidec install --uninstall >/dev/null
	mv "$d/docker.init" "$d/root/etc/init.d/docker"
}
