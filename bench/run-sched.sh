#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The GPU scheduler on the real GPU: tenants (bench/spin, each a process
# of its own, i.e. a guest of the local transport) saturate the GPU with
# kernels of a fixed length while xen-gpubackd shares it out.  GPU-time
# shares are counted from the kernels each tenant completed (all kernels
# of a phase have the same length), so they do not rely on the daemon's
# own accounting.  Prints one line per phase with the shares, the targets
# and min/max normalized share (share / target share).
#
#   bench/run-sched.sh --xgpu-lib DIR --backend PATH --cli PATH --bin DIR
#                      [--out DIR] [--secs N]
set -u
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
LIB= BACKEND= CLI= BIN= OUT=/tmp/xgpu-sched SECS=20
bench_options "--xgpu-lib=LIB --backend=BACKEND --cli=CLI --bin=BIN \
	--out=OUT --secs=SECS" "$@"
mkdir -p "$OUT"
bench_abs LIB BACKEND CLI BIN
bench_need_gpu sched
T=$(mktemp -d /tmp/xgpu-sched.XXXXXX)
for n in A B C solo; do cp "$BIN/spin" "$T/spin$n"; done
DPID=
start() { bench_start "$1"; }	# start POLICY
stop() { bench_stop; }
cli() { "$CLI" -s "$T/c.sock" "$@"; }
tenant() {	# tenant NAME US SECS [EVERY]
	XGPU_SOCKET=$T/s.sock LD_LIBRARY_PATH=$LIB "$T/spin$1" "$2" "$3" \
		${4:-} >"$OUT/$PHASE.$1.out" 2>&1
}
count() { sed -n 's/.*kernels=\([0-9]*\).*/\1/p' "$OUT/$PHASE.$1.out"; }
# sample each guest's share every half second while a phase runs, into
# $OUT/shares.<phase>.tsv ("<seconds> <guest> <percent>"; bench/plot.sh
# draws them)
sample_start() {
	local t0
	t0=$(date +%s.%N)
	: >"$OUT/shares.$PHASE.tsv"
	while sleep 0.5; do
		cli list --json 2>/dev/null | awk -v t0="$t0" -v now="$(date +%s.%N)" '
			match($0, /"name": "[^"]*"/) {
				n = substr($0, RSTART + 9, RLENGTH - 10)
				if (match($0, /"share_period": [0-9.]+/))
					printf "%.1f %s %s\n", now - t0, n,
					       substr($0, RSTART + 16, RLENGTH - 16)
			}' >>"$OUT/shares.$PHASE.tsv"
	done &
	SAMPLER=$!
}
sample_stop() { kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; }

# report PHASE "A B C" "tA tB tC" (targets in percent)
report() {
	local names=($2) tg=($3) tot=0 c i line="" mn=9 mx=0
	for i in "${!names[@]}"; do
		c[$i]=$(count "${names[$i]}"); c[$i]=${c[$i]:-0}
		tot=$((tot + c[$i]))
	done
	for i in "${!names[@]}"; do
		local sh nz
		sh=$(awk -v a="${c[$i]}" -v t="$tot" 'BEGIN{printf "%.1f", t ? 100*a/t : 0}')
		line="$line ${names[$i]}=${sh}%(target ${tg[$i]})"
		if [ "${tg[$i]}" != "-" ]; then
			nz=$(awk -v s="$sh" -v t="${tg[$i]}" 'BEGIN{printf "%.3f", s/t}')
			mn=$(awk -v a="$mn" -v b="$nz" 'BEGIN{print (b<a)?b:a}')
			mx=$(awk -v a="$mx" -v b="$nz" 'BEGIN{print (b>a)?b:a}')
		fi
	done
	if [ "$mx" = 0 ]; then
		echo "$1:$line" | tee -a "$OUT/sched-summary.txt"
	else
		echo "$1:$line  min/max normalized $mn/$mx" |
			tee -a "$OUT/sched-summary.txt"
	fi
}

: >"$OUT/sched-summary.txt"
# weights 1:2:4 under credit, 1 ms and 20 ms kernels, then plain fifo
for pol in credit fifo; do
	for us in 1000 20000; do
		PHASE=$pol-$us
		start $pol
		cli sched-credit -d local:spinA -w 64 >/dev/null
		cli sched-credit -d local:spinB -w 128 >/dev/null
		cli sched-credit -d local:spinC -w 256 >/dev/null
		tenant A $us "$SECS" & p1=$!
		tenant B $us "$SECS" & p2=$!
		tenant C $us "$SECS" & p3=$!
		sample_start
		sleep $((SECS / 2)); cli list >"$OUT/$PHASE.list"
		wait $p1 $p2 $p3
		sample_stop
		stop
		report "$PHASE weights 1:2:4" "A B C" "14.3 28.6 57.1"
		[ "$pol" = fifo ] && break
	done
done
# a 25% cap on A beside an uncapped B (equal weights)
PHASE=cap; start credit
cli sched-credit -d local:spinA -w 256 -c 25 >/dev/null
tenant A 1000 "$SECS" & p1=$!
tenant B 1000 "$SECS" & p2=$!
sample_start
wait $p1 $p2; sample_stop; stop
report "cap A=25% beside B" "A B" "25 75"
# idle share is lent: A runs only the first half; B and C (1:2) share the rest
PHASE=idle; start credit
cli sched-credit -d local:spinA -w 256 >/dev/null
cli sched-credit -d local:spinB -w 256 >/dev/null
cli sched-credit -d local:spinC -w 512 >/dev/null
tenant A 1000 $((SECS / 2)) & p1=$!
tenant B 1000 "$SECS" & p2=$!
tenant C 1000 "$SECS" & p3=$!
sample_start
wait $p1 $p2 $p3; sample_stop; stop
report "idle: A stops at half time, B:C 1:2" "A B C" "- - -"
# one tenant alone: native, through xgpu without and with the scheduler
PHASE=solo
XGPU_X=1 "$T/spinsolo" 1000 $((SECS / 2)) >"$OUT/solo.native.out"
nat=$(sed -n 's/.*kernels=\([0-9]*\).*/\1/p' "$OUT/solo.native.out")
for pol in off credit; do
	start $pol; tenant solo 1000 $((SECS / 2)); stop
	cp "$OUT/solo.solo.out" "$OUT/solo.$pol.out"
	x=$(count solo)
	echo "solo 1 ms kernels, sched $pol: $x kernels vs native $nat: ratio $(awk -v a="$x" -v b="$nat" 'BEGIN{printf "%.4f", a/b}')" | tee -a "$OUT/sched-summary.txt"
done
# one tenant in turns: a 100 us kernel, synchronise, again (the guest is
# idle between turns, so the GPU changes hands at every turn: what the
# scheduler's wake-up path costs)
PHASE=solo
XGPU_X=1 "$T/spinsolo" 100 $((SECS / 2)) 1 >"$OUT/turns.native.out"
nat=$(sed -n 's/.*kernels=\([0-9]*\).*/\1/p' "$OUT/turns.native.out")
for pol in off credit; do
	start $pol; tenant solo 100 $((SECS / 2)) 1; stop
	cp "$OUT/solo.solo.out" "$OUT/turns.$pol.out"
	x=$(count solo)
	echo "solo turns of one 100 us kernel + sync, sched $pol: $x turns vs native $nat: ratio $(awk -v a="$x" -v b="$nat" 'BEGIN{printf "%.4f", a/b}')" | tee -a "$OUT/sched-summary.txt"
done
rm -rf "$T"
"$(dirname "$0")/plot.sh" "$OUT" || true
