#!/bin/bash
# bench/size.sh: what each part of the static binary weighs, from the
# linker's map of the same link as `make` (after --gc-sections: only what is
# kept counts). One row per object of ours (an applet, a module of a wing),
# the dependencies (cJSON, inih, protobuf-c and NRI's messages; nghttp2 and
# mbed TLS, `ocidec dra`'s: one row, as the link-time optimiser compiles
# them as one unit, the Makefile's DEPLTO) and the C
# library, each with its code, read-only data and initialised data in
# bytes; then the stripped file against the goal (480 KiB: what
# docs/status.md says it is for). .bss (zeroed at exec) costs no file bytes.
# Usage: bench/size.sh [TOP]   (TOP rows of ours, default all)
#        bench/size.sh --status: the stripped file's size written into
#        docs/status.md's row of the binary (its figure is this one's)
set -eu
cd "$(dirname "$0")/.."
top=${1:-0} status=
[ "$top" != --status ] || top=0 status=1
[ -f build/ocidec ] || { echo "build first: ./build.sh" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the link line of `make`, with a map and unstripped
cmd=$(make -n -B build/ocidec 2>/dev/null | grep -- ' -static ' | tail -1)
[ -n "$cmd" ] || { echo "bench/size.sh: no link line from make -n" >&2; exit 1; }
eval "${cmd/-o build\/ocidec/-o $work/ocidec -Wl,-Map=$work/map}"
# the map: an input section's line is " .SECTION ADDR SIZE FILE", or the
# section's name alone on a line, ADDR SIZE FILE on the next
awk '
	function hex(s,   i, v) {  # (mawk has no strtonum)
		v = 0
		for (i = 3; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function add(sec, size, file,   who) {
		if (sec !~ /^\.(text|rodata|data)/ || size == 0)
			return
		if (file ~ /libc\.a|libgcc/) who = "C library (musl)"
		else if (file ~ /libdeps\.a/) who = "cJSON, inih, protobuf-c"
		else if (file ~ /libnghttp2\.a/) who = "nghttp2 (ocidec dra)"
		else if (file ~ /libmbedtls\.a/) who = "mbed TLS (ocidec dra)"
		else if (file ~ /\.ltrans[0-9]*\.o$/) who = "nghttp2, mbed TLS (dra, LTO)"
		else if (file ~ /crt/) who = "C library (musl)"
		else { who = file; sub(/.*build\/musl\//, "", who); sub(/\.o$/, ".c", who) }
		kind = sec ~ /^\.text/ ? 1 : sec ~ /^\.rodata/ ? 2 : 3
		b[who, kind] += size; tot[who] += size; all += size
	}
	/^Linker script and memory map/ { on = 1; next }
	!on { next }
	/^ \.[^ ]+ +0x[0-9a-f]+ +0x[0-9a-f]+ / { add($1, hex($3), $4); pending = ""; next }
	/^ \.[^ ]+$/ { pending = $1; next }
	pending != "" && /^ +0x[0-9a-f]+ +0x[0-9a-f]+ / { add(pending, hex($2), $3); pending = ""; next }
	{ pending = "" }
	END {
		for (w in tot) printf "%d\t%s\t%d\t%d\t%d\n", tot[w], w, b[w, 1], b[w, 2], b[w, 3]
		printf "%d\t(all)\t0\t0\t0\n", all > "/dev/stderr"
	}' "$work/map" 2>"$work/all" | sort -rn >"$work/rows"
printf '%-28s %9s %9s %9s %9s\n' "part" "bytes" "code" "rodata" "data"
n=0
while IFS=$'\t' read -r total who code ro data; do
	case $who in "C library (musl)"|"cJSON, inih, protobuf-c") ;; *) n=$((n + 1)); [ "$top" -gt 0 ] && [ "$n" -gt "$top" ] && continue ;; esac
	printf '%-28s %9d %9d %9d %9d\n' "$who" "$total" "$code" "$ro" "$data"
done <"$work/rows"
ours=$(awk -F'\t' '$2 != "C library (musl)" && $2 != "cJSON, inih, protobuf-c" { s += $1 } END { print s }' "$work/rows")
printf '%-28s %9d\n' "ours, in all" "$ours"
size=$(stat -c %s build/ocidec)
printf '%-28s %9d (goal: 491520, 480 KiB)\n' "the stripped file" "$size"
if [ -n "$status" ]; then
	# "| the binary | one static musl binary, N bytes on x86_64 ..."
	n=$(sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$size")
	sed -i "s/^\(| the binary | one static musl binary, \)[0-9,]* bytes on x86_64/\1$n bytes on x86_64/" docs/status.md
	grep -q "^| the binary | one static musl binary, $n bytes" docs/status.md ||
		{ echo "bench/size.sh: no row of the binary in docs/status.md" >&2; exit 1; }
fi
