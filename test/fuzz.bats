#!/usr/bin/env bats
# The libFuzzer targets (test/fuzz/): the ld.so.cache and ELF readers, the
# vendor config loader, the container state and config.json with the
# activation decision, each run for a bounded number of inputs.
# They are a sanitizer build of their own, so they run in one pass only:
# with the static binary under test. `make fuzz` runs them for longer.

load helpers

setup() {
	common_setup
	is_static || skip "the fuzz targets run once, in the static build's pass"
}

@test "the ld.so.cache reader and writer survive 300000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 ldcache
	assert_success
	assert_line --regexp '^# ldcache: stat::number_of_executed_units: 300000$'
}

@test "the ELF reader survives 300000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 elf
	assert_success
	assert_line --regexp '^# elf: stat::number_of_executed_units: 300000$'
}

@test "the vendor config loader (inih and every check) survives 30000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 30000 300 config
	assert_success
	assert_line --regexp '^# config: stat::number_of_executed_units: 30000$'
}

@test "the container state reader survives 200000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 200000 300 state
	assert_success
	assert_line --regexp '^# state: stat::number_of_executed_units: 200000$'
}

@test "the config.json reader and the activation decision survive 200000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 200000 300 ociconfig
	assert_success
	assert_line --regexp '^# ociconfig: stat::number_of_executed_units: 200000$'
}

@test "the exact-number JSON reader and printer (the shim's config.json) survive 200000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 200000 300 json
	assert_success
	assert_line --regexp '^# json: stat::number_of_executed_units: 200000$'
}

@test "the containerd drop-in maker (containerd config dump's text) survives 50000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 50000 300 ctrd
	assert_success
	assert_line --regexp '^# ctrd: stat::number_of_executed_units: 50000$'
}

@test "systemd's replies (the D-Bus reader) and the calls made to it survive 300000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 sdbus
	assert_success
	assert_line --regexp '^# sdbus: stat::number_of_executed_units: 300000$'
}

@test "install's daemon.json merge survives 300000 fuzzed inputs, everything not ocidec's kept exactly" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 dockerjson
	assert_success
	assert_line --regexp '^# dockerjson: stat::number_of_executed_units: 300000$'
}

@test "the runtime shim's config.json rewrite survives 300000 fuzzed inputs, everything not ocidec's kept exactly" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 shimedit
	assert_success
	assert_line --regexp '^# shimedit: stat::number_of_executed_units: 300000$'
}

@test "install's import line in containerd's config.toml survives 300000 fuzzed inputs: taken out again, the text is byte for byte the node's" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 ctrdimport
	assert_success
	assert_line --regexp '^# ctrdimport: stat::number_of_executed_units: 300000$'
}

@test "an image's ld.so.conf (includes, globs, cycles) as the cache rebuild reads it survives 200000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 200000 300 ldconf
	assert_success
	assert_line --regexp '^# ldconf: stat::number_of_executed_units: 200000$'
}

@test "the image's requirement expressions (NVIDIA_REQUIRE_*) and libcuda's version text survive 300000 fuzzed inputs" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 require
	assert_success
	assert_line --regexp '^# require: stat::number_of_executed_units: 300000$'
}

@test "mig-map's reader of nvidia-smi's output (a driver container's) survives 300000 fuzzed inputs: each map line its five fields" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 mig
	assert_success
	assert_line --regexp '^# mig: stat::number_of_executed_units: 300000$'
}

@test "the hooks_dir lines of podman's and CRI-O's configuration (install and check read them) survive 300000 fuzzed inputs: a last line naming a directory always does (issue 33)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 hooksdir
	assert_success
	assert_line --regexp '^# hooksdir: stat::number_of_executed_units: 300000$'
}

@test "the reader of the idle path's index (/run/ocidec) survives 300000 fuzzed inputs: what it accepts is in order, and read twice reads the same (issue 34)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 keycache
	assert_success
	assert_line --regexp '^# keycache: stat::number_of_executed_units: 300000$'
}

@test "selinux-check's file_contexts matcher (formats/ere.c) answers as glibc's regexec on 20000 fuzzed expressions and paths (issue 34: it replaced libc's regex, 25 KB of the binary)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 20000 300 ere
	assert_success
	assert_line --regexp '^# ere: stat::number_of_executed_units: 20000$'
}

@test "the vendors' glob matcher (glob_match, which replaced libc's glob and fnmatch: 25 KB of the binary) answers as fnmatch on 300000 fuzzed patterns and names (issue 34)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 globmatch
	assert_success
	assert_line --regexp '^# globmatch: stat::number_of_executed_units: 300000$'
}

@test "the NRI plugin's inbound side (NRI's multiplexer, ttrpc's framing, the messages, the container's view) survives 300000 fuzzed inputs, in chunks as whole (issue 35)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 nrimux
	assert_success
	assert_line --regexp '^# nrimux: stat::number_of_executed_units: 300000$'
	# seeded by a session as a runtime sends it (test/fixtures/nri-trunk.py)
	[ -s "$BATS_TEST_DIRNAME/../build/fuzz/seeds/nrimux/session" ]
}

@test "the NRI plugin's outbound framing reads back as written, in frames of 4096 bytes at most, for 300000 fuzzed messages (issue 35)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 ttrpc
	assert_success
	assert_line --regexp '^# ttrpc: stat::number_of_executed_units: 300000$'
}

@test "NVIDIA's CSV lists of host files (a Jetson's, read by the hook from the driver root): 300000 fuzzed files, each line's answer the same alone as within the file, every item an absolute path or a bare device name (issue 36)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 hostfiles
	assert_success
	assert_line --regexp '^# hostfiles: stat::number_of_executed_units: 300000$'
}

@test "the KFD topology's properties files (AMD's partitions, read by the hook from sysfs): 100000 fuzzed files (issue 37)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 100000 300 kfd
	assert_success
	assert_line --regexp '^# kfd: stat::number_of_executed_units: 100000$'
}

@test "every fuzz target has its test here" {
	for f in "$BATS_TEST_DIRNAME"/fuzz/fuzz_*.c; do
		t=$(basename "$f" .c)
		t=${t#fuzz_}
		grep -q "fuzz/run.sh\" [0-9]* [0-9]* $t\$" "$BATS_TEST_FILENAME" || { echo "test/fuzz/fuzz_$t.c is not run"; return 1; }
	done
}

@test "ocidec dra's gRPC server (nghttp2's session, the streams' bodies, gRPC's prefix, the dispatch, protobuf-c's unpacking of the DRA requests) survives 300000 fuzzed inputs after the client preface, in chunks as whole (issue 50)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 300000 300 grpc
	assert_success
	assert_line --regexp '^# grpc: stat::number_of_executed_units: 300000$'
	# seeded by a client's session (python3-h2): two calls, a ping
	[ -s "$BATS_TEST_DIRNAME/../build/fuzz/seeds/grpc/session" ]
}

@test "ocidec dra's API client (nghttp2's client session on the API server's bytes, the answer's bounds, the JSON of a claim and of a slice list) survives 100000 fuzzed answers (issue 50)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 100000 300 kubeapi
	assert_success
	assert_line --regexp '^# kubeapi: stat::number_of_executed_units: 100000$'
}

@test "ocidec dra's claims (a ResourceClaim's allocation mapped to ocidec's devices, every refusal) survive 200000 fuzzed claims (issue 50)" {
	run "$BATS_TEST_DIRNAME/fuzz/run.sh" 200000 300 draclaim
	assert_success
	assert_line --regexp '^# draclaim: stat::number_of_executed_units: 200000$'
}
