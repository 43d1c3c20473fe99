# bench/lib.sh: shared by the benchmarks. Set N (runs per round) and R
# (rounds) before calling.

# median_ms CMD...: median over R rounds of the wall time of N runs, in ms
median_ms() {
	local times=() t0 t1
	for ((r = 0; r < R; r++)); do
		t0=$(date +%s%N)
		for ((i = 0; i < N; i++)); do "$@" >/dev/null 2>&1; done
		t1=$(date +%s%N)
		times+=($(( (t1 - t0) / 1000000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (R + 1) / 2 ))p"
}

# row LABEL MS [REF_MS]: one line of the report; with REF_MS, the ratio
# MS / REF_MS and the speed-up REF_MS / MS
row() {
	if [ $# -eq 3 ]; then
		printf '%-52s %8s ms  %8.3f ms/run  ratio %.2f (%.1fx faster)\n' "$1" "$2" \
			"$(bc -l <<<"$2 / $N")" "$(bc -l <<<"$2 / $3")" "$(bc -l <<<"$3 / ($2 + 0.0001)")"
	else
		printf '%-52s %8s ms  %8.3f ms/run\n' "$1" "$2" "$(bc -l <<<"$2 / $N")"
	fi
}
