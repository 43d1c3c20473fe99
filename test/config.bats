#!/usr/bin/env bats
# Vendor configs (ocidec(1), VENDOR CONFIGS): what loads, and one case per kind of
# error, each a one-line "FILE:LINE: what" message with exit 2.

load helpers

setup() {
	common_setup
}

# bad_ini LINE... : a config whose file is $CFG/bad.ini
bad_ini() {
	printf '%s\n' "$@" | write_ini bad
}

# expect_error MESSAGE: list fails with exit 2 and exactly this one line
expect_error() {
	run --separate-stderr list -c "$CFG"
	assert_failure 2
	[ -z "$output" ]
	[ "$stderr" = "ocidec list: $1" ] || { echo "got: $stderr"; false; }
}

@test "the shipped configs load" {
	cp "$CONF"/*.ini "$CFG"/ && chmod 0644 "$CFG"/*.ini
	run list -c "$CFG"
	assert_success
}

@test "a config using every key loads" {
	write_ini acme <"$FIXTURES/good.ini"
	run list -c "$CFG" acme
	assert_success
}

@test "an empty directory, and non-.ini files, give nothing" {
	echo garbage >"$CFG/README"
	echo "[vendor" >"$CFG/old.ini.bak"
	run list -c "$CFG"
	assert_success
	assert_output ""
}

@test "unknown key, with file and line" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "" "[feature.compute]" "libaries = libfoo.so.1"
	expect_error "$CFG/bad.ini:5: unknown key 'libaries' in [feature.compute]"
}

@test "unknown key in [vendor]" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "drvier_root = /"
	expect_error "$CFG/bad.ini:3: unknown key 'drvier_root' in [vendor]"
}

@test "unknown section, even an empty one" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[features.compute]"
	expect_error "$CFG/bad.ini:3: unknown section [features.compute]"
}

@test "missing activation_flag names the [vendor] line" {
	bad_ini "; comment" "[vendor]" "name = x"
	expect_error "$CFG/bad.ini:2: [vendor] has no activation_flag"
}

@test "empty activation_flag" {
	bad_ini "[vendor]" "activation_flag ="
	expect_error "$CFG/bad.ini:2: activation_flag is empty"
}

@test "activation_flag that is no environment variable name" {
	bad_ini "[vendor]" "activation_flag = OCI-X"
	expect_error "$CFG/bad.ini:2: activation_flag 'OCI-X' is not an environment variable name"
}

@test "no [vendor] section" {
	bad_ini "[feature.a]" "devices = a"
	expect_error "$CFG/bad.ini:1: no [vendor] section"
}

@test "two files claiming one vendor name: the second is named" {
	printf '[vendor]\nactivation_flag = OCI_A\n' | write_ini a
	printf '[vendor]\nname = a\nactivation_flag = OCI_B\n' | write_ini b
	expect_error "$CFG/b.ini:2: vendor 'a' is already defined in $CFG/a.ini"
}

@test "malformed list: an empty item between commas" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.a]" "devices = a,,b"
	expect_error "$CFG/bad.ini:4: malformed list for 'devices': empty item"
}

@test "malformed list: a trailing comma" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.a]" "binaries = a,"
	expect_error "$CFG/bad.ini:4: malformed list for 'binaries': empty item"
}

@test "malformed list: a relative directory" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.a]" "directories = usr/share/x"
	expect_error "$CFG/bad.ini:4: malformed list for 'directories': 'usr/share/x' must be an absolute path"
}

@test "malformed list: a '..' component" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.a]" "miscellaneous = /etc/../shadow"
	expect_error "$CFG/bad.ini:4: malformed list for 'miscellaneous': '/etc/../shadow' has a '.' or '..' component"
}

@test "malformed list on a continuation line names that line" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.a]" "libraries = liba.so.1" "  libb.so.1 \"quoted\""
	expect_error "$CFG/bad.ini:5: malformed list for 'libraries': '\"quoted\"' has a character that is not allowed in a path or name"
}

@test "per-device pattern without %u" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "per_device_nodes = nvidia"
	expect_error "$CFG/bad.ini:3: malformed list for 'per_device_nodes': 'nvidia' needs exactly one %u"
}

@test "a scalar key does not continue on an indented line" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "driver_root = /a" "   /b"
	expect_error "$CFG/bad.ini:4: key 'driver_root' takes one value; only lists continue on indented lines"
}

@test "duplicate key" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.a]" "devices = a" "devices = b"
	expect_error "$CFG/bad.ini:5: duplicate key 'devices'"
}

@test "duplicate section" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.a]" "[feature.a]"
	expect_error "$CFG/bad.ini:4: duplicate section [feature.a]"
}

@test "key outside a section" {
	bad_ini "activation_flag = OCI_X" "[vendor]"
	expect_error "$CFG/bad.ini:1: key 'activation_flag' outside a section"
}

@test "a line that is neither section nor key" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "devices"
	expect_error "$CFG/bad.ini:3: malformed line (expected [section] or key = value)"
}

@test "driver_feature naming an unknown feature" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "driver_feature = compute" "[feature.utility]"
	expect_error "$CFG/bad.ini:3: driver_feature names unknown feature 'compute'"
}

@test "include naming an unknown feature" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "[feature.video]" "include = compute"
	expect_error "$CFG/bad.ini:4: include names unknown feature 'compute'"
}

@test "bad log_level and bad driver_root" {
	bad_ini "[vendor]" "activation_flag = OCI_X" "log_level = verbose"
	expect_error "$CFG/bad.ini:3: log_level must be error, warn, info or debug"
	bad_ini "[vendor]" "activation_flag = OCI_X" "driver_root = run/nvidia"
	expect_error "$CFG/bad.ini:3: driver_root must be an absolute path"
}

@test "a config file writable by group is refused" {
	bad_ini "[vendor]" "activation_flag = OCI_X"
	chmod 0664 "$CFG/bad.ini"
	expect_error "$CFG/bad.ini: refused: writable by group or others (mode 0664)"
}

@test "a config file writable by others is refused" {
	bad_ini "[vendor]" "activation_flag = OCI_X"
	chmod 0646 "$CFG/bad.ini"
	expect_error "$CFG/bad.ini: refused: writable by group or others (mode 0646)"
}

@test "a config file not owned by root is refused when running as root" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	bad_ini "[vendor]" "activation_flag = OCI_X"
	chown 1000 "$CFG/bad.ini"
	expect_error "$CFG/bad.ini: refused: owned by uid 1000, not root"
}

@test "a config directory writable by others is refused" {
	chmod 0777 "$CFG"
	expect_error "$CFG: refused: writable by group or others (mode 0777)"
}

@test "one bad file among good ones: nothing is printed, nothing half-done" {
	driver_root
	nvidia_ini "$DR"
	bad_ini "[vendor]" "activation_flag = OCI_X" "bogus = 1"
	run --separate-stderr list -c "$CFG"
	assert_failure 2
	[ -z "$output" ]
}

@test "lists continue on indented lines, split on spaces and commas" {
	driver_root
	mkdir -p "$BATS_TEST_TMPDIR/r/etc" "$BATS_TEST_TMPDIR/r/usr/share"
	for f in a b c d; do echo "$f" >"$BATS_TEST_TMPDIR/r/etc/$f"; done
	printf '%s\n' "[vendor]" "activation_flag = OCI_X" "driver_root = $BATS_TEST_TMPDIR/r" \
		"[feature.a]" "miscellaneous = /etc/a,/etc/b" "	/etc/c ; comment" "  , /etc/d" | write_ini x
	run list -c "$CFG"
	assert_success
	assert_output "$(printf "$BATS_TEST_TMPDIR/r/etc/%s\n" a b c d)"
}

@test "a vendor file that starts with a UTF-8 byte order mark: the idle path reads its activation keys as the full load does (issue 32, review)" {
	B=$BATS_TEST_TMPDIR/b DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	{ printf '\357\273\277'; sed 's/^activation_flag = OCI_DEMO$/activation_flag = ZZZ_DEMO/' "$CFG/demo.ini"; } >"$CFG/demo.new"
	mv "$CFG/demo.new" "$CFG/demo.ini"
	chmod 0644 "$CFG/demo.ini"
	run dry ZZZ_DEMO=all
	assert_success
	assert_line --partial "/dev/democtl"
}
