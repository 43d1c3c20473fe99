#!/bin/bash
# test/fuzz/run.sh RUNS [SECONDS [TARGET...]]: build the libFuzzer targets (clang,
# -fsanitize=fuzzer,address,undefined) into build/fuzz, seed them from this
# machine (its ld.so.cache, caches and libraries the ldtree fixture makes,
# some system libraries) and run each for RUNS inputs or SECONDS, whichever
# ends first (targets: ldcache elf; default both). Exit 0 when no target
# found a crash; a crash's input is kept in build/fuzz/crash-*.
set -eu
runs=${1:-100000} secs=${2:-600}
shift $(( $# < 2 ? $# : 2 ))
targets=${*:-ldcache elf}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz
mkdir -p "$out"
CC=${FUZZ_CC:-clang}
flags="-std=c11 -D_GNU_SOURCE -I$top -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
$CC $flags -o "$out/ldcache" "$top/test/fuzz/fuzz_ldcache.c" "$top/common/ldcache.c" "$top/common/util.c"
$CC $flags -o "$out/elf" "$top/test/fuzz/fuzz_elf.c" "$top/common/elf.c" "$top/common/util.c"

seeds=$out/seeds
if [ ! -d "$seeds/ldcache" ]; then
	mkdir -p "$seeds/ldcache" "$seeds/elf"
	head -c 8192 /etc/ld.so.cache >"$seeds/ldcache/host-head"
	tree=$(mktemp -d)
	"$top/test/fixtures/ldtree.sh" "$tree/t" >/dev/null 2>&1
	ldconfig -r "$tree/t" 2>/dev/null && cp "$tree/t/etc/ld.so.cache" "$seeds/ldcache/tree"
	i=0
	while read -r f; do
		i=$((i + 1))
		{ printf '\0'; head -c 65536 "$f"; } >"$seeds/elf/m$i"
		{ printf '\1'; cat "$f"; } >"$seeds/elf/f$i"
	done < <(find "$tree/t" -type f -name 'lib*.so*' | head -n 20; ls /lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)
	rm -rf "$tree"
fi
status=0
for t in $targets; do
	mkdir -p "$out/corpus-$t"
	echo "# fuzz $t: up to $runs inputs or ${secs}s"
	if ! (cd "$out" && "./$t" -runs="$runs" -max_total_time="$secs" -max_len=65536 \
		-print_final_stats=1 "corpus-$t" "seeds/$t" >"$out/$t.log" 2>&1); then
		status=1
		tail -n 40 "$out/$t.log"
	fi
	grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$out/$t.log" | sed "s/^/# $t: /"
done
exit $status
