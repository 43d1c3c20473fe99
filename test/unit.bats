#!/usr/bin/env bats
# The C unit tests (test/unit/*.c: tables of cases, TAP), built with the
# sanitizers by `make unit-build` and run here, one test per program. They
# test pure functions, not the binary under test: they run once, in the
# static build's pass.

load helpers

setup_file() {
	make -s -C "$BATS_TEST_DIRNAME/.." unit-build >&2
}

setup() {
	common_setup
	is_static || skip "the unit tests run once, in the static build's pass"
}

unit() {
	run "$BATS_TEST_DIRNAME/../build/unit/$1"
	assert_success
	refute_output --partial "not ok"
	assert_line --regexp '^1\.\.[1-9][0-9]*$'
}

@test "unit: text (glob_match as fnmatch, ere_search as regexec, utc_time as gmtime_r, path joins, the idle path's index) (issue 34)" {
	unit text
}

@test "unit: engines (daemon.json merged and given back, containerd's import, NVIDIA_REQUIRE_* expressions) (issue 34)" {
	unit engines
}

@test "unit: devices (the typed selection: parsed, made from a container's value, as text) (issue 34)" {
	unit devices
}

@test "unit: fastnum (the static build's strtod for the idle path's numbers: the C library's value and end, to the bit, taken or handed on) (issue 48)" {
	unit fastnum
}

@test "unit: arena (the static build's first allocations: bump, never reused, zero for calloc, the large to the C library, an overrun header stops the run) (issue 34)" {
	unit arena
}

@test "unit: cachehook (the cache hook's command line: written, read back the same; each wrong argument refused; no option code shared with the hooks') (issue 34)" {
	unit cachehook
}

@test "unit: nri (the NRI plugin's framing read back whole however the bytes come, frames of 4096 bytes at most, lengths over the limits refused; NRI's container as config.json's view; ocidec's cache hook recognised; the runtimes that take a plugin's CDI devices, containerd 2.1 and later) (issues 35, 49)" {
	unit nri
}

@test "unit: hostfiles (NVIDIA's CSV lists of host files: each line as NVIDIA's parser takes or refuses it, L4T's forms, line numbers) (issue 36)" {
	unit hostfiles
}

@test "unit: activate (switches and companions: NVIDIA_GDS=enabled only as NVIDIA compares it, only beside a GPU request from any source, none included; chains; a container asking for nothing) (issue 37)" {
	unit activate
}

@test "unit: appprofile (NVIDIA's application profile: the GPU node names it counts, the profile's text as NVIDIA's update-application-profile writes it) (issue 37)" {
	unit appprofile
}

@test "unit: grpc (ocidec dra's gRPC: the 5-byte prefix read however the bytes come, lengths over the bound refused; grpc-message percent-encoding; driver names as DNS subdomains) (issue 50)" {
	unit grpc
}

@test "unit: dra (ocidec dra's claims and slices: a claim's allocation mapped to ocidec's devices and each refusal, SemVer and DNS-label checks, device names, /etc/hosts lookups) (issue 50)" {
	unit dra
}

@test "every test/unit program has its test here" {
	for f in "$BATS_TEST_DIRNAME"/unit/*.c; do
		n=$(basename "$f" .c)
		grep -q "^	unit $n\$" "$BATS_TEST_FILENAME" || fail "test/unit/$n.c is not run"
	done
}
