#!/usr/bin/env bats
# The man page documents what the code takes: every long option of every
# applet's getopt table, and every key the vendor config loader knows.
# (The tables are read from the sources: what a user can type.)

load helpers

TOP=$BATS_TEST_DIRNAME/..

# the man page's text for OPTION ("--print-cache" is \-\-print\-cache there)
in_man() {
	grep -qF -- "$(sed 's/-/\\-/g' <<<"$1")" "$TOP/ocidec.1"
}

@test "every long option of every applet is in the man page" {
	missing=()
	for f in "$TOP"/applets/*.c; do
		for o in $(sed -n '/struct option opts\[\]/,/{ 0 }/p' "$f" | grep -o '{ "[a-z0-9-]*"' | sed 's/{ "//; s/"//'); do
			in_man "--$o" || missing+=("$(basename "$f" .c) --$o")
		done
	done
	[ "${#missing[@]}" -gt 0 ] && printf 'not in ocidec.1: %s\n' "${missing[@]}"
	[ "${#missing[@]}" -eq 0 ]
	# the check can fail: an option nobody documented is found
	! in_man "--no-such-option-anywhere"
}

@test "every vendor config key the loader knows is in the man page" {
	keys=$(grep -o 'strcmp(key, "[a-z_]*")' "$TOP/common/config.c" | sed 's/.*"\(.*\)")/\1/' | sort -u)
	[ "$(wc -w <<<"$keys")" -gt 20 ]
	missing=()
	for k in $keys; do
		grep -qE "^\.B[RI]? (.* )?\"?$k( |\"|$)" "$TOP/ocidec.1" || missing+=("$k")
	done
	[ "${#missing[@]}" -gt 0 ] && printf 'not a .B entry in ocidec.1: %s\n' "${missing[@]}"
	[ "${#missing[@]}" -eq 0 ]
}
