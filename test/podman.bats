#!/usr/bin/env bats
# The hook under podman 4.3 (Debian's, with runc): `podman --hooks-dir DIR
# run --rootfs DIR`, the hooks.d file made from the shipped one
# (conf/hooks.d/ocidec.json) with this binary and the test's config dir.

load helpers

setup() {
	common_setup
	is_static || skip "podman runs the hook once, in the static build's pass"
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	ROOTFS=$BATS_TEST_TMPDIR/b/rootfs
	"$FIXTURES/bundle.sh" "$BATS_TEST_TMPDIR/b" >/dev/null
	podman_conf
	HOOKS=$BATS_TEST_TMPDIR/hooks.d
	podman_hooks "$HOOKS"
}

prun() {
	timeout 120 podman --hooks-dir "$HOOKS" run --rm --network none "$@"
}

@test "the shipped hooks.d file runs the hook with an explicit env, for every container" {
	run perl -MJSON::PP -e 'local $/; my $h = decode_json(<STDIN>);
		print join(" ", $h->{hook}{path}, @{$h->{hook}{env}}, $h->{when}{always} ? "always" : "", @{$h->{stages}}), "\n"' \
		<"$BATS_TEST_DIRNAME/../conf/hooks.d/ocidec.json"
	assert_output "/usr/libexec/oci/hooks.d/ocidec-hook PATH=/usr/sbin:/usr/bin:/sbin:/bin always prestart"
}

@test "podman: an activated container gets the device, library and program" {
	run prun -e OCI_DEMO=all --rootfs "$ROOTFS" sh -c 'demo-tool; grep -c " /opt/demo/lib/libdemo.so.1.0 " /proc/self/mountinfo; cat /dev/democtl </dev/null'
	assert_line "demo-tool: the answer is 42"
	assert_line 1
	assert_line "cat: read error: Invalid argument"
}

@test "podman: without activation nothing is injected" {
	run prun --rootfs "$ROOTFS" sh -c 'grep -c demo /proc/self/mountinfo; test -e /usr/bin/demo-tool || echo none'
	assert_output $'0\nnone'
}

@test "podman: two vendors at once" {
	mkdir -p "$BATS_TEST_TMPDIR/dr2/etc"
	echo "from the other vendor" >"$BATS_TEST_TMPDIR/dr2/etc/other.conf"
	printf '[vendor]\nname = other\nactivation_flag = OCI_OTHER\ndriver_root = %s\n[feature.base]\nmiscellaneous = /etc/other.conf\n' \
		"$BATS_TEST_TMPDIR/dr2" | write_ini other
	run prun -e OCI_DEMO=0 -e OCI_OTHER=all --rootfs "$ROOTFS" sh -c 'demo-tool; cat /etc/other.conf; ls /dev | grep demo'
	assert_output $'demo-tool: the answer is 42\nfrom the other vendor\ndemo0\ndemoctl'
}
