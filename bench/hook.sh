#!/bin/bash
# bench/hook.sh: the hook's cost, measured in the same run.
#   (a) `ocidec hook` for a container that activates no vendor (the shipped
#       configs), against exec-ing a static `true`: this path runs for every
#       container on the host. Twice: right after the configs were copied
#       (no index of their activation keys yet: it is made only once every
#       file is KEYCACHE_SETTLE seconds old, see devices/keycache.h), then
#       with the index, as on a host whose configs settled (goal: 1.2x).
#   (b) `runc run` of the demo container with the hook injecting the demo
#       vendor, against the same container whose config.json already lists
#       the same bind mounts and device rules (what CDI-style engines do: the
#       floor for any hook), its rootfs's ld.so.cache prepared in advance.
# (a): 50N runs of each, one by one, alternating (bench/spawn.c); medians of
# single runs and their ratio; and, the way issue 34 measured when it set
# the goal, 2R+1 rounds of 5N runs each forked by the shell (a fork as well
# as an exec per run, as when an engine runs a hook), paired with true's. (b): N back-to-back runs, repeated R times,
# reference and ours alternating round by round; the ratio is the median of
# the per-round ratios.
# Usage: bench/hook.sh [N] [R]   (as root, with runc); BENCH_BEFORE=BIN
# adds the (a) rows and the size of another build (an older commit's) to
# the same run, for a before and after.
set -eu
cd "$(dirname "$0")/.."
N=${1:-20} R=${2:-5}
. bench/lib.sh

# (a): exec by exec, alternating (bench/spawn.c), the shell left out
printf 'int main(void) { return 0; }\n' | musl-gcc -static -s -x c - -o "$work/true"
gcc -O2 -o "$work/spawn" bench/spawn.c
test/fixtures/bundle.sh "$work/idle" PATH=/bin HOME=/root >/dev/null
state="{\"ociVersion\": \"1.0.2\", \"id\": \"x\", \"pid\": $$, \"bundle\": \"$work/idle\"}"
echo "$state" >"$work/state.json"
idle_runs=$((N * 50))
# idle BIN: the (a) rows of one binary. Exec by exec: right after the copy
# (no index: the files are not settled yet), the floor (the binary exec'd
# to do nothing: a stage the hook ignores), settled; then as issue 34 set
# its goal, each run forked by the shell (as an engine forks and execs a
# hook), rounds of 5N paired with the same for true.
idle() {
	local b=$1 ref ours q
	idle_bin=$1 idle_cfg="$work/shipped-$2"  # (globals: paired's locals shadow ours)
	local cfg=$idle_cfg
	rm -rf "$cfg" && mkdir -m 0755 "$cfg"
	cp conf/*.ini "$cfg/" && chmod 0644 "$cfg"/*.ini
	read -r ref ours q < <("$work/spawn" "$idle_runs" "$work/state.json" "$work/true" -- "$b" hook -c "$cfg")
	rows+=("$(us "$2: (a) idle, configs just copied" "$ours" "$q")")
	sleep 3
	"$b" hook -c "$cfg" <"$work/state.json"  # settled: the index made
	read -r ref ours q < <("$work/spawn" "$idle_runs" "$work/state.json" "$work/true" -- "$b" hook poststart)
	rows+=("$(us "$2: exec'd to do nothing (the floor)" "$ours" "$q")")
	read -r ref ours q < <("$work/spawn" "$idle_runs" "$work/state.json" "$work/true" -- "$b" hook -c "$cfg")
	rows+=("$(us "$2: (a) idle, configs settled" "$ours" "$q")" "$(us "  static true, its reference" "$ref")")
	hook_idle() { "$idle_bin" hook -c "$idle_cfg" <"$work/state.json"; }
	true_idle() { "$work/true" -c "$idle_cfg" <"$work/state.json"; }
	read -r ref ours q < <(N=$((N * 5)) R=$((R * 2 + 1)) paired true_idle hook_idle)
	rows+=("$(printf '%-56s %9.3f ms for %d  ratio %.3f (goal 1.2)' "$2: (a) settled, forked by a shell" "$ours" $((N * 5)) "$q")")
}
us() { printf '%-56s %9.1f us/run%s\n' "$1" "$2" "${3:+  ratio $3}"; }
rows=()
[ -z "${BENCH_BEFORE:-}" ] || idle "$BENCH_BEFORE" before
idle "$bin" ours

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

echo "(a): $idle_runs runs of each, medians of single runs, and $((R * 2 + 1)) paired rounds of $((N * 5)) through a shell;"
echo "(b): runs per round: $N, rounds: $R, ratio = median of paired rounds"
[ -z "${BENCH_BEFORE:-}" ] || printf '%-56s %9d bytes\n' "before: the static binary" "$(stat -c %s "$BENCH_BEFORE")"
printf '%-56s %9d bytes (goal: 491520, 480 KiB)\n' "ours: the static binary" "$(stat -c %s "$bin")"
printf '%s\n' "${rows[@]}"
row "runc run, mounts in config.json (reference for b)" "$ref_b"
row "(b) runc run, the hook injecting (goal 1.05x)" "$ours_b" "$ref_b" "$q_b"
