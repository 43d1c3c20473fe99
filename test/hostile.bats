#!/usr/bin/env bats
# Hostile images: a rootfs built to make the hook write or mount outside it.
# Each test watches a host directory the image points at (a fingerprint of
# names, types, modes and contents, before and after) and the host's mount
# table, and runs with both resolvers (openat2, and the checked walk).

load helpers

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/dr
	"$FIXTURES/demo-vendor.sh" "$DR" "$CFG" >/dev/null
	HOST=$BATS_TEST_TMPDIR/host
	mkdir -p "$HOST/sub"
	echo "host file" >"$HOST/file"
	echo "host conf" >"$HOST/demo.conf"
	B=$BATS_TEST_TMPDIR/bundle
	ID=ocidec-hostile-$$-$BATS_TEST_NUMBER
}

teardown() {
	runc delete -f "$ID" >/dev/null 2>&1 || true
}

fingerprint() {
	(cd "$1" && find . -printf '%p %y %l %s %m\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

host_mounts() {
	cut -d' ' -f5 /proc/1/mountinfo | LC_ALL=C sort
}

# attack MODE PREPARE [SCRIPT]: a fresh bundle, PREPARE run in its rootfs
# (cwd), the container started with OCI_DEMO=all; sets $status/$output.
# Asserts the host directory and the host's mounts did not change.
attack() {
	local mode=$1 prepare=$2 script=${3:-demo-tool}
	rm -rf "$B"
	HOOK="$OCIDEC ocidec-hook -c $CFG --resolver $mode prestart" \
		"$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- sh -c "$script" >/dev/null
	(cd "$B/rootfs" && eval "$prepare")
	local before mounts
	before=$(fingerprint "$HOST")
	mounts=$(host_mounts)
	run bash -c "cd '$B' && timeout 60 runc run '$ID' 2>&1"
	runc delete -f "$ID" >/dev/null 2>&1 || true
	assert_equal "$(fingerprint "$HOST")" "$before"
	assert_equal "$(host_mounts)" "$mounts"
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
