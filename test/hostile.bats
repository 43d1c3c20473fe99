#!/usr/bin/env bats
# Hostile images: a rootfs built to make the hook write or mount outside it.
# Each test watches a host directory the image points at (a fingerprint of
# names, types, modes and contents, before and after) and the host's mount
# table, and runs with both resolvers (openat2, and the checked walk).

load helpers

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	HOST=$BATS_TEST_TMPDIR/host
	mkdir -p "$HOST/sub"
	echo "host file" >"$HOST/file"
	echo "host conf" >"$HOST/demo.conf"
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-hostile-$$-$BATS_TEST_NUMBER
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
	[ -z "${PID:-}" ] || kill -9 "$PID" 2>/dev/null || true
	if mountpoint -q "$HOST/shared" 2>/dev/null; then umount -R "$HOST/shared"; fi
	if [ -n "${MPS_MOUNT:-}" ] && mountpoint -q "$MPS_MOUNT"; then umount "$MPS_MOUNT"; fi
	[ -z "${LOOP:-}" ] || losetup -d "$LOOP"
	[ -z "${PSTORE:-}" ] || podman --root "$PSTORE/root" --runroot "$PSTORE/run" --storage-driver overlay \
		system reset -f >/dev/null 2>&1 || true
}

@test "a target's parent is an absolute symlink to a host directory" {
	for mode in openat2 fallback; do
		attack "$mode" 'ln -s "$HOST" opt'
		assert_success
		assert_output "demo-tool: the answer is 42"
		[ -d "$B/rootfs/$HOST/demo/lib" ]   # made inside the rootfs, where the link points there
	done
}

@test "a relative symlink climbing out with .." {
	for mode in openat2 fallback; do
		attack "$mode" 'mkdir -p usr && ln -s "../../../../../../../../../../..$HOST/sub" usr/bin'
		assert_success
		assert_output "demo-tool: the answer is 42"
	done
}

@test "a symlink loop in a target's path fails the start, harmlessly" {
	for mode in openat2 fallback; do
		attack "$mode" 'mkdir -p etc && ln -s loop etc/demo && mv etc/demo etc/loop && ln -s loop etc/demo'
		assert_failure
		assert_output --partial "ocidec hook: container $ID: /etc/demo"
		assert_output --regexp "(Symbolic link loop|Too many levels of symbolic links)"
	done
}

@test "a symlink to /proc/self/root is refused" {
	for mode in openat2 fallback; do
		attack "$mode" 'mkdir -p usr && ln -s "/proc/self/root$HOST" usr/share'
		assert_failure
		assert_output --regexp "ocidec hook: container $ID: /(usr/share|proc/self|proc: leads out)"
	done
}

@test "a target that is a symlink to a host file is replaced, the host file untouched" {
	for mode in openat2 fallback; do
		attack "$mode" 'mkdir -p etc/demo && ln -s "$HOST/demo.conf" etc/demo/demo.conf && ln -s /../../../..$HOST/file opt-file' 'cat /etc/demo/demo.conf'
		assert_success
		assert_output "answer = 42"
	done
}

@test "a target swapped for a symlink while the hook runs" {
	for mode in openat2 fallback; do
		for round in 1 2 3; do
			rm -rf "$B"
			HOOK="$OCIDEC ocidec-hook -c $CFG --resolver $mode prestart" \
				"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- true >/dev/null
			before=$(fingerprint "$HOST")
			mounts=$(host_mounts)
			# flip /opt/demo between a directory and a symlink to the host
			( cd "$B/rootfs" && mkdir -p opt; end=$((SECONDS + 3))
			  while [ $SECONDS -lt $end ]; do
				rm -rf opt/demo 2>/dev/null || true; mkdir -p opt/demo/lib 2>/dev/null || true
				rm -rf opt/demo 2>/dev/null || true; ln -s "$HOST" opt/demo 2>/dev/null || true
			  done; true ) &
			racer=$!
			for i in 1 2 3 4 5; do
				(cd "$B" && timeout 60 runc run "$ID-$i" >/dev/null 2>&1) || true
				runc delete -f "$ID-$i" >/dev/null 2>&1 || true
			done
			wait "$racer"
			assert_equal "$(fingerprint "$HOST")" "$before"
			assert_equal "$(host_mounts)" "$mounts"
		done
	done
}

@test "LD_PRELOAD and LD_LIBRARY_PATH in the image's env never reach the hook" {
	mkdir -p "$BATS_TEST_TMPDIR/evil"
	printf '#include <stdio.h>\n__attribute__((constructor)) static void f(void) { FILE *m = fopen("%s/marker", "w"); if (m) fclose(m); }\n' \
		"$BATS_TEST_TMPDIR" | gcc -shared -fPIC -x c - -o "$BATS_TEST_TMPDIR/evil/libc.so.6"
	cp "$BATS_TEST_TMPDIR/evil/libc.so.6" "$BATS_TEST_TMPDIR/evil/evil.so"
	rm -rf "$B"
	HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" OCI_DEMO=all \
		"LD_PRELOAD=$BATS_TEST_TMPDIR/evil/evil.so" "LD_LIBRARY_PATH=$BATS_TEST_TMPDIR/evil" -- true >/dev/null
	run bash -c "cd '$B' && runc run '$ID' 2>&1"
	assert_success
	assert_not_exist "$BATS_TEST_TMPDIR/marker"
}

@test "a container ld.so.conf naming /proc/self/... or a host path adds nothing from the host" {
	mkdir -p "$HOST/lib"
	gcc -shared -fPIC -o "$HOST/lib/libhostonly.so.1" "$FIXTURES/libdemo.c" -Wl,-soname,libhostonly.so.1
	for mode in openat2 fallback; do
		attack "$mode" "printf '%s\n' /proc/self/root$HOST/lib $HOST/lib 'include /proc/self/root$HOST/*.conf' >etc/ld.so.conf" 'demo-tool'
		assert_success
		run "$OCIDEC" ldcache -p -r "$B/rootfs"
		refute_output --partial libhostonly
		assert_output --partial libdemo.so.1
	done
}

# ---- round two: one test per class of the second attack review ----

@test "1. the musl path file: a link to a 0600 file, a volume or procfs is never read back into the container" {
	mkdir -p "$BATS_TEST_TMPDIR/secret"
	echo "s3cret-volume" >"$BATS_TEST_TMPDIR/secret/key"
	chmod 0600 "$BATS_TEST_TMPDIR/secret/key"
	for mode in openat2 fallback; do
		for target in /vol/key /proc/timer_list /root/key; do
			EDIT='push @{$c->{mounts}}, {destination => "/vol", type => "bind", source => "'"$BATS_TEST_TMPDIR/secret"'", options => ["rbind", "ro"]}; $c->{process}{user} = {uid => 1000, gid => 1000};' \
				attack "$mode" "cp -L /lib/ld-musl-x86_64.so.1 lib/ && mkdir -p vol root && echo s3cret-rootfs >root/key && chmod 0600 root/key && chmod 0700 root && ln -s $target etc/ld-musl-x86_64.path" \
				'cat /etc/ld-musl-x86_64.path; true'
			refute_output --partial s3cret
			refute_output --partial "Timer List"
			if [ -f "$B/rootfs/etc/ld-musl-x86_64.path" ] && [ ! -L "$B/rootfs/etc/ld-musl-x86_64.path" ]; then
				run cat "$B/rootfs/etc/ld-musl-x86_64.path"
				refute_output --partial s3cret
				refute_output --partial "Timer List"
			fi
		done
	done
}

