#!/usr/bin/env bats
# The multi-call binary: applet selection, --help, --version, exit codes.

load helpers

setup() {
	common_setup
}

@test "--version prints 'ocidec VERSION'" {
	run ocidec --version
	assert_success
	assert_output "ocidec $(cat "$BATS_TEST_DIRNAME/../VERSION")"
}

@test "--list prints every applet, one per line" {
	run ocidec --list
	assert_success
	assert_output "$APPLETS"
	[ "$(wc -l <<<"$APPLETS")" -ge 6 ]
}

@test "--help, -h and help print usage and the applets to stdout" {
	for h in --help -h help; do
		run --separate-stderr ocidec "$h"
		assert_success
		assert_line --index 0 --partial "usage: ocidec APPLET"
		assert_line --regexp '^  hook +the OCI prestart hook'
		assert_line --regexp '^  selinux-check +SELinux: '
		# one line per applet, each within 80 columns
		[ "$(grep -c '^  [a-z]' <<<"$output")" -eq "$(wc -l <<<"$APPLETS")" ]
		refute_line --regexp '^.{81,}$' 
	done
}

@test "each applet's --help, -h and --version, through argv[0] APPLET, ocidec-APPLET and 'ocidec APPLET'" {
	for a in $APPLETS; do
		[ "$a" != runtime ] || continue   # below
		for cmd in "$BIN/$a" "ocidec-$a" "ocidec $a"; do
			[ -e "${cmd%% *}" ] || [ "$cmd" != "$BIN/$a" ] || continue  # no bare "install" link
			for h in --help -h; do
				run --separate-stderr $cmd $h
				assert_success
				assert_line --index 0 --partial "usage: ocidec $a"
				[ -z "$stderr" ]
			done
			run $cmd --version
			assert_output "ocidec $(cat "$BATS_TEST_DIRNAME/../VERSION")"
		done
	done
}

@test "the runtime passes --version and --help to runc, after its own; --ocidec-help is its own" {
	for cmd in runtime ocidec-runtime "ocidec runtime"; do
		run $cmd --version
		assert_success
		assert_line --index 0 --partial "ocidec-runtime"
		assert_line --index 1 --partial "runc version"
		run $cmd --help
		assert_success
		assert_output --partial "runc"
		run --separate-stderr $cmd --ocidec-help
		assert_success
		assert_line --index 0 --partial "usage: ocidec runtime"
	done
}

@test "argv[0] dispatch reaches the applet, not the multi-call usage" {
	run list -c /nonexistent
	assert_failure 2
	assert_output "ocidec list: config directory /nonexistent: No such file or directory"
}

@test "an unknown applet is a usage error, one line" {
	run ocidec frobnicate
	assert_failure 2
	assert_output "ocidec: unknown applet 'frobnicate' (ocidec --list names them)"
	run ocidec ocidec-list
	assert_failure 2
}

@test "no arguments: usage and the applets on stderr, exit 2" {
	run --separate-stderr ocidec
	assert_failure 2
	[ -z "$output" ]
	[[ $stderr == usage:* ]]
	[[ $stderr == *$'\n  hook  '* ]]
}

@test "an unknown option is a usage error naming it, one line" {
	run list --frobnicate
	assert_failure 2
	assert_output "ocidec list: unknown option '--frobnicate' (see ocidec list --help)"
	run list -c
	assert_failure 2
	assert_output "ocidec list: option '-c' needs an argument (see ocidec list --help)"
}

@test "every applet is built: none answers 'not implemented yet'" {
	for a in $("$OCIDEC" --list); do
		run "ocidec-$a" --definitely-not-an-option
		# (the runtime hands it to runc, which fails with 1)
		if [ "$a" = runtime ]; then
			assert_failure 1
		else
			assert_failure 2
		fi
		refute_output --partial "not implemented"
	done
}

@test "the binary is static and stripped" {
	is_static || skip "sanitizer build"
	run file -L "$OCIDEC"
	assert_output --partial "statically linked"
	assert_output --partial "stripped"
	refute_output --partial "interpreter"
}

@test "the binary runs alone in an empty chroot" {
	is_static || skip "sanitizer build"
	root=$BATS_TEST_TMPDIR/empty
	mkdir "$root"
	cp "$OCIDEC" "$root/ocidec"
	run chroot "$root" /ocidec --version
	assert_success
	assert_output --partial "ocidec "
	run chroot "$root" /ocidec --list
	assert_success
}

