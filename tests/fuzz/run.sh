#!/bin/sh
# Run each libFuzzer target of tests/fuzz for SECONDS, from its seed
# corpus (tests/fuzz/corpus/<target>) and what earlier runs added
# (<bindir>/../corpus/<target>), and print per target its executions,
# coverage (libFuzzer's cov: edges, ft: features) and crashes.  Exits 1
# if any target crashed (or leaked, or timed out); the input that did is
# kept in <bindir>/../artifacts/<target>/.
#
#   tests/fuzz/run.sh BINDIR SECONDS TARGET...     (make fuzz runs it)
set -u
bindir=$1
secs=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$bindir/.." && pwd)
failed=0
printf '%-12s %12s %8s %8s %8s %8s\n' target executions cov ft corpus crashes
for t in "$@"; do
	bin=$bindir/fuzz_$t
	work=$top/corpus/$t
	art=$top/artifacts/$t
	log=$top/fuzz_$t.log
	mkdir -p "$work" "$art"
	rm -f "$art"/*
	case $t in
	worker) opts="-max_len=65536 -timeout=20" ;;
	image) opts="-max_len=16384 -timeout=10" ;;
	xs) opts="-max_len=4096 -timeout=10" ;;
	ctl) opts="-max_len=600 -timeout=10" ;;
	mirror) opts="-max_len=8192 -timeout=10" ;;
	*) opts="" ;;
	esac
	# shellcheck disable=SC2086
	"$bin" $opts -max_total_time="$secs" -print_final_stats=1 \
		-rss_limit_mb=4096 -artifact_prefix="$art/" \
		"$work" "$src/corpus/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	corp=$(ls "$work" | wc -l)
	crashes=$(ls "$art" | grep -c -E '^(crash|leak|timeout|oom)-')
	if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
		crashes=1
	fi
	printf '%-12s %12s %8s %8s %8s %8s\n' "fuzz_$t" "${execs:-?}" \
		"${cov:-?}" "${ft:-?}" "$corp" "$crashes"
	if [ "$crashes" -ne 0 ]; then
		failed=1
		echo "  fuzz_$t failed (exit $rc); log: $log; inputs: $art" >&2
		grep -m1 -A12 -E '^==[0-9]+==ERROR|runtime error|deadly signal|ERROR: libFuzzer' \
			"$log" | sed 's/^/  /' >&2
	fi
done
exit $failed