@test "1. an ld.so.conf include of procfs or of a volume is not read" {
	mkdir -p "$BATS_TEST_TMPDIR/vol" "$BATS_TEST_TMPDIR/libs"
	echo "/opt/evil" >"$BATS_TEST_TMPDIR/vol/evil.conf"
	for l in evil host; do
		gcc -shared -fPIC -o "$BATS_TEST_TMPDIR/libs/lib$l.so.1" "$FIXTURES/libdemo.c" -Wl,-soname,lib$l.so.1
	done
	h=$(cat /proc/sys/kernel/hostname)
	for mode in openat2 fallback; do
		# procfs's hostname file names a directory of the image; the volume's
		# conf names another: neither may be read
		EDIT='push @{$c->{mounts}}, {destination => "/vol", type => "bind", source => "'"$BATS_TEST_TMPDIR/vol"'", options => ["rbind", "ro"]}' \
			attack "$mode" "mkdir -p vol opt/evil '$h' && cp '$BATS_TEST_TMPDIR/libs/libevil.so.1' opt/evil/ && cp '$BATS_TEST_TMPDIR/libs/libhost.so.1' '$h/' && printf 'include /proc/sys/kernel/hostname\ninclude /vol/*.conf\n' >etc/ld.so.conf"
		assert_success
		assert_output "demo-tool: the answer is 42"
		run "$OCIDEC" ldcache -p -r "$B/rootfs"
		assert_output --partial libdemo.so.1
		refute_output --partial libevil
		refute_output --partial libhost
	done
}

@test "2. a symlink in the driver root is followed inside it, never on the host (mount, cgroup rule, list, relabel)" {
	X=$BATS_TEST_TMPDIR/hostx
	mkdir -p "$X" "$(dirname "$DR$X")"
	mknod -m 0666 "$X/democtl" b 7 0     # the host's, where the link points on the host
	mv "$DR/dev" "$DR$X"                 # the driver's 10:237, where it points inside
	ln -s "$X" "$DR/dev"
	sed -i "/^\[vendor\]/a selinux_device_context = $DEVCTX" "$CFG/demo.ini"
	for mode in openat2 fallback; do
		attack "$mode" ':' 'stat -c "%t:%T %F" /dev/democtl'
		assert_success
		assert_output "a:ed character special file"
		OCIDEC_RESOLVE=$mode run list -c "$CFG" demo
		assert_success
		assert_line "$DR$X/democtl"
		for l in "${lines[@]}"; do
			[[ "$(readlink -f "$l")" == "$DR"/* ]] || fail "list printed $l, which is $(readlink -f "$l") on the host"
		done
		OCIDEC_RESOLVE=$mode run relabel -c "$CFG" demo
		assert_success
		run getfattr --absolute-names --only-values -n security.selinux "$X/democtl"
		assert_failure
		run getfattr --absolute-names --only-values -n security.selinux "$DR$X/democtl"
		assert_output "$DEVCTX"
	done
}

@test "3. a mount the hook makes never propagates: a shared volume an image symlink points into is refused" {
	mkdir -p "$HOST/shared"
	mount --bind "$HOST/shared" "$HOST/shared"
	mount --make-shared "$HOST/shared"
	for mode in openat2 fallback; do
		EDIT='push @{$c->{mounts}}, {destination => "/vol", type => "bind", source => "'"$HOST/shared"'", options => ["rbind", "rshared"]}' \
			attack "$mode" 'mkdir -p vol && ln -s /vol opt'
		assert_failure
		assert_output --partial "ocidec hook: container $ID: /opt: leads out of the root file system or into another mount"
	done
}

@test "4. ld.so.conf: an include DAG, an exploding glob and a 500,000-component path are bounded" {
	dag='mkdir -p etc/dag && for i in $(seq 1 16); do mkdir -p etc/dag/L$i; for f in a b c; do echo "include /etc/dag/L$((i + 1))/*.conf" >etc/dag/L$i/$f.conf; done; done; echo "include /etc/dag/L1/*.conf" >etc/ld.so.conf'
	glob='printf "include /*/../*/../*/../*/../*/..\n" >etc/ld.so.conf'
	long='{ printf "include "; head -c 1000000 /dev/zero | tr "\0" "a" | sed "s|a|a/|g" | head -c 999990; echo; } >etc/ld.so.conf'
	for mode in openat2 fallback; do
		for case in dag glob long; do
			HOOK_ARGS="--log $BATS_TEST_TMPDIR/log " attack "$mode" "${!case}"
			assert_success
			assert_output "demo-tool: the answer is 42"
			run cat "$BATS_TEST_TMPDIR/log"
			case $case in
			dag) assert_output --partial "more than 256 configuration files; the rest of the configuration is ignored" ;;
			glob) assert_output --partial "include /*/../*/../*/../*/../*/..: more than 256 matches or too much to search" ;;
			long) assert_output --partial "an include pattern longer than PATH_MAX; the rest of the configuration is ignored" ;;
			esac
			rm "$BATS_TEST_TMPDIR/log"
		done
	done
}

@test "4. the hook's deadline: past --timeout the start fails cleanly, no temporary file left" {
	for mode in openat2 fallback; do
		HOOK_ARGS="--timeout 1 " attack "$mode" 'mkdir -p opt/demo/lib && cd opt/demo/lib && seq -f "libjunk%.0f.so.1" 1 300000 | xargs touch'
		assert_failure
		assert_output --partial "the deadline (--timeout) passed"
		run find "$B/rootfs" -name '.*.ocidec-*'
		assert_output ""
	done
}

# Docker's default capabilities for the container (runc spec's are fewer)
DOCKER_CAPS='for my $k (qw(bounding effective permitted)) { $c->{process}{capabilities}{$k} = [qw(CAP_CHOWN CAP_DAC_OVERRIDE CAP_FSETID CAP_FOWNER CAP_MKNOD CAP_NET_RAW CAP_SETGID CAP_SETUID CAP_SETFCAP CAP_SETPCAP CAP_NET_BIND_SERVICE CAP_SYS_CHROOT CAP_KILL CAP_AUDIT_WRITE)] }'

