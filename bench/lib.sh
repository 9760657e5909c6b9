# bench/lib.sh - what the bench scripts share (sourced, not run).
#
# mmm V1 V2 ...   prints "min / median / max" of the numbers given
# ratio A B       prints A / B to 3 decimals
# Every figure is measured as interleaved pairs (A B A B ...) against its bare
# baseline, so the machine's drift hits both alike; quote the median ratio.

mmm() {
	printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
		if (NR == 0) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f / %.3f / %.3f", v[1], m, v[NR] }'
}

mmm_int() {
	printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
		if (NR == 0) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.0f / %.0f / %.0f", v[1], m, v[NR] }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'
}

# peak resident KiB and wall seconds of a command: "KIB SECONDS" (GNU time)
peak_and_wall() {
	local f
	f=$(mktemp "${scratch:-/tmp}/time.XXXXXX")
	/usr/bin/time -f '%M %e' -o "$f" "$@" >/dev/null 2>&1 || true
	cat "$f"
	rm -f "$f"
}
