#!/bin/bash
# bench/hook.sh: the hook's cost, measured in the same run.
#   (a) `ocidec hook` for a container that activates no vendor (the shipped
#       configs), against exec-ing a static `true`: this path runs for every
#       container on the host.
#   (b) `runc run` of the demo container with the hook injecting the demo
#       vendor, against the same container whose config.json already lists
#       the same bind mounts and device rules (what CDI-style engines do: the
#       floor for any hook), its rootfs's ld.so.cache prepared in advance.
# Each measurement is N back-to-back runs (5N for (a)), repeated R times
# (2R+1 for (a)), reference and ours alternating round by round; the ratio
# is the median of the per-round ratios.
# Usage: bench/hook.sh [N] [R]   (as root, with runc)
set -eu
cd "$(dirname "$0")/.."
N=${1:-20} R=${2:-5}
. bench/lib.sh

# (a)
printf 'int main(void) { return 0; }\n' | musl-gcc -static -s -x c - -o "$work/true"
mkdir -m 0755 "$work/shipped"
cp conf/*.ini "$work/shipped/" && chmod 0644 "$work/shipped"/*.ini
test/fixtures/bundle.sh "$work/idle" PATH=/bin HOME=/root >/dev/null
state="{\"ociVersion\": \"1.0.2\", \"id\": \"x\", \"pid\": $$, \"bundle\": \"$work/idle\"}"
echo "$state" >"$work/state.json"
# both the same way: a shell function, stdin from the state file
hook_idle() { "$bin" hook -c "$work/shipped" <"$work/state.json"; }
true_idle() { "$work/true" -c "$work/shipped" <"$work/state.json"; }
read -r ref_a ours_a q_a < <(N=$((N * 5)) R=$((R * 2 + 1)) paired true_idle hook_idle)

# (b)
test/fixtures/demo-vendor.sh "$work/dr" "$work/cfg" >/dev/null
HOOK="$bin ocidec-hook -c $work/cfg prestart" test/fixtures/bundle.sh "$work/hooked" OCI_DEMO=all -- demo-tool >/dev/null
test/fixtures/bundle.sh "$work/cdi" -- demo-tool >/dev/null
# the CDI-style floor: the hook's plan as static mounts and device rules
"$bin" hook -c "$work/cfg" --dry-run <<<"{\"bundle\": \"$work/hooked\", \"pid\": $$}" >"$work/plan"
mkdir -p "$work/cdi/rootfs/opt/demo/lib"
cp "$work/dr/opt/demo/lib/libdemo.so.1.0" "$work/cdi/rootfs/opt/demo/lib/"
"$bin" ldcache -r "$work/cdi/rootfs" /opt/demo/lib
(cd "$work/cdi" && PLAN=$work/plan perl -MJSON::PP -e '
	local $/; open my $f, "<", "config.json"; my $c = decode_json(<$f>); close $f;
	open my $p, "<", $ENV{PLAN}; my @lines = split /\n/, <$p>;
	for (@lines) {
		my ($what, $src, $dst, $flags) = split / /;
		next unless $what eq "mount";
		my @st = stat $src; my $rdev = $st[6];
		if (-c $src) {
			my ($maj, $min) = ($rdev >> 8 & 0xfff, ($rdev & 0xff) | ($rdev >> 12 & 0xfff00));
			push @{$c->{linux}{devices}}, { path => $dst, type => "c", major => $maj, minor => $min, fileMode => 438 };
			push @{$c->{linux}{resources}{devices}}, { allow => JSON::PP::true, type => "c", major => $maj, minor => $min, access => "rwm" };
			next;
		}
		push @{$c->{mounts}}, { destination => $dst, type => "bind", source => $src,
			options => ["bind", split /,/, $flags] };
	}
	open $f, ">", "config.json"; print $f encode_json($c);')
run_in "$work/hooked" && run_in "$work/cdi"    # both work before timing
run_cdi() { run_in "$work/cdi"; }
run_hooked() { run_in "$work/hooked"; }
read -r ref_b ours_b q_b < <(paired run_cdi run_hooked)

echo "runs per round: $N ($((N * 5)) for a), rounds: $R ($((R * 2 + 1)) for a); medians, ratio = median of paired rounds"
N=$((N * 5)) row "static true (reference for a)" "$ref_a"
N=$((N * 5)) row "(a) ocidec hook, no vendor active (shipped configs)" "$ours_a" "$ref_a" "$q_a"
row "runc run, mounts in config.json (reference for b)" "$ref_b"
row "(b) runc run, the hook injecting the demo vendor" "$ours_b" "$ref_b" "$q_b"