@test "5. device nodes and IPC directories are read-only mounts: the container creates, chmods, removes and links nothing there; MPS's clients still reach the daemon's socket and pipe (issue 32, finding 1)" {
	chmod 0600 "$DR/dev/democtl"
	gcc -static -O2 -o "$BATS_TEST_TMPDIR/mps-client" "$FIXTURES/mps-client.c"
	for mode in openat2 fallback; do
		# the stand-in daemon makes its socket and FIFO, as MPS does
		rm -f "$BATS_TEST_TMPDIR/mps.log"
		"$FIXTURES/mps-daemon.py" "$DR/run/demo" "$BATS_TEST_TMPDIR/mps.log" &
		daemon=$!
		wait_until "grep -q ready '$BATS_TEST_TMPDIR/mps.log' 2>/dev/null"
		ipc_before=$(fingerprint "$DR/run/demo")
		EDIT=$DOCKER_CAPS ENVS=DEMO_FEATURES=base,ipc attack "$mode" 'cp "$BATS_TEST_TMPDIR/mps-client" bin/' \
			'busybox chmod 666 /dev/democtl; echo chmod=$?; head -c 0 /dev/democtl && echo opened
			 busybox cp /bin/busybox /run/demo/planted; echo plant=$?
			 busybox chmod 4755 /run/demo; echo dirmode=$?
			 busybox chmod 777 /run/demo/control; echo sockmode=$?
			 busybox rm -f /run/demo/control; echo rm=$?
			 busybox ln -s /etc/shadow /run/demo/link; echo ln=$?
			 busybox mkfifo /run/demo/fifo2; echo mkfifo=$?
			 mps-client /run/demo
			 grep " /run/demo " /proc/self/mountinfo | cut -d" " -f6'
		wait "$daemon"
		assert_success
		assert_line "chmod=1"
		assert_line "opened"
		assert_equal "$(stat -c %a "$DR/dev/democtl")" 600
		for op in plant dirmode sockmode rm ln mkfifo; do assert_line "$op=1"; done
		assert_line "ro,nosuid,nodev,noexec,relatime"
		assert_equal "$(fingerprint "$DR/run/demo")" "$ipc_before"
		# the client reached the daemon through the read-only mount
		assert_line "socket: mps-daemon: hello"
		assert_line "fifo: written"
		run cat "$BATS_TEST_TMPDIR/mps.log"
		assert_line "socket got hello"
		assert_line "fifo got ping"
	done
}

@test "5. ipc_writable: read-write only where the host's own mount is nosuid,nodev (a tmpfs of its own), never for an unprivileged pod under the Kubernetes profile; a set-id program made there is nothing on the host (issue 32, finding 1)" {
	printf '\n[feature.mps]\nipc_writable = /run/demo-mps\n' >>"$CFG/demo.ini"
	mkdir -p "$DR/run/demo-mps"
	# a directory of the test's file system: read-only, said
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=mps
	assert_success
	assert_line "mount $DR/run/demo-mps /run/demo-mps ro,nosuid,nodev,noexec"
	assert_output --partial "demo: /run/demo-mps mounted read-only: it is no mount of its own"
	# a tmpfs of its own without nosuid: read-only, said
	mount -t tmpfs -o nodev,mode=0755 tmpfs "$DR/run/demo-mps"
	MPS_MOUNT=$DR/run/demo-mps
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=mps
	assert_line "mount $DR/run/demo-mps /run/demo-mps ro,nosuid,nodev,noexec"
	assert_output --partial "demo: /run/demo-mps mounted read-only: its mount is not nosuid,nodev"
	# a subdirectory of a nosuid,nodev tmpfs (the host's /run): not its own, read-only
	mount -o remount,nosuid,nodev "$DR/run/demo-mps"
	mkdir "$DR/run/demo-mps/sub"
	sed -i 's|^ipc_writable = /run/demo-mps$|ipc_writable = /run/demo-mps/sub|' "$CFG/demo.ini"
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=mps
	assert_line "mount $DR/run/demo-mps/sub /run/demo-mps/sub ro,nosuid,nodev,noexec"
	assert_output --partial "demo: /run/demo-mps/sub mounted read-only: it is no mount of its own"
	rmdir "$DR/run/demo-mps/sub"
	sed -i 's|^ipc_writable = /run/demo-mps/sub$|ipc_writable = /run/demo-mps|' "$CFG/demo.ini"
	# a tmpfs of its own, nosuid,nodev: read-write
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=mps
	assert_line "mount $DR/run/demo-mps /run/demo-mps rw,nosuid,nodev,noexec"
	refute_output --partial "mounted read-only"
	# the container writes there; what it makes set-id runs as its caller on the host
	gcc -static -O2 -o "$BATS_TEST_TMPDIR/mps-client" "$FIXTURES/mps-client.c"
	EDIT=$DOCKER_CAPS ENVS=DEMO_FEATURES=base,mps attack openat2 'cp "$BATS_TEST_TMPDIR/mps-client" bin/' \
		'busybox cp /bin/mps-client /run/demo-mps/euid; busybox chmod 4755 /run/demo-mps/euid; echo plant=$?
		 grep " /run/demo-mps " /proc/self/mountinfo | cut -d" " -f6'
	assert_success
	assert_line "plant=0"
	assert_line "rw,nosuid,nodev,noexec,relatime"
	[ "$(stat -c '%a %u' "$DR/run/demo-mps/euid")" = "4755 0" ]
	d=$DR/run/demo-mps
	while [ "$d" != /tmp ] && [ "$d" != / ]; do chmod a+x "$d"; d=$(dirname "$d"); done
	run setpriv --reuid 65534 --regid 65534 --clear-groups "$DR/run/demo-mps/euid"
	assert_output "euid=65534"
	# the Kubernetes profile: a pod without CAP_SYS_ADMIN gets it read-only
	sed -i 's/^\[vendor\]$/[vendor]\nunprivileged_ipc_writable = false/' "$CFG/demo.ini"
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=mps
	assert_line "mount $DR/run/demo-mps /run/demo-mps ro,nosuid,nodev,noexec"
	assert_output --partial "demo: /run/demo-mps mounted read-only: the container has no CAP_SYS_ADMIN (unprivileged_ipc_writable)"
	CAPS=CAP_SYS_ADMIN B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=mps
	assert_line "mount $DR/run/demo-mps /run/demo-mps rw,nosuid,nodev,noexec"
	# and a CDI spec, for any container: read-only
	run bash -c "cdi -c '$CFG' --features mps demo 2>/dev/null | python3 -c 'import json, sys; s = json.load(sys.stdin); print([\",\".join(m[\"options\"]) for m in s[\"containerEdits\"][\"mounts\"] if m[\"containerPath\"] == \"/run/demo-mps\"])'"
	assert_output "['bind,ro,nosuid,nodev,noexec']"
}

@test "5. an IPC path that is a symlink, or a user's stand-in in a directory anyone may write (/tmp), is not mounted: no host directory writable in the container (review of issue 24)" {
	# a local user's link where the MPS directory would be: its target
	# would be mounted read-write
	rm -rf "$DR/run/demo" && mkdir -p "$DR/etc/secret" && ln -s /etc/secret "$DR/run/demo"
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=ipc
	assert_success
	refute_line --partial "mount $DR/run/demo"
	refute_line --partial /etc/secret
	assert_output --partial "demo: skipped /run/demo: an IPC path that is a symlink (its target would be mounted)"
	# a directory in a sticky, world-writable one: a user's is refused, root's mounted
	rm "$DR/run/demo" && mkdir "$DR/run/demo" && chmod 1777 "$DR/run"
	chown 1000 "$DR/run/demo"
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=ipc
	refute_line --partial "mount $DR/run/demo"
	assert_output --partial "demo: skipped /run/demo: owned by uid 1000 in a directory anyone may write: not the daemon's"
	chown 0 "$DR/run/demo"
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=ipc
	assert_line "mount $DR/run/demo /run/demo ro,nosuid,nodev,noexec"
	# a group may write the directory: a member's stand-in is refused too
	chmod 0775 "$DR/run" && chown 1000 "$DR/run/demo"
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=ipc
	assert_output --partial "demo: skipped /run/demo: owned by uid 1000 in a directory anyone may write"
	chown 0 "$DR/run/demo" && chmod 1777 "$DR/run"
	# a mount of its own there that is no tmpfs (a user's FUSE file system
	# claims root's ownership as easily as this bind mount has it): refused
	mkdir -p "$BATS_TEST_TMPDIR/fuse-stand-in"
	mount --bind "$BATS_TEST_TMPDIR/fuse-stand-in" "$DR/run/demo"
	B=$BATS_TEST_TMPDIR/b run dry OCI_DEMO=all DEMO_FEATURES=ipc
	umount "$DR/run/demo"
	refute_line --partial "mount $DR/run/demo"
	assert_output --partial "demo: skipped /run/demo: a mount of its own that is no tmpfs, in a directory anyone may write"
	# what an engine mounts by path later (a CDI spec, the shim's config.json)
	# names no IPC path in a directory anyone may write: a user could put
	# their own there before the engine mounts it (review of issue 32)
	run cdi -c "$CFG" --features ipc demo
	refute_output --partial '"hostPath": "'"$DR/run/demo"'"'
	assert_output --partial "demo: skipped /run/demo: in a directory anyone may write, and named by its path for the engine to mount later"
	# the shim, its runtime a stand-in (runtime.conf): config.json as runc would get it
	"$FIXTURES/bundle.sh" "$BATS_TEST_TMPDIR/shim" OCI_DEMO=all DEMO_FEATURES=base,ipc -- true >/dev/null
	printf '[runtime]\npath = /bin/true\n' >"$CFG/runtime.conf"
	chmod 0644 "$CFG/runtime.conf"
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/rr" create --bundle "$BATS_TEST_TMPDIR/shim" x
	assert_success
	assert_output --partial "demo: skipped /run/demo: in a directory anyone may write"
	grep -q /dev/democtl "$BATS_TEST_TMPDIR/shim/config.json"
	! grep -q '"/run/demo"' "$BATS_TEST_TMPDIR/shim/config.json"
}

