#!/bin/bash
# bench/idle-path.sh: writes bench/idle-path.txt, the functions and
# variables the idle path touches (the hook of a container that asks for
# nothing, the shipped configs, the index made), which the Makefile's
# hot.ld puts first in their sections. valgrind's lackey traces every
# instruction and data access of one idle run of an unstripped link (the
# same link line as `make`); each address named by the symbol it falls in.
# Then the page faults of an idle run, before and after (perf, where it can
# count them), and how many names of the old list no longer exist.
# Usage: bench/idle-path.sh   (as root: the index lives in /run/ocidec)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
command -v valgrind >/dev/null || { echo "bench/idle-path.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
cmd=$(make -n -B build/ocidec 2>/dev/null | grep -- ' -static .* -o build/ocidec ' | tail -1)
[ -n "$cmd" ] || { echo "bench/idle-path.sh: no link line from make -n" >&2; exit 1; }
eval "${cmd/ -s / }" "-o $work/ocidec-syms"
test/fixtures/bundle.sh "$work/idle" PATH=/bin HOME=/root >/dev/null
echo "{\"ociVersion\": \"1.0.2\", \"id\": \"x\", \"pid\": $$, \"bundle\": \"$work/idle\"}" >"$work/state.json"
mkdir -m 0755 "$work/cfg" && cp conf/*.ini "$work/cfg/" && chmod 0644 "$work/cfg"/*.ini
sleep 3   # the configs settle, the next run makes the index (keycache.h)
"$work/ocidec-syms" hook -c "$work/cfg" <"$work/state.json"
valgrind --tool=lackey --trace-mem=yes --log-file="$work/trace" "$work/ocidec-syms" hook -c "$work/cfg" <"$work/state.json"
nm -n -S "$work/ocidec-syms" >"$work/syms"
old=$(grep -c '^[a-z]' bench/idle-path.txt || true)
python3 - "$work/syms" "$work/trace" bench/idle-path.txt <<'EOF'
import bisect, re, sys
syms, size = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4:
        a = int(f[0], 16)
        syms.setdefault(a, []).append((f[2], f[3]))
        size[a] = max(size.get(a, 0), int(f[1], 16))
addrs = sorted(syms)
text, data = set(), set()
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) != 2 or f[0] not in ("I", "L", "S", "M"):
        continue
    a = int(f[1].split(",")[0], 16)
    i = bisect.bisect_right(addrs, a) - 1
    if i < 0 or a >= addrs[i] + max(size[addrs[i]], 1):
        continue
    for kind, name in syms[addrs[i]]:
        if f[0] == "I" and kind in "tTwW":
            text.add(re.sub(r"\.(isra|constprop|part|cold)\.\d+.*$", "", name))
        elif f[0] != "I" and kind in "bBdDvVrR":
            data.add(name)
head = "".join(l for l in open(sys.argv[3]) if l.startswith("#"))
with open(sys.argv[3], "w") as out:
    out.write(head + "".join("text %s\n" % n for n in sorted(text)) + "".join("data %s\n" % n for n in sorted(data)))
print("bench/idle-path.txt: %d functions, %d variables" % (len(text), len(data)))
EOF
echo "(the list had $old names; make relinks with the new one)"
