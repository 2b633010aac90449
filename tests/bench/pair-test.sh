#!/bin/bash
# SPDX-License-Identifier: MIT
# pair-test.sh PAIR: checks bench/pair.c (the benchmarks' turn runner) and
# run-bench.sh's reading of its turns, without a GPU: stand-in programs
# that answer each turn with fixed figures.
set -u
PAIR=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() {	# WHAT CONDITION...
	local what=$1
	shift
	if "$@"; then
		echo "PASS $what"
	else
		echo "FAIL $what"
		fails=$((fails + 1))
	fi
}

# a program in turns: figure F, its value V + the turn's number / 10
serve() { echo "n=0; while read -r l; do n=\$((n + 1)); echo \"LAUNCH $1 $2.\$n\"; echo END; done"; }

timeout 20 "$PAIR" 4 -- sh -c "$(serve a 1)" -- sh -c "$(serve a 2)" \
	> "$T/out" 2> "$T/err"
check "two programs, 4 turns: exit 0" [ $? -eq 0 ]
check "turns in the order A B, B A, A B, B A" \
	[ "$(awk '{printf "%s%s ", $1, $2}' "$T/out")" = "A1 B1 B2 A2 A3 B3 B4 A4 " ]
check "each line is the program's, turn by turn" \
	grep -qx "B 3 LAUNCH a 2.3" "$T/out"

timeout 20 "$PAIR" 3 -- sh -c 'read -r l; echo "LAUNCH a 1"; echo END' \
	-- sh -c "$(serve a 2)" > "$T/out" 2> "$T/err"
check "a program that ends early: exit 1" [ $? -eq 1 ]
check "... and says which and when" \
	grep -q "A (sh) \(ended before its sample\|stopped reading\) .*turn 2" "$T/err"

timeout 20 "$PAIR" 2 -- sh -c "$(serve a 1); exit 3" \
	-- sh -c "$(serve a 2)" > "$T/out" 2> "$T/err"
check "a program that exits 3: exit 1" [ $? -eq 1 ]
check "... and says so" grep -q "A (sh) exited with 3" "$T/err"

timeout 20 "$PAIR" 2 -- /nonexistent/prog -- true > "$T/out" 2> "$T/err"
check "a program that cannot start: exit 1" [ $? -eq 1 ]

for args in "" "0 -- true -- true" "2 -- true" "2 -- -- true" "x -- true -- true"; do
	# shellcheck disable=SC2086 # the words are the arguments
	timeout 20 "$PAIR" $args > /dev/null 2>&1
	check "usage '$args': exit 2" [ $? -eq 2 ]
done

# run-bench.sh's figures from turns: native (A) 2.0 and xgpu (B) 2.2 in
# every turn but one (B 4.4): medians 2.0 / 2.2, ratio 1.1; the
# program's FAIL lines are not figures
# shellcheck disable=SC2034 # read by pair_figures, from run-bench.sh
OUT=$T
: > "$T/native.all"; : > "$T/xgpu.all"; : > "$T/paired.all"
for r in 1 2; do
	for t in 1 2 3; do
		echo "$r A $t LAUNCH async_us_per_launch 2.0"
		b=2.2; [ "$r$t" = 13 ] && b=4.4
		echo "$r B $t LAUNCH async_us_per_launch $b"
	done
done > "$T/l.pairs"
echo "1 B 4 FAIL cudaMalloc: cudaErrorMemoryAllocation" >> "$T/l.pairs"
eval "$(sed -n '/^pair_figures() {/,/^}/p' "$ROOT/bench/run-bench.sh")"
pair_figures "$T/l.pairs"
check "native median" grep -qx "LAUNCH async_us_per_launch 2" "$T/native.all"
check "xgpu median" grep -qx "LAUNCH async_us_per_launch 2.2" "$T/xgpu.all"
check "median of the turns' ratios, 6 turns" \
	grep -qx "LAUNCH async_us_per_launch 1.1000 1.1000 1.1000 6" "$T/paired.all"
check "no figure from a FAIL line" [ "$(wc -l < "$T/paired.all")" -eq 1 ]

[ "$fails" -eq 0 ] && echo "pair-test: all passed" && exit 0
echo "pair-test: $fails failed"
exit 1
