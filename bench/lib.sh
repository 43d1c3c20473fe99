# bench/lib.sh: shared by the benchmarks, sourced from the top of the tree.
# Set N (runs per round) and R (rounds) before calling. Times are wall
# clock, in ms with microseconds. Sourcing it sets bin (the static build,
# which must exist) and work (a temporary directory, removed at exit).

bin=${BENCH_BIN:-$PWD/build/ocidec}
[ -x "$bin" ] || { echo "build first: ./build.sh" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# round_ms CMD...: the wall time of N back-to-back runs of CMD, in ms
round_ms() {
	local t0 t1 i
	t0=$(date +%s%N)
	for ((i = 0; i < N; i++)); do "$@" >/dev/null 2>&1; done
	t1=$(date +%s%N)
	printf '%d.%03d\n' $(( (t1 - t0) / 1000000 )) $(( (t1 - t0) / 1000 % 1000 ))
}

# median: the median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# median_ms CMD...: median over R rounds of round_ms CMD
median_ms() {
	local r
	for ((r = 0; r < R; r++)); do round_ms "$@"; done | median
}

# paired REF_FN OURS_FN: R rounds, each timing REF_FN then OURS_FN (N runs
# each), so that drift on a busy machine hits both alike. Prints three
# words: the median round of each and the median of the per-round ratios.
paired() {
	local r a b
	local -a ra=() rb=() q=()
	for ((r = 0; r < R; r++)); do
		a=$(round_ms "$1") b=$(round_ms "$2")
		ra+=("$a") rb+=("$b") q+=("$(bc -l <<<"$b / $a")")
	done
	echo "$(printf '%s\n' "${ra[@]}" | median) $(printf '%s\n' "${rb[@]}" | median)" \
		"$(printf '%s\n' "${q[@]}" | median)"
}

# row LABEL MS [REF_MS [RATIO]]: one line of the report; with REF_MS, the
# ratio MS / REF_MS (or RATIO, the median of paired rounds), as a speed-up
# or a slow-down
row() {
	local q how
	if [ $# -ge 3 ]; then
		q=${4:-$(bc -l <<<"$2 / $3")}
		if [ "$(bc -l <<<"$q > 1")" = 1 ]; then
			how=$(printf '%.1fx slower' "$q")
		else
			how=$(printf '%.1fx faster' "$(bc -l <<<"1 / ($q + 0.0001)")")
		fi
		printf '%-52s %9.3f ms  %8.3f ms/run  ratio %.2f (%s)\n' "$1" "$2" \
			"$(bc -l <<<"$2 / $N")" "$q" "$how"
	else
		printf '%-52s %9.3f ms  %8.3f ms/run\n' "$1" "$2" "$(bc -l <<<"$2 / $N")"
	fi
}

# run_in DIR: `runc run` the bundle in DIR under a container id of its own
bench_runs=0
run_in() {
	bench_runs=$((bench_runs + 1))
	(cd "$1" && runc run "bench-$$-$BASHPID-$bench_runs" >/dev/null)
}
