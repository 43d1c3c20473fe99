#!/usr/bin/env bats
# The libFuzzer targets (test/fuzz/), run for a bounded number of inputs.
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
