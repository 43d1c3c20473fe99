#!/bin/bash
# bench/ldcache.sh: ocidec ldcache against glibc's ldconfig, measured in the
# same run on the same tree: a Debian-style tree whose cache has about 700
# entries (one object linked under 640 SONAMEs, their SONAME links, 32
# development links, an ld.so.conf with includes) and a vendor directory of 40
# more libraries.
#   full rebuild:  ocidec ldcache -r T -X        vs  ldconfig -r T -X
#   the hook case: ocidec ldcache -a -r T -X DIR vs  ldconfig -r T -X DIR
#                  (add DIR to the existing cache; ldconfig can only rebuild)
# Each measurement is N back-to-back runs, repeated R times; medians.
# Usage: bench/ldcache.sh [N] [R]
set -eu
cd "$(dirname "$0")/.."
N=${1:-20} R=${2:-7}
. bench/lib.sh

t=$work/tree
ma=$t/usr/lib/x86_64-linux-gnu
mkdir -p "$ma" "$t/etc/ld.so.conf.d" "$t/opt/vendor/lib" "$t/usr/local/lib"
ln -s usr/lib "$t/lib"
printf 'int f%s(void) { return 1; }\n' "" >"$work/f.c"
gcc -c -fPIC -o "$work/f.o" "$work/f.c"
for i in $(seq 1 640); do
	ld -shared -soname "libbench$i.so.1" -o "$ma/libbench$i.so.1.0.$i" "$work/f.o"
	[ $((i % 20)) -ne 0 ] || ln -s "libbench$i.so.1" "$ma/libbench$i.so"
done
for i in $(seq 1 40); do
	ld -shared -soname "libvendor$i.so.1" -o "$t/opt/vendor/lib/libvendor$i.so.550.54.15" "$work/f.o"
done
echo 'include /etc/ld.so.conf.d/*.conf' >"$t/etc/ld.so.conf"
printf '/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' \
	>"$t/etc/ld.so.conf.d/x86_64-linux-gnu.conf"
echo /usr/local/lib >"$t/etc/ld.so.conf.d/libc.conf"
ldconfig -r "$t"          # the SONAME links, once; the runs below use -X
ldconfig -r "$t"
entries=$("$bin" ldcache -p -r "$t" | head -n 1)

ref_full=$(median_ms ldconfig -r "$t" -X)
ours_full=$(median_ms "$bin" ldcache -r "$t" -X)
ref_add=$(median_ms ldconfig -r "$t" -X /opt/vendor/lib)
ldconfig -r "$t" -X
ours_add=$(median_ms "$bin" ldcache -a -r "$t" -X /opt/vendor/lib)
after=$("$bin" ldcache -p -r "$t" | head -n 1)

echo "tree: $entries; after the add: $after"
echo "runs per round: $N, rounds: $R (medians; per run = total / $N)"
row "ldconfig -r T -X (reference, full rebuild)" "$ref_full"
row "ocidec ldcache -r T -X (full rebuild)" "$ours_full" "$ref_full"
row "ldconfig -r T -X DIR (reference for the hook case)" "$ref_add"
row "ocidec ldcache -a -r T -X DIR (hook case: add 40)" "$ours_add" "$ref_add"
