#!/usr/bin/env bats
# build.sh against apt configurations of other hosts: `./build.sh sources`
# prints the deb-src lines its private apt setup would use, from a fake
# apt state (Release files in a lists directory) through APT_CONFIG.

load helpers

# fake_apt ORIGIN|URI|SUITE... : an apt config whose indextargets lists each
# archive (component main), with that origin in its Release file
fake_apt() {
	local a=$BATS_TEST_TMPDIR/apt line origin uri suite host path
	mkdir -p "$a/lists/partial" "$a/parts"
	: >"$a/sources.list"
	for line in "$@"; do
		IFS='|' read -r origin uri suite <<<"$line"
		echo "deb $uri $suite main" >>"$a/sources.list"
		host=${uri#http://}
		path=$(tr / _ <<<"${host%/}")_dists_${suite}
		printf 'Origin: %s\nLabel: %s\nSuite: %s\nCodename: %s\nComponents: main\nArchitectures: amd64\n' \
			"$origin" "$origin" "$suite" "$suite" >"$a/lists/${path}_Release"
		: >"$a/lists/${path}_main_binary-amd64_Packages"
	done
	printf 'Dir::Etc::SourceList "%s";\nDir::Etc::SourceParts "%s";\nDir::State::Lists "%s";\n' \
		"$a/sources.list" "$a/parts" "$a/lists" >"$a/apt.conf"
	echo "$a/apt.conf"
}

@test "build.sh sources: bookworm-backports (origin 'Debian Backports') is a Debian archive; other origins are left out; the other architecture's musl from the same archives (issue 36); unstable's binary packages for NRI 0.8's api.proto (issue 49)" {
	[ "$(dpkg --print-architecture)" = amd64 ] || skip "the expected lines are an amd64 machine's"
	conf=$(fake_apt "Debian|http://deb.debian.org/debian/|bookworm" \
		"Debian Backports|http://deb.debian.org/debian/|bookworm-backports" \
		"Debian|http://deb.debian.org/debian-security/|bookworm-security" \
		"Docker|http://download.docker.com/linux/debian/|bookworm")
	run env APT_CONFIG="$conf" "$BATS_TEST_DIRNAME/../build.sh" sources
	assert_success
	k=
	[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] && k=" [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	assert_output "deb-src$k http://deb.debian.org/debian-security/ bookworm-security main
deb-src$k http://deb.debian.org/debian/ bookworm main
deb-src$k http://deb.debian.org/debian/ bookworm-backports main
deb-src$k http://deb.debian.org/debian/ trixie main
deb [arch=arm64${k:+ ${k:2:-1}}] http://deb.debian.org/debian-security/ bookworm-security main
deb [arch=arm64${k:+ ${k:2:-1}}] http://deb.debian.org/debian/ bookworm main
deb [arch=arm64${k:+ ${k:2:-1}}] http://deb.debian.org/debian/ bookworm-backports main
deb [arch=amd64${k:+ ${k:2:-1}}] http://deb.debian.org/debian/ trixie main
deb [arch=amd64${k:+ ${k:2:-1}} check-valid-until=no] http://deb.debian.org/debian/ unstable main"
}

@test "build.sh sources: on Ubuntu the other architecture's musl comes from Ubuntu's ports mirror (issue 36)" {
	[ "$(dpkg --print-architecture)" = amd64 ] || skip "the expected lines are an amd64 machine's"
	conf=$(fake_apt "Ubuntu|http://archive.ubuntu.com/ubuntu/|noble" \
		"Ubuntu|http://security.ubuntu.com/ubuntu/|noble-security")
	run env APT_CONFIG="$conf" "$BATS_TEST_DIRNAME/../build.sh" sources
	assert_success
	assert_output "deb-src http://archive.ubuntu.com/ubuntu/ noble main
deb-src http://security.ubuntu.com/ubuntu/ noble-security main
deb [arch=arm64] http://ports.ubuntu.com/ubuntu-ports/ noble main
deb [arch=arm64] http://ports.ubuntu.com/ubuntu-ports/ noble-security main"
}

@test "build.sh sources: no Debian or Ubuntu archive is a clear error" {
	conf=$(fake_apt "Docker|http://download.docker.com/linux/debian/|bookworm")
	run env APT_CONFIG="$conf" "$BATS_TEST_DIRNAME/../build.sh" sources
	assert_failure 1
	assert_output "build.sh: fatal: no Debian or Ubuntu archive in the system's apt sources"
}

@test "the demo: the program runs, the device opens, no error under a success heading; --keep keeps the vendor and prints commands that work (issue 33, finding 9)" {
	run "$BATS_TEST_DIRNAME/../demo.sh" --keep
	assert_success
	assert_line "demo-tool: the answer is 42"
	assert_line "opened /dev/democtl: the hook allowed it in the container's device cgroup"
	refute_output --partial "read error"
	work=$(sed -n 's/^== next: the demo vendor is kept in //p' <<<"$output")
	[ -d "$work/conf.d" ]
	# each printed command, as printed (with the binary under test)
	while read -r cmd; do
		cmd=${cmd%%#*}
		[[ $cmd == build/ocidec* ]] || continue
		run bash -c "cd '$BATS_TEST_DIRNAME/..' && ${cmd/build\/ocidec/$OCIDEC}"
		# it runs: check may find this machine not ready (1), nothing is a usage error
		[ "$status" -lt 2 ] || { echo "$cmd: exit $status: $output"; false; }
	done < <(sed -n '/^== next:/,$p' <<<"$output")
	rm -rf "$work"
	run "$BATS_TEST_DIRNAME/../demo.sh"
	assert_line --partial "== next: ./demo.sh --keep"
}

# The library's wings, lowest first (the Makefile's WINGS, docs/architecture.md)
WINGS=$(sed -n 's/^WINGS *:= *//p' "$BATS_TEST_DIRNAME/../Makefile")

# wing_includes TOP: every include of a library module in TOP's wings and
# applets ("FILE WING MODULE" each line), for the checks below
wing_includes() {
	local w f
	for w in $WINGS applets; do
		for f in "$1/$w"/*.[ch]; do
			[ -e "$f" ] || continue
			sed -n 's|^#include "\([a-z]*\)/\([a-z_]*\)\.h".*|\1 \2|p' "$f" | sed "s|^|$w/$(basename "$f") |"
		done
	done
}

# layering TOP: the includes that break the wings' order (a wing includes
# only its own and the wings before it; applets any wing), one a line
layering() {
	wing_includes "$1" | awk -v wings="$WINGS" '
		BEGIN { n = split(wings, w, " "); for (i = 1; i <= n; i++) rank[w[i]] = i; rank["applets"] = n + 1 }
		($2 in rank) && $2 != "applets" { split($1, f, "/"); if (rank[$2] > rank[f[1]]) print $1 " includes " $2 "/" $3 ".h" }'
}

@test "the library's modules include one another without a circle (issue 34: the device layer below activation, MIG and the planner)" {
	[ "$(echo $WINGS)" = "base safety formats devices pipeline engines" ]
	run python3 - <<-EOF2
	import re, sys
	deps = {}
	for line in """$(wing_includes "$BATS_TEST_DIRNAME/.." | grep -v '^applets/')""".splitlines():
	    f, wing, inc = line.split()
	    mod = f.split("/")[1].rsplit(".", 1)[0]
	    if wing != "applets" and inc != mod:
	        deps.setdefault(mod, set()).add(inc)
	# a circle: a module reached again from itself
	def walk(m, path):
	    for d in sorted(deps.get(m, ())):
	        if d in path:
	            print("circle: " + " -> ".join(path[path.index(d):] + [d]))
	            sys.exit(1)
	        walk(d, path + [d])
	for m in sorted(deps):
	    walk(m, [m])
	print("%d modules, no circle" % len(deps))
	EOF2
	assert_success
	assert_output --regexp '^[0-9]+ modules, no circle$'
	# and the device layer knows no container
	run grep -l '#include "[a-z]*/\(activate\|container\|plan\|mig\)\.h"' "$BATS_TEST_DIRNAME"/../devices/devices.[ch]
	assert_failure
}

@test "each wing includes only its own modules and the wings before it (base, safety, formats, devices, pipeline, engines), as docs/architecture.md says (issue 48)" {
	run layering "$BATS_TEST_DIRNAME/.."
	assert_output ""
	# what it reads is there: every wing's files, and their includes
	[ "$(wing_includes "$BATS_TEST_DIRNAME/.." | wc -l)" -gt 300 ]
	for w in $WINGS; do ls "$BATS_TEST_DIRNAME/../$w"/*.c >/dev/null; done
	# the check can fail: a lower wing that includes a higher one is named
	top=$BATS_TEST_TMPDIR/tree
	mkdir -p "$top/base" "$top/pipeline"
	printf '#include "base/util.h"\n#include "pipeline/plan.h"\n' >"$top/base/util.c"
	printf '#include "base/util.h"\n' >"$top/pipeline/plan.c"
	run layering "$top"
	assert_output "base/util.c includes pipeline/plan.h"
}

# The files of DIR (applets/ or a wing) that include a header of applets/
# other than the dispatcher's (applet.h, applets.def), "FILE: LINE" each
applet_includes() {
	grep -H '#include "applets/' "$1"/*.[ch] | grep -v '#include "applets/\(applet\.h\|applets\.def\)"' |
		sed "s|^$1/||"
}

@test "no applet includes another applet's header, and the library none of applets/: what applets share is library code (issue 48)" {
	run applet_includes "$BATS_TEST_DIRNAME/../applets"
	assert_output ""
	for w in $WINGS; do
		run applet_includes "$BATS_TEST_DIRNAME/../$w"
		assert_output ""
	done
	# the check can fail: a file that does is named
	mkdir "$BATS_TEST_TMPDIR/applets"
	printf '#include "applets/applet.h"\n#include "applets/cdi.h"\n' >"$BATS_TEST_TMPDIR/applets/nri.c"
	run applet_includes "$BATS_TEST_TMPDIR/applets"
	assert_output 'nri.c:#include "applets/cdi.h"'
}

@test "the static build's packed --help texts (tools/usagez.c) unpack to the sanitizer build's plain ones, every applet's and ocidec's own (issue 48)" {
	is_static || skip "compares the static build with build/ocidec-asan: in the static build's pass"
	asan=$BATS_TEST_DIRNAME/../build/ocidec-asan
	[ -x "$asan" ] || skip "no build/ocidec-asan here (./build.sh check makes it before the suites run)"
	for a in $("$OCIDEC" --list) ""; do
		ASAN_OPTIONS=detect_leaks=0 "$asan" $a --help >"$BATS_TEST_TMPDIR/plain" 2>&1 || true
		"$OCIDEC" $a --help >"$BATS_TEST_TMPDIR/packed" 2>&1 || true
		[ -s "$BATS_TEST_TMPDIR/packed" ] || { echo "ocidec $a --help: empty"; false; }
		cmp "$BATS_TEST_TMPDIR/plain" "$BATS_TEST_TMPDIR/packed" || { echo "ocidec $a --help differs"; diff "$BATS_TEST_TMPDIR/plain" "$BATS_TEST_TMPDIR/packed" | head; false; }
	done
	"$OCIDEC" runtime --ocidec-help >"$BATS_TEST_TMPDIR/packed" 2>&1 || true
	ASAN_OPTIONS=detect_leaks=0 "$asan" runtime --ocidec-help >"$BATS_TEST_TMPDIR/plain" 2>&1 || true
	cmp "$BATS_TEST_TMPDIR/plain" "$BATS_TEST_TMPDIR/packed"
}

@test "no sscanf in our code: the C library's scanner (4 KB) stays out of the static binary (issue 48)" {
	cd "$BATS_TEST_DIRNAME/.."
	run grep -rnE '\bv?sscanf *\(' --include=*.c base safety formats devices pipeline engines applets ocidec.c
	assert_failure
	assert_output ''
}