@test "6. inject --pid opens files in the container only through the host's /proc, never by path" {
	for mode in openat2 fallback; do
		rm -rf "$B"
		RW=1 "$FIXTURES/bundle.sh" "$B" -- sleep 60 >/dev/null
		(cd "$B" && runc run -d "$ID" </dev/null >/dev/null 2>&1)
		pid=$(runc state "$ID" | perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->{pid}')
		# (LeakSanitizer cannot run under ptrace: the sanitizer build skips it here)
		ASAN_OPTIONS=detect_leaks=0 OCIDEC_RESOLVE=$mode strace -f -o "$BATS_TEST_TMPDIR/trace" -e trace=setns,open,openat,openat2 \
			"$OCIDEC" inject -c "$CFG" --pid "$pid" demo
		# after setns: no open for reading by path (directories aside)
		run bash -c "sed -n '/setns(/,\$p' '$BATS_TEST_TMPDIR/trace' | grep -E 'open(at2?)?\(' | grep -v 'O_PATH\|O_DIRECTORY\|\"self/' | grep -E 'O_RDONLY|O_RDWR'"
		assert_output ""
		run grep -c '"self/fd/[0-9]*", O_RDONLY' "$BATS_TEST_TMPDIR/trace"
		[ "$output" -gt 0 ]
		runc delete -f "$ID" >/dev/null 2>&1
	done
}

@test "7. the hook makes, replaces and removes nothing inside a volume" {
	mkdir -p "$HOST/rootonly/demo/lib"
	ln -s nowhere "$HOST/rootonly/demo/lib/libgone.so.1"
	for mode in openat2 fallback; do
		EDIT='push @{$c->{mounts}}, {destination => "/vol", type => "bind", source => "'"$HOST"'", options => ["rbind", "rw"]}; $c->{process}{user} = {uid => 1000, gid => 1000};' \
			attack "$mode" 'mkdir -p vol && ln -s /vol/rootonly opt'
		assert_failure
		assert_output --partial "leads out of the root file system or into another mount"
	done
}

@test "8. the Kubernetes profile: only a device plugin's mounts select; env and annotations get nothing, with a warning" {
	sed -i '/^\[vendor\]/a selection = mounts\ndevice_list_dir = /var/run/nvidia-container-devices\nunprivileged_features = base' "$CFG/demo.ini"
	for mode in openat2 fallback; do
		ANNOTATIONS=ocidec.io/demo=all HOOK_ARGS="--log $BATS_TEST_TMPDIR/log " \
			attack "$mode" ':' 'ls /dev; test -e /usr/bin/demo-tool && echo injected; true'
		assert_success
		refute_line injected
		refute_line democtl
		run cat "$BATS_TEST_TMPDIR/log"
		assert_line --partial "demo: annotation ocidec.io/demo ignored: the vendor takes no device selection from 'annotation' (selection)"
		assert_line --partial "demo: OCI_DEMO=all ignored: the vendor takes no device selection from 'env' (selection)"
		rm "$BATS_TEST_TMPDIR/log"
		# what the device plugin mounted selects, features as allowed
		ENVS=DEMO_FEATURES=base,ipc HOOK_ARGS="--log $BATS_TEST_TMPDIR/log " \
		EDIT='push @{$c->{mounts}}, {destination => "/var/run/nvidia-container-devices/1", type => "bind", source => "/dev/null", options => ["bind", "ro"]}' \
			attack "$mode" ':' 'ls /dev; test -e /run/demo && echo ipc; demo-tool'
		assert_success
		assert_line demo1
		refute_line demo0
		refute_line ipc
		assert_line "demo-tool: the answer is 42"
		run cat "$BATS_TEST_TMPDIR/log"
		assert_line --partial "demo: feature 'ipc' dropped: a container without CAP_SYS_ADMIN may not ask for it (unprivileged_features)"
		rm "$BATS_TEST_TMPDIR/log"
		# a pod's own volume at the device-list dir (an emptyDir) is no
		# device plugin's: only a mount of /dev/null counts (issue 22, finding 1)
		mkdir -p "$BATS_TEST_TMPDIR/emptydir"
		EDIT='push @{$c->{mounts}}, {destination => "/var/run/nvidia-container-devices/all", type => "bind", source => "'"$BATS_TEST_TMPDIR/emptydir"'", options => ["bind", "ro"]}' \
			attack "$mode" ':' 'ls /dev; test -e /usr/bin/demo-tool && echo injected; true'
		assert_success
		refute_line injected
		refute_line democtl
	done
}

@test "8. the Kubernetes tenant policy as install writes it: a pod's annotation that CRI-O or containerd copied into its containers selects nothing under the hook or the shim, env neither; the device plugin's list does; outside Kubernetes the annotation selects (issue 46, finding 2)" {
	H=$BATS_TEST_TMPDIR/node
	mkdir "$H"
	ocidec install --host-root "$H" -c "$CFG" --tenant-policy kubernetes --runtime podman >/dev/null
	CFG=$H/usr/local/ocidec/etc/ocidec.d
	run sh -c "grep -E '^(unprivileged_)?selection =' '$CFG/demo.ini' | sort"
	assert_output $'selection = mounts annotation env\nunprivileged_selection = mounts annotation'
	local see='ls /dev; test -e /usr/bin/demo-tool && echo injected; true'
	for mode in openat2 fallback; do
		# CRI-O's container (every pod annotation copied), containerd's
		for marker in io.kubernetes.cri-o.SandboxID=p1 io.kubernetes.cri.container-type=container; do
			ANNOTATIONS=ocidec.io/demo=all,$marker ENVS=OCI_DEMO=all HOOK_ARGS="--log $BATS_TEST_TMPDIR/log " \
				attack "$mode" ':' "$see"
			assert_success
			refute_line injected
			refute_line democtl
			run cat "$BATS_TEST_TMPDIR/log"
			assert_line --partial "demo: annotation ocidec.io/demo ignored: a Kubernetes container's annotation, which may be its pod's (CRI-O copies them all); a container without CAP_SYS_ADMIN takes no device selection from what its tenant writes (unprivileged_selection)"
			rm "$BATS_TEST_TMPDIR/log"
		done
		# the device plugin's list: what it says, the annotation beside it nothing more
		ANNOTATIONS=ocidec.io/demo=all,io.kubernetes.cri-o.SandboxID=p1 \
		EDIT='push @{$c->{mounts}}, {destination => "/var/run/ocidec-devices/demo/1", type => "bind", source => "/dev/null", options => ["bind", "ro"]}' \
			attack "$mode" ':' "$see"
		assert_success
		assert_line demo1
		refute_line demo0
		# no Kubernetes engine (podman --annotation by the node's own user): the annotation selects
		ANNOTATIONS=ocidec.io/demo=all attack "$mode" ':' "$see"
		assert_success
		assert_line injected
	done
	# the shim: the same decision
	rm -rf "$B"
	ANNOTATIONS=ocidec.io/demo=all,io.kubernetes.cri-o.SandboxID=p1 "$FIXTURES/bundle.sh" "$B" -- sh -c "$see" >/dev/null
	run ocidec-runtime --ocidec-config-dir "$CFG" --root "$BATS_TEST_TMPDIR/rr" run --bundle "$B" "$ID"
	assert_success
	refute_line injected
	assert_line --partial "demo: annotation ocidec.io/demo ignored: a Kubernetes container's annotation"
}

@test "the image's own variable never widens what the device plugin's alias gives: each one set narrows the request (issue 22, finding 2)" {
	sed -i '/^\[vendor\]/a activation_aliases = DEMO_VISIBLE_DEVICES' "$CFG/demo.ini"
	flag0='s/^OCI_DEMO=all$/OCI_DEMO=0/ for @{$c->{process}{env}}'
	# the image says OCI_DEMO=all, the device plugin (kubelet) DEMO_VISIBLE_DEVICES=1
	ENVS=DEMO_VISIBLE_DEVICES=1 attack openat2 ':' 'ls /dev | grep demo'
	assert_success
	assert_output $'demo1\ndemoctl'
	# either way round
	ENVS=DEMO_VISIBLE_DEVICES=all EDIT=$flag0 attack openat2 ':' 'ls /dev | grep demo'
	assert_output $'demo0\ndemoctl'
	# void (what a CDI spec sets, issue 22 finding 4): nothing from the environment
	ENVS=DEMO_VISIBLE_DEVICES=void attack openat2 ':' 'ls /dev | grep -c demo; true'
	assert_output 0
	# the device plugin's volume-mounts value, the list's directory: the
	# list is the mounts, the variable asks for nothing
	ENVS=DEMO_VISIBLE_DEVICES=/var/run/ocidec-devices/demo attack openat2 ':' 'ls /dev | grep demo'
	assert_success
	assert_output $'demo0\ndemo1\ndemoctl'
	# the default selection takes a device plugin's mounts (volume-mounts),
	# which win over the image's variable
	EDIT='push @{$c->{mounts}}, {destination => "/var/run/ocidec-devices/demo/1", type => "bind", source => "/dev/null", options => ["bind", "ro"]}' \
		attack openat2 ':' 'ls /dev | grep demo'
	assert_output $'demo1\ndemoctl'
	# a variable given twice (an engine appending a spec's void): each entry narrows
	ENVS=OCI_DEMO=void attack openat2 ':' 'ls /dev | grep -c demo; true'
	assert_output 0
	# lists with no device in common: nothing, and the log says why
	ENVS=DEMO_VISIBLE_DEVICES=1 EDIT=$flag0 HOOK_ARGS="--log $BATS_TEST_TMPDIR/log " \
		attack openat2 ':' 'ls /dev | grep -c demo; true'
	assert_output 0
	run cat "$BATS_TEST_TMPDIR/log"
	assert_line --partial "demo: OCI_DEMO=0 DEMO_VISIBLE_DEVICES=1: no device in common: none given"
}

# procview_bed: a fake driver proc directory (two GPUs' entries, params,
# version) as /proc/driver/demo of a "container" (a process pivoted into
# the bundle's rootfs, with a procfs of its own) and of the host side that
# runs ocidec; PID is the container's process
procview_bed() {
	FAKE=$BATS_TEST_TMPDIR/procdriver
	mkdir -p "$FAKE/demo/gpus/0000:01:00.0" "$FAKE/demo/gpus/0000:02:00.0" "$FAKE/demo/capabilities"
	printf 'Model: Demo\nDevice Minor: 0\nGPU UUID: GPU-aaa\n' >"$FAKE/demo/gpus/0000:01:00.0/information"
	printf 'Model: Demo\nDevice Minor: 1\nGPU UUID: GPU-bbb\n' >"$FAKE/demo/gpus/0000:02:00.0/information"
	printf 'ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileGID: 0\n' >"$FAKE/demo/params"
	echo "NVRM version: demo 1.0" >"$FAKE/demo/version"
	# not for every user: not copied into the view (its copies are 0444)
	echo "secret" >"$FAKE/demo/secret" && chmod 0600 "$FAKE/demo/secret"
	printf 'device_uuids = /proc/driver/demo/gpus/*/information\nproc_view = /proc/driver/demo\nproc_view_set = params ModifyDeviceFiles: 0\n' >"$BATS_TEST_TMPDIR/extra"
	EXTRA=$(cat "$BATS_TEST_TMPDIR/extra") demo_vendor
	"$FIXTURES/bundle.sh" "$B" >/dev/null
	R=$B/rootfs
	# PROC_LINK: the image's /proc a link to /p, where the procfs is
	if [ -n "${PROC_LINK:-}" ]; then rmdir "$R/proc" && mkdir "$R/p" && ln -s p "$R/proc"; fi
	pivot_bed "$R" "$FAKE"
}

@test "9. the driver's proc directory: a container sees its files (ModifyDeviceFiles: 0) and only its own devices' entries, read-only (issue 22, finding 9)" {
	procview_bed
	run inside ls /proc/driver/demo/gpus
	assert_output $'0000:01:00.0\n0000:02:00.0'
	# the host side sees the same directory (a bind of its own)
	run unshare -m --propagation private sh -c 'mount --bind "$1" /proc/driver && "$2" inject -c "$3" --pid "$4" -d 1 demo' \
		sh "$FAKE" "$OCIDEC" "$CFG" "$PID"
	assert_success
	run inside ls /proc/driver/demo /proc/driver/demo/gpus
	assert_output $'/proc/driver/demo:\ngpus\nparams\nversion\n\n/proc/driver/demo/gpus:\n0000:02:00.0'
	run inside cat /proc/driver/demo/params /proc/driver/demo/gpus/0000:02:00.0/information
	assert_output $'ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 0\nDeviceFileGID: 0\nModel: Demo\nDevice Minor: 1\nGPU UUID: GPU-bbb'
	# read-only, the entry too; the host's files untouched
	run inside sh -c 'echo x >/proc/driver/demo/params; echo x >/proc/driver/demo/gpus/0000:02:00.0/information; mkdir /proc/driver/demo/x' 
	assert_equal "$(grep -c 'Read-only file system' <<<"$output")" 3
	assert_equal "$(grep ModifyDeviceFiles "$FAKE/demo/params")" "ModifyDeviceFiles: 1"
	# a second run changes nothing
	run unshare -m --propagation private sh -c 'mount --bind "$1" /proc/driver && "$2" inject -c "$3" --pid "$4" -d 1 demo' \
		sh "$FAKE" "$OCIDEC" "$CFG" "$PID"
	assert_success
	run inside sh -c 'grep -c " /proc/driver/demo" /proc/self/mountinfo'
	assert_output 2
	kill -9 "$PID"
	# a /proc that is a link (to a procfs elsewhere) would show the
	# directory whole: the view is an error, not a warning
	rm -rf "$B"
	PROC_LINK=1 procview_bed
	run unshare -m --propagation private sh -c 'mount --bind "$1" /proc/driver && "$2" inject -c "$3" --pid "$4" -d 1 demo' \
		sh "$FAKE" "$OCIDEC" "$CFG" "$PID"
	assert_failure 1
	assert_output --partial "/proc/driver/demo: the container's /proc is not a procfs: no view can be made"
}

@test "9. the runtime shim's proc view: its createContainer hook (hook --cdi --proc-view) does the same; bad arguments are usage errors" {
	procview_bed
	printf '{"ociVersion":"1.0.2","id":"pv","status":"created","pid":%s,"bundle":"%s"}' "$PID" "$B" >"$BATS_TEST_TMPDIR/state"
	run unshare -m --propagation private sh -c 'mount --bind "$1" /proc/driver && "$2" hook --cdi --proc-view /proc/driver/demo --proc-set "params ModifyDeviceFiles: 0" --proc-entry gpus/0000:01:00.0 prestart <"$3"' \
		sh "$FAKE" "$OCIDEC" "$BATS_TEST_TMPDIR/state"
	assert_success
	run inside sh -c 'ls /proc/driver/demo/gpus; grep Modify /proc/driver/demo/params'
	assert_output $'0000:01:00.0\nModifyDeviceFiles: 0'
	kill -9 "$PID"
	# every GPU's entry ("gpus/" "*"), as nvidia-cdi-hook's disable-device-node-modification
	# asks (review of issue 25: found nothing, the view hid every GPU)
	procview_bed
	printf '{"ociVersion":"1.0.2","id":"pv","status":"created","pid":%s,"bundle":"%s"}' "$PID" "$B" >"$BATS_TEST_TMPDIR/state"
	run unshare -m --propagation private sh -c 'mount --bind "$1" /proc/driver && "$2" hook --cdi --proc-view /proc/driver/demo --proc-set "params ModifyDeviceFiles: 0" --proc-entry "gpus/*" prestart <"$3"' \
		sh "$FAKE" "$OCIDEC" "$BATS_TEST_TMPDIR/state"
	assert_success
	run inside sh -c 'ls /proc/driver/demo/gpus; grep Modify /proc/driver/demo/params'
	assert_output $'0000:01:00.0\n0000:02:00.0\nModifyDeviceFiles: 0'
	kill -9 "$PID"
	run "$OCIDEC" hook --cdi --proc-entry gpus/x prestart </dev/null
	assert_failure 2
	assert_output --partial "--proc-entry gpus/x: without --proc-view before it"
	run "$OCIDEC" hook --cdi --proc-view /etc prestart </dev/null
	assert_failure 2
	run "$OCIDEC" hook --cdi --proc-view /proc/x --proc-set "params nocolon" prestart </dev/null
	assert_failure 2
	assert_output --partial "not FILE NAME: VALUE"
	run "$OCIDEC" hook --cdi --proc-view /proc/x --proc-entry ../../etc prestart </dev/null
	assert_failure 2
}

@test "9. a FIFO at the log path does not hold the hook; container values are escaped in the log" {
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	for mode in openat2 fallback; do
		HOOK_ARGS="--log $BATS_TEST_TMPDIR/fifo " attack "$mode" ':'
		assert_success
		assert_output "demo-tool: the answer is 42"
		EDIT='push @{$c->{process}{env}}, "DEMO_FEATURES=base,x\nocidec-hook:error:forged\e[2J"' \
			HOOK_ARGS="--log $BATS_TEST_TMPDIR/log " attack "$mode" ':'
		assert_success
		run cat "$BATS_TEST_TMPDIR/log"
		refute_line --regexp "^ocidec-hook:error:forged"
		assert_output --partial 'x\x0aocidec-hook:error:forged\x1b[2J'
		run grep -c $'\e' "$BATS_TEST_TMPDIR/log"
		assert_output 0
		rm "$BATS_TEST_TMPDIR/log"
	done
}

@test "9. the image's environment never changes what the hook does (a hook entry without env)" {
	for mode in openat2 fallback; do
		EDIT='$c->{hooks}{prestart}[0]{env} = [@{$c->{process}{env}}, "OCIDEC_LDCACHE_ARCH=vax", "OCIDEC_MOUNT_API=legacy", "OCIDEC_RESOLVE=fallback"]' \
			attack "$mode" ':'
		assert_success
		assert_output "demo-tool: the answer is 42"
	done
}

@test "10. root.path is read as the runtime reads it: '..' spellings of / are refused, a symlink before '..' does not redirect the hook" {
	for mode in openat2 fallback; do
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all >/dev/null
		up=$(printf '../%.0s' $(seq 1 40))
		edit_config "\$c->{root}{path} = '$up'"
		run hook -c "$CFG" --resolver "$mode" --dry-run <<<"{\"bundle\": \"$B\", \"pid\": $$}"
		assert_failure 1
		assert_output "ocidec hook: $B/config.json: \"root\".\"path\" is the host's / ($up)"
		# link/../rootfs is the bundle's rootfs to runc, whatever link points at
		mkdir -p "$HOST/rootfs" "$HOST/sub/deeper"
		EDIT='$c->{root}{path} = "link/../rootfs"' attack "$mode" "ln -s '$HOST/sub/deeper' ../link"
		assert_success
		assert_output "demo-tool: the answer is 42"
	done
}

@test "10. a value with an embedded NUL (\\u0000) is refused, not cut short" {
	for mode in openat2 fallback; do
		rm -rf "$B"
		"$FIXTURES/bundle.sh" "$B" >/dev/null
		edit_config '$c->{annotations}{"ocidec.io/demo"} = "all\0none"'
		grep -q 'all\\u0000none' "$B/config.json"
		run hook -c "$CFG" --resolver "$mode" --dry-run <<<"{\"bundle\": \"$B\", \"pid\": $$}"
		assert_failure 1
		assert_output "ocidec hook: $B/config.json: a string holds a NUL character (U+0000), which ocidec refuses"
		run hook -c "$CFG" --resolver "$mode" --dry-run <<<"{\"bundle\": \"$B\", \"pid\": $$, \"annotations\": {\"ocidec.io/demo\": \"all\\u0000x\"}}"
		assert_failure 1
		assert_output --partial "container state: a string holds a NUL character"
	done
}

# ---- the CDI spec's hook (ocidec hook --cdi) under the same images ----
# The engine makes the spec's mounts (runc resolves each destination inside
# the rootfs); the hook makes the links and the cache. Attacks on where a
# mount lands are the runtime's to refuse; the rest are the hook's.

@test "CDI: the spec's hook, at createContainer and at prestart, under the image attacks it meets" {
	mkdir -p "$HOST/lib"
	gcc -shared -fPIC -o "$HOST/lib/libhostonly.so.1" "$FIXTURES/libdemo.c" -Wl,-soname,libhostonly.so.1
	abs_parent='ln -s "$HOST" opt'
	climb='mkdir -p usr && ln -s "../../../../../../../../../../..$HOST/sub" usr/bin'
	link_file='mkdir -p opt/demo/lib && ln -s "$HOST/file" opt/demo/lib/libdemo.so.1'
	cache_link='ln -s "$HOST/file" etc/ld.so.cache'
	ldconf="printf '%s\n' /proc/self/root$HOST/lib $HOST/lib 'include /proc/self/root$HOST/*.conf' >etc/ld.so.conf"
	for stage in createContainer prestart; do
		for mode in openat2 fallback; do
			for case in abs_parent climb link_file cache_link ldconf; do
				CDI_STAGE=$stage attack "$mode" "${!case}"
				assert_success
				assert_output "demo-tool: the answer is 42"
				run "$OCIDEC" ldcache -p -r "$B/rootfs"
				refute_output --partial libhostonly
			done
		done
	done
}

@test "CDI: an image's cache link into a shared volume is replaced; nothing reaches the volume" {
	mkdir -p "$HOST/shared"
	mount --bind "$HOST/shared" "$HOST/shared"
	mount --make-shared "$HOST/shared"
	for stage in createContainer prestart; do
		EDIT='push @{$c->{mounts}}, {destination => "/vol", type => "bind", source => "'"$HOST/shared"'", options => ["rbind", "rshared"]}' \
			CDI_STAGE=$stage attack openat2 'mkdir -p vol && ln -s /vol/ld.so.cache etc/ld.so.cache'
		assert_success
		assert_output "demo-tool: the answer is 42"
		assert_equal "$(ls -A "$HOST/shared")" ""
		[ -f "$B/rootfs/etc/ld.so.cache" ] && [ ! -L "$B/rootfs/etc/ld.so.cache" ]
	done
}

@test "a driver-root file name holding a newline or ESC forges no line of list (restorecon -f -) or of the dry run (issue 22, finding 6)" {
	# a library name that carries a forged line (restorecon -f reads a
	# relative path against its working directory)
	cp "$DR/opt/demo/lib/libdemo.so.1.0" "$DR/opt/demo/lib/libdemo.so.9"$'\n'"shadow"
	cp "$DR/opt/demo/lib/libdemo.so.1.0" "$DR/opt/demo/lib/libdemo.so.8"$'\e[2J'
	run ocidec list -c "$CFG"
	assert_success
	refute_line shadow
	refute_line --partial $'\e'
	assert_line --partial 'libdemo.so.9\x0ashadow: a name with a control character: not listed'
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all >/dev/null
	run hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
	assert_success
	refute_line --regexp '^shadow'
	refute_line --partial $'\e'
	assert_line --regexp '^mount .*/libdemo\.so\.9\\x0ashadow /opt/demo/lib/libdemo\.so\.9\\x0ashadow ro'
}

@test "a driver-root link whose name holds \"::\" is made by no path: the cache hook's --symlink PATH::TEXT could not say where (review of issue 34)" {
	ln -s libdemo.so.1.0 "$DR/opt/demo/lib/libdemo.so::evil"
	"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all >/dev/null
	run hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
	assert_success
	refute_line --partial 'symlink /opt/demo/lib/libdemo.so::evil'
	assert_line --partial 'libdemo.so::evil: a name with "::" in it: no link made there'
	run ocidec cdi -c "$CFG" demo
	assert_success
	refute_output --partial 'libdemo.so::evil::'
}

@test "cdi -o - is standard output; -o onto a symlink or FIFO writes through it and never replaces it (issue 22, finding 7)" {
	cd "$BATS_TEST_TMPDIR"
	run cdi -c "$CFG" -o - demo
	assert_success
	assert_line --partial '"kind":	"ocidec.io/demo"'
	assert_file_not_exists "$BATS_TEST_TMPDIR/-"
	# a link to standard output (what /dev/stdout is): the link stays a link
	ln -s /proc/self/fd/1 "$BATS_TEST_TMPDIR/out"
	cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/out" demo >"$BATS_TEST_TMPDIR/captured"
	[ -L "$BATS_TEST_TMPDIR/out" ]
	grep -q '"kind":	"ocidec.io/demo"' "$BATS_TEST_TMPDIR/captured"
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	cat "$BATS_TEST_TMPDIR/fifo" >"$BATS_TEST_TMPDIR/from-fifo" &
	cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/fifo" demo
	wait
	[ -p "$BATS_TEST_TMPDIR/fifo" ]
	grep -q '"kind":	"ocidec.io/demo"' "$BATS_TEST_TMPDIR/from-fifo"
}

@test "cdi -o DIR replaces a link or FIFO at a spec's name, never writes through it; -o FILE writes through only a device, FIFO or the caller's descriptor (issue 32, finding 3)" {
	out=$BATS_TEST_TMPDIR/cdi
	mkdir "$out"
	# whoever may write the spec directory plants a link to a host file
	ln -s "$HOST/file" "$out/ocidec.io-demo.json"
	run timeout 20 "$OCIDEC" cdi -c "$CFG" -o "$out" demo
	assert_success
	[ ! -L "$out/ocidec.io-demo.json" ] && [ -f "$out/ocidec.io-demo.json" ]
	grep -q '"kind":	"ocidec.io/demo"' "$out/ocidec.io-demo.json"
	assert_equal "$(cat "$HOST/file")" "host file"
	# a FIFO there: replaced, no hang
	rm "$out/ocidec.io-demo.json" && mkfifo "$out/ocidec.io-demo.json"
	run timeout 20 "$OCIDEC" cdi -c "$CFG" -o "$out" demo
	assert_success
	[ -f "$out/ocidec.io-demo.json" ]
	# a claim's spec the same
	ln -s "$HOST/file" "$out/ocidec.io-claim_c1.json"
	run timeout 20 "$OCIDEC" cdi -c "$CFG" -o "$out" --claim c1 --devices 0 demo
	assert_success
	[ -f "$out/ocidec.io-claim_c1.json" ] && [ ! -L "$out/ocidec.io-claim_c1.json" ]
	assert_equal "$(cat "$HOST/file")" "host file"
	# -o FILE that is a link to a regular file: the link replaced, its target untouched
	ln -s "$HOST/file" "$BATS_TEST_TMPDIR/spec.json"
	run "$OCIDEC" cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/spec.json" demo
	assert_success
	[ ! -L "$BATS_TEST_TMPDIR/spec.json" ]
	assert_equal "$(cat "$HOST/file")" "host file"
	# -o /dev/stdout: the caller's own descriptor, written through
	"$OCIDEC" cdi -c "$CFG" -o /dev/stdout demo >"$BATS_TEST_TMPDIR/captured2"
	grep -q '"kind":	"ocidec.io/demo"' "$BATS_TEST_TMPDIR/captured2"
	# links that only start like a descriptor's name, and links to a FIFO or
	# a character device: replaced, never written through (review)
	mkfifo "$BATS_TEST_TMPDIR/fifo2"
	for t in "/dev/fd/../../..$HOST/file" "/proc/self/fd/../../..$HOST/file" "$BATS_TEST_TMPDIR/fifo2" /dev/null; do
		rm -f "$BATS_TEST_TMPDIR/spec.json"
		ln -s "$t" "$BATS_TEST_TMPDIR/spec.json"
		run timeout 20 "$OCIDEC" cdi -c "$CFG" -o "$BATS_TEST_TMPDIR/spec.json" demo
		assert_success
		[ -f "$BATS_TEST_TMPDIR/spec.json" ] && [ ! -L "$BATS_TEST_TMPDIR/spec.json" ]
		assert_equal "$(cat "$HOST/file")" "host file"
	done
	[ -p "$BATS_TEST_TMPDIR/fifo2" ] && [ -c /dev/null ]
}

@test "a config.json with a key given twice is refused: runc reads the last, ocidec would read the first (issue 22, finding 8)" {
	"$FIXTURES/bundle.sh" "$B" -- true >/dev/null
	# the first "process" asks for the vendor with the capabilities of a
	# device plugin, the one runc runs is another
	python3 - "$B/config.json" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		p1 = dict(c["process"]); p1["env"] = p1["env"] + ["OCI_DEMO=all"]
		text = json.dumps(c)
		text = text.replace('"process": ', '"process": ' + json.dumps(p1) + ', "process": ', 1)
		open(sys.argv[1], "w").write(text)
		EOF
	refused_by_hook_and_shim "given twice" --partial "the key \"process\" is given twice in one object (runtimes read the last, ocidec would read the first): refused"
}

@test "a device list is a bind mount of the null device: a tmpfs whose source reads /dev/null selects nothing (issue 32, finding 8)" {
	B=$BATS_TEST_TMPDIR/b
	mkdir -p "$B/rootfs"
	for m in '"type": "tmpfs", "source": "/dev/null", "options": ["nosuid"]' '"source": "/dev/null", "options": ["ro"]' \
		'"type": "bind", "source": "/dev/null", "options": ["bind", "ro"]'; do
		printf '{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "process": {"env": []}, "mounts": [{"destination": "/var/run/ocidec-devices/demo/1", %s}]}' \
			"$m" >"$B/config.json"
		run "$OCIDEC" hook -c "$CFG" --dry-run <<<"{\"bundle\": \"$B\"}"
		assert_success
		case $m in
		*'"bind"'*) assert_line "mount $DR/dev/demo1 /dev/demo1 ro,nosuid,noexec" ;;
		*) refute_output --partial /dev/demo1 ;;
		esac
	done
}

