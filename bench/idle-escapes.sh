#!/bin/bash
# bench/idle-escapes.sh: the hook's idle path for a config.json holding
# \uXXXX escapes (Go's encoder writes <, > and & as \u003c, \u003e, \u0026:
# Docker, containerd and podman all do), against the same config.json
# without them, both asking for nothing, with the shipped configs. The
# escapes are decoded and scanned, never parsed: the ratio stays near 1
# whatever config.json holds (a parse of a large one cost more).
# Usage: bench/idle-escapes.sh [N] [R]
set -eu
cd "$(dirname "$0")/.."
N=${1:-50} R=${2:-7}
. bench/lib.sh

mkdir -m 0755 "$work/shipped"
cp conf/*.ini "$work/shipped/" && chmod 0644 "$work/shipped"/*.ini
for b in plain escaped; do
	test/fixtures/bundle.sh "$work/$b" PATH=/bin HOME=/root >/dev/null
	# a large config.json: 2,000 annotations, as a busy pod's can be
	perl -MJSON::PP -e 'local $/; my $c = decode_json(<STDIN>);
		$c->{annotations}{"io.example/a$_"} = "x" x 64 for 1 .. 2000;
		print encode_json($c);' <"$work/$b/config.json" >"$work/$b/config.new"
	mv "$work/$b/config.new" "$work/$b/config.json"
	echo "{\"ociVersion\": \"1.0.2\", \"id\": \"x\", \"pid\": $$, \"bundle\": \"$work/$b\"}" >"$work/$b.state"
done
sed -i 's/"HOME=\/root"/"HOME=\/root", "Q=a\\u0026b\\u003cc\\u003e"/' "$work/escaped/config.json"
grep -q 'u0026' "$work/escaped/config.json"
plain() { "$bin" hook -c "$work/shipped" <"$work/plain.state"; }
escaped() { "$bin" hook -c "$work/shipped" <"$work/escaped.state"; }
plain >/dev/null && escaped >/dev/null   # both idle, both succeed
read -r ref ours q < <(paired plain escaped)
printf 'idle hook, config.json with \\u escapes vs without: %s ms vs %s ms per %d runs: %.2fx\n' "$ours" "$ref" "$N" "$q"