@test "make install and uninstall honour DESTDIR, PREFIX, SYSCONFDIR: binary, a symlink per applet, configs kept when changed, man page, hook" {
	is_static || skip "installs the static build"
	d=$BATS_TEST_TMPDIR/dest
	run make -s -C "$BATS_TEST_DIRNAME/.." install DESTDIR="$d" PREFIX=/opt/oc
	assert_success
	assert_file_executable "$d/opt/oc/bin/ocidec"
	for a in $APPLETS; do
		[ "$(readlink "$d/opt/oc/bin/ocidec-$a")" = ocidec ]
	done
	assert_file_exist "$d/etc/ocidec/ocidec.d/nvidia.ini"
	assert_file_exist "$d/etc/ocidec/ocidec.d/solarflare.ini"
	assert_file_exist "$d/etc/ocidec/ocidec.d/amd.ini"
	assert_file_exist "$d/etc/ocidec/ocidec.d/intel.ini"
	assert_file_exist "$d/etc/ocidec/ocidec.d/habana.ini"
	assert_file_exist "$d/opt/oc/share/man/man1/ocidec.1"
	# relative, so it holds in DESTDIR, a package and an image alike
	[ "$(readlink "$d/opt/oc/libexec/oci/hooks.d/ocidec-hook")" = ../../../bin/ocidec ]
	[ "$(readlink -f "$d/opt/oc/libexec/oci/hooks.d/ocidec-hook")" = "$d/opt/oc/bin/ocidec" ]
	# a page of its own for each applet: man ocidec-APPLET
	for a in $APPLETS; do
		assert_file_exist "$d/opt/oc/share/man/man1/ocidec-$a.1"
		run man -w -M "$d/opt/oc/share/man" "ocidec-$a"
		assert_output "$d/opt/oc/share/man/man1/ocidec-$a.1"
	done
	# a local install too: the hooks.d file where podman and CRI-O read it
	# by default, naming the installed hook
	run perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->{hook}{path}' <"$d/usr/share/containers/oci/hooks.d/ocidec.json"
	assert_output /opt/oc/libexec/oci/hooks.d/ocidec-hook
	run "$d/opt/oc/bin/ocidec-list" -c "$d/etc/ocidec/ocidec.d"
	assert_success
	# a config changed here survives a reinstall and the uninstall
	echo "; mine" >>"$d/etc/ocidec/ocidec.d/nvidia.ini"
	run make -s -C "$BATS_TEST_DIRNAME/.." install DESTDIR="$d" PREFIX=/opt/oc
	assert_success
	assert_output "$d/etc/ocidec/ocidec.d/nvidia.ini: changed here, kept; the shipped one is $d/etc/ocidec/ocidec.d/nvidia.ini.new"
	run tail -n 1 "$d/etc/ocidec/ocidec.d/nvidia.ini"
	assert_output "; mine"
	run make -s -C "$BATS_TEST_DIRNAME/.." uninstall DESTDIR="$d" PREFIX=/opt/oc
	assert_success
	run find "$d" -type f -o -type l
	assert_output "$d/etc/ocidec/ocidec.d/nvidia.ini"
	# a package's prefix: the packaged hooks.d location
	run make -s -C "$BATS_TEST_DIRNAME/.." install DESTDIR="$d/pkg" PREFIX=/usr
	assert_success
	assert_file_exist "$d/pkg/usr/share/containers/oci/hooks.d/ocidec.json"
}

@test "messages say what is wrong and what to do: no state on stdin, no such process, an unreadable config (exit 2), a config directory without vendor files (issue 33, finding 7)" {
	DR=$BATS_TEST_TMPDIR/dr
	demo_vendor
	run ocidec hook -c "$CFG" </dev/null
	assert_failure 2
	assert_output --partial "ocidec hook: no container state on stdin: the engine gives a hook the OCI state"
	assert_output --partial "ocidec hook --dry-run <<<"
	run ocidec hook -c "$CFG" <<<'{"bundle": '
	assert_failure
	assert_output --partial "ocidec hook: container state: invalid JSON at byte"
	run ocidec inject -c "$CFG" --pid 4194303 --dry-run demo
	assert_failure 1
	assert_output "ocidec inject: --pid 4194303: no such process"
	d=$CFG
	while [ "$d" != /tmp ] && [ "$d" != / ]; do chmod a+x "$d"; d=$(dirname "$d"); done
	chmod 0000 "$CFG/demo.ini"
	run setpriv --reuid 65534 --regid 65534 --clear-groups "$OCIDEC" list -c "$CFG"
	chmod 0644 "$CFG/demo.ini"
	assert_failure 2
	assert_output --partial "demo.ini: open: Permission denied"
	mkdir -m 0755 "$BATS_TEST_TMPDIR/none"
	echo '[vendor]' >"$BATS_TEST_TMPDIR/none/demo.conf"
	run cdi -c "$BATS_TEST_TMPDIR/none"
	assert_failure 2
	assert_output "ocidec cdi: $BATS_TEST_TMPDIR/none has no vendor file (NAME.ini): no spec"
}