# NVIDIA's application profile, where nvidia.ini's application_profile has
# the hook write it in the container
PROFILE=/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf

# host_disk: LOOP, a loop device standing in for a host disk (1 MiB of 'D'),
# and DISK, its contents' checksum
host_disk() {
	head -c 1048576 /dev/zero | tr '\0' D >"$BATS_TEST_TMPDIR/disk.img"
	LOOP=$(losetup -f --show "$BATS_TEST_TMPDIR/disk.img")
	DISK=$(sha256sum <"$LOOP")
}

# plant_profile ROOTFS block|fifo: the image's own thing at the profile's path
plant_profile() {
	mkdir -p "$1${PROFILE%/*}"
	case $2 in
	block) mknod "$1$PROFILE" b "$((0x$(stat -c %t "$LOOP")))" "$((0x$(stat -c %T "$LOOP")))" ;;
	fifo) mkfifo "$1$PROFILE" ;;
	esac
}

# profile_in ENGINE: the container (the bundle $B, GPU 0 asked for) through
# ENGINE: hook (prestart), cdi (the spec's createContainer hook), shim;
# prints what it saw of the profile
profile_in() {
	case $1 in
	cdi)
		cdi -c "$CFG" nvidia >"$BATS_TEST_TMPDIR/spec.json" 2>/dev/null
		"$FIXTURES/cdi-apply.py" "$BATS_TEST_TMPDIR/spec.json" "$B/config.json" 0
		(cd "$B" && timeout 60 runc run "$ID") ;;
	shim) timeout 60 ocidec-runtime --ocidec-config-dir "$CFG" run --bundle "$B" "$ID" ;;
	hook) (cd "$B" && timeout 60 runc run "$ID") ;;
	esac
	runc delete -f "$ID" >/dev/null 2>&1 || true
}

