#!/usr/bin/env bats
# The hook under load and under faults, with real runc containers and the
# demo vendor: many containers starting at once, and the hook killed at a
# random point of its work. Bounded: every run has a timeout, and the suite
# stops by itself.

load helpers

setup() {
	common_setup
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	ID=ocidec-load-$$-$BATS_TEST_NUMBER
}

teardown() {
	for id in $(runc list -q 2>/dev/null | grep -F "$ID" || true); do
		runc delete -f "$id" >/dev/null 2>&1 || true
	done
}

# how many of the host's mount points are under this test's directory
own_mounts() { mounts_under "$BATS_TEST_TMPDIR" | wc -l; }

# cache_ok ROOTFS: a cache ocidec reads whole, with the injected library
cache_ok() {
	run "$OCIDEC" ldcache -p -r "$1"
	assert_success
	assert_output --partial "libdemo.so.1 (libc6,x86-64) => /opt/demo/lib/libdemo.so.1"
}

@test "100 containers start at once: no failure, no mount left on the host, every cache valid" {
	N=100
	HOOK="$OCIDEC ocidec-hook -c $CFG prestart" RW=1 "$FIXTURES/bundle.sh" "$BATS_TEST_TMPDIR/b0" \
		OCI_DEMO=all -- demo-tool >/dev/null
	for i in $(seq 1 $N); do
		mkdir "$BATS_TEST_TMPDIR/b$i"
		cp -al "$BATS_TEST_TMPDIR/b0/rootfs" "$BATS_TEST_TMPDIR/b$i/rootfs"
		cp "$BATS_TEST_TMPDIR/b0/config.json" "$BATS_TEST_TMPDIR/b$i/"
	done
	before=$(own_mounts)
	for i in $(seq 1 $N); do
		(cd "$BATS_TEST_TMPDIR/b$i" && timeout 300 runc run "$ID-$i" >out 2>&1; echo $? >rc) &
	done
	wait
	failed=0
	for i in $(seq 1 $N); do
		b=$BATS_TEST_TMPDIR/b$i
		if [ "$(cat "$b/rc")" != 0 ] || [ "$(cat "$b/out")" != "demo-tool: the answer is 42" ]; then
			failed=$((failed + 1))
			echo "# container $i: exit $(cat "$b/rc"): $(cat "$b/out")" >&3
		fi
	done
	assert_equal "$failed" 0
	assert_equal "$(own_mounts)" "$before"
	for i in $(seq 1 $N); do
		cache_ok "$BATS_TEST_TMPDIR/b$i/rootfs"
	done
}

@test "the hook killed at random points (20 rounds): the next start finds a valid cache and no temporary file" {
	B=$BATS_TEST_TMPDIR/b
	# the hook, killed with SIGKILL 0 to 25 ms into its work
	cat >"$BATS_TEST_TMPDIR/killer" <<EOT
#!/bin/bash
exec 3<&0
"$OCIDEC" hook -c "$CFG" prestart <&3 &
sleep "0.0\$((RANDOM % 26))"
kill -9 \$! 2>/dev/null
wait
exit 1
EOT
	chmod 0755 "$BATS_TEST_TMPDIR/killer"
	HOOK="$OCIDEC ocidec-hook -c $CFG prestart" RW=1 "$FIXTURES/bundle.sh" "$B" OCI_DEMO=all -- demo-tool >/dev/null
	# a library directory large enough for the kill to land in the work
	mkdir -p "$B/rootfs/opt/demo/lib"
	for i in $(seq 1 300); do cp "$DR/opt/demo/lib/libdemo.so.1.0" "$B/rootfs/opt/demo/lib/libimage$i.so.1"; done
	cp "$B/config.json" "$BATS_TEST_TMPDIR/good.json"
	perl -MJSON::PP -i -0pe '$c = decode_json($_); $c->{hooks}{prestart} = [{path => "'"$BATS_TEST_TMPDIR/killer"'", env => ["PATH=/usr/bin:/bin"]}]; $_ = encode_json($c)' "$B/config.json"
	cp "$B/config.json" "$BATS_TEST_TMPDIR/killer.json"
	left=0
	for round in $(seq 1 20); do
		cp "$BATS_TEST_TMPDIR/killer.json" "$B/config.json"
		run bash -c "cd '$B' && timeout 60 runc run '$ID-k$round' 2>&1"
		assert_failure
		runc delete -f "$ID-k$round" >/dev/null 2>&1 || true
		if [ -n "$(find "$B/rootfs" -name '.*.ocidec-*')" ]; then left=$((left + 1)); fi
		cp "$BATS_TEST_TMPDIR/good.json" "$B/config.json"
		run bash -c "cd '$B' && timeout 60 runc run '$ID-g$round' 2>&1"
		assert_success
		assert_output "demo-tool: the answer is 42"
		runc delete -f "$ID-g$round" >/dev/null 2>&1 || true
		cache_ok "$B/rootfs"
		run find "$B/rootfs" -name '.*.ocidec-*'
		assert_output ""
		# start the next round from an image without the cache
		rm -f "$B/rootfs/etc/ld.so.cache"
	done
	echo "# $left of 20 kills left temporary files, which the next start removed" >&3
}