@test "the application profile's path a block device node in the image: the host disk behind it is never written, the container gets its profile as a file; a FIFO there holds nothing (issue 46, finding 1)" {
	"$FIXTURES/driver-root.sh" "$BATS_TEST_TMPDIR/nv" >/dev/null
	nvidia_ini "$BATS_TEST_TMPDIR/nv"
	host_disk
	local want='{"profiles":[{"name":"_container_","settings":["EGLVisibleDGPUDevices",0x2]}],"rules":[{"pattern":[],"profile":"_container_"}]}'
	for engine in hook cdi shim; do
		for thing in block fifo; do
			rm -rf "$B"
			if [ "$engine" = hook ]; then
				HOOK="$OCIDEC ocidec-hook -c $CFG prestart" "$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=0 \
					-- sh -c "cat $PROFILE; echo; ls -l $PROFILE | cut -c1" >/dev/null
			else
				"$FIXTURES/bundle.sh" "$B" NVIDIA_VISIBLE_DEVICES=0 -- sh -c "cat $PROFILE; echo; ls -l $PROFILE | cut -c1" >/dev/null
			fi
			plant_profile "$B/rootfs" "$thing"
			run --separate-stderr profile_in "$engine"
			assert_equal "$(sha256sum <"$LOOP")" "$DISK"
			assert_success
			assert_output "$want"$'\n-'
		done
	done
}

@test "podman (overlay storage): an image layer carrying a block device node at the application profile's path writes nothing on the host disk it names (issue 46, finding 1)" {
	is_static || skip "podman runs once, in the static build's pass"
	"$FIXTURES/driver-root.sh" "$BATS_TEST_TMPDIR/nv" >/dev/null
	nvidia_ini "$BATS_TEST_TMPDIR/nv"
	host_disk
	"$FIXTURES/bundle.sh" "$B" >/dev/null
	plant_profile "$B/rootfs" block
	tar -C "$B/rootfs" -cf "$BATS_TEST_TMPDIR/image.tar" .
	podman_conf
	podman_hooks "$BATS_TEST_TMPDIR/hooks.d"
	PSTORE=$BATS_TEST_TMPDIR/store
	local p="podman --root $PSTORE/root --runroot $PSTORE/run --storage-driver overlay"
	$p import "$BATS_TEST_TMPDIR/image.tar" localhost/ocidec-planted:1 >/dev/null
	# the layer as the engine applied it: the node is there, on the host's disk
	run $p run --rm --network none localhost/ocidec-planted:1 sh -c "ls -l $PROFILE | cut -c1"
	assert_output b
	run timeout 120 $p --hooks-dir "$BATS_TEST_TMPDIR/hooks.d" run --rm --network none -e NVIDIA_VISIBLE_DEVICES=0 \
		localhost/ocidec-planted:1 sh -c "cat $PROFILE; echo; ls -l $PROFILE | cut -c1"
	assert_equal "$(sha256sum <"$LOOP")" "$DISK"
	assert_success
	assert_output '{"profiles":[{"name":"_container_","settings":["EGLVisibleDGPUDevices",0x2]}],"rules":[{"pattern":[],"profile":"_container_"}]}'$'\n-'
}
