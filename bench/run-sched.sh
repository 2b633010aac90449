#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The GPU scheduler on the real GPU: tenants (bench/spin, each a process
# of its own, i.e. a guest of the local transport) saturate the GPU with
# kernels of a fixed length while xen-gpubackd shares it out.  GPU-time
# shares are counted from the GPU's own clock, not from the daemon's
# accounting: each kernel notes when it started and ended (bench/spin's
# SPIN_STAMPS), and each tenant's share is its kernels' time inside the
# window in which all tenants were running (from the last tenant's first
# kernel to the first tenant's last: the tenants' own clocks do not start
# and stop together, and kernels queued at the end run after the others
# stopped).  Phases whose tenants wrote no stamps count kernels instead.  Prints one line per phase with the shares, the targets
# and min/max normalized share (share / target share).
#
#   bench/run-sched.sh --xgpu-lib DIR --backend PATH --cli PATH --bin DIR
#                      [--out DIR] [--secs N] [--phases "WORD..."]
#
# --phases: which phases run, of shares (1:2:4 under credit, 1 ms and
# 20 ms kernels), fifo, cap, idle, solo (1 ms kernels alone) and turns
# (100 us and 20 us turns alone); default all.  "shares" alone takes
# about 2 x SECS: for runs of two trees one after another.
#
# Targets, judged (a line ends in "ok" or "MISS"): under the credit
# scheduler every share within 1 point of its target and min/max
# normalized share >= 0.98; a tenant alone >= 0.99 of native, for 1 ms
# kernels and for turns (one kernel, then a synchronize) of 100 us and of
# 20 us.  Exit status: 0 every target met, 3 some missed, 2 bad usage.
set -u
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
LIB= BACKEND= CLI= BIN= OUT=/tmp/xgpu-sched SECS=20
PHASES="shares fifo cap idle solo turns"
bench_options "--xgpu-lib=LIB --backend=BACKEND --cli=CLI --bin=BIN \
	--out=OUT --secs=SECS --phases=PHASES" "$@"
for w in $PHASES; do
	case $w in
	shares|fifo|cap|idle|solo|turns) ;;
	*) echo "--phases: unknown phase $w" >&2; exit 2 ;;
	esac
done
# want WORD: whether that phase runs
want() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
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
	local st=()
	rm -f "$OUT/$PHASE.$1.stamps"
	[ -n "$STAMP" ] && st=("SPIN_STAMPS=$OUT/$PHASE.$1.stamps")
	env XGPU_SOCKET="$T/s.sock" LD_LIBRARY_PATH="$LIB" "${st[@]}" \
		"$T/spin$1" "$2" "$3" ${4:-} >"$OUT/$PHASE.$1.out" 2>&1
}
# the phases that compare tenants' shares stamp their kernels (STAMP=1)
STAMP=
count() { sed -n 's/.*kernels=\([0-9]*\).*/\1/p' "$OUT/$PHASE.$1.out"; }
# window NAME...: each tenant's GPU time (us) inside the window all of
# them ran in, one a line in the order given, then the window (us); no
# output unless every tenant wrote stamps
window() {
	local f files=()
	for f in "$@"; do
		[ -s "$OUT/$PHASE.$f.stamps" ] || return 0
		files+=("$OUT/$PHASE.$f.stamps")
	done
	awk '
		FNR == 1 { k++; first[k] = $1 }
		{ s[k, FNR] = $1; e[k, FNR] = $2; n[k] = FNR
		  if ($2 > last[k]) last[k] = $2 }
		END {
			w0 = first[1]; w1 = last[1]
			for (i = 2; i <= k; i++) {
				if (first[i] > w0) w0 = first[i]
				if (last[i] < w1) w1 = last[i]
			}
			for (i = 1; i <= k; i++) {
				t = 0
				for (j = 1; j <= n[i]; j++) {
					a = s[i, j] > w0 ? s[i, j] : w0
					b = e[i, j] < w1 ? e[i, j] : w1
					if (b > a) t += b - a
				}
				printf "%.0f\n", t / 1000
			}
			printf "%.0f\n", (w1 > w0 ? w1 - w0 : 0) / 1000
		}' "${files[@]}"
}
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

# verdict OK: " ok" or " MISS" (the summary's MISS lines are counted at
# the end)
verdict() {
	if [ "$1" = 1 ]; then echo " ok"; else echo " MISS"; fi
}
# report PHASE "A B C" "tA tB tC" [judge] (targets in percent; judged:
# each share within 1 point, min/max normalized >= 0.98)
report() {
	local names=($2) tg=($3) judge=${4:-} tot=0 c i line="" mn=9 mx=0 \
		near=1 win=() how
	mapfile -t win < <(window "${names[@]}")
	for i in "${!names[@]}"; do
		if [ ${#win[@]} -gt "${#names[@]}" ]; then
			c[$i]=${win[$i]}
		else
			c[$i]=$(count "${names[$i]}"); c[$i]=${c[$i]:-0}
		fi
		tot=$((tot + c[$i]))
	done
	if [ ${#win[@]} -gt "${#names[@]}" ]; then
		how=" (GPU time in the $(awk -v w="${win[${#names[@]}]}" 'BEGIN{printf "%.1f", w / 1e6}') s all ran)"
	else
		how=" (kernels counted)"
	fi
	for i in "${!names[@]}"; do
		local sh nz
		sh=$(awk -v a="${c[$i]}" -v t="$tot" 'BEGIN{printf "%.1f", t ? 100*a/t : 0}')
		line="$line ${names[$i]}=${sh}%(target ${tg[$i]})"
		if [ "${tg[$i]}" != "-" ]; then
			nz=$(awk -v s="$sh" -v t="${tg[$i]}" 'BEGIN{printf "%.3f", s/t}')
			mn=$(awk -v a="$mn" -v b="$nz" 'BEGIN{print (b<a)?b:a}')
			mx=$(awk -v a="$mx" -v b="$nz" 'BEGIN{print (b>a)?b:a}')
			awk -v s="$sh" -v t="${tg[$i]}" \
				'BEGIN{exit !(s - t <= 1 && t - s <= 1)}' || near=0
		fi
	done
	if [ "$mx" = 0 ]; then
		echo "$1:$line$how" | tee -a "$OUT/sched-summary.txt"
	elif [ -z "$judge" ]; then
		echo "$1:$line$how  min/max normalized $mn/$mx" |
			tee -a "$OUT/sched-summary.txt"
	else
		ok=$(awk -v a="$mn" -v b="$mx" -v n="$near" \
			'BEGIN{print (n && b > 0 && a / b >= 0.98) ? 1 : 0}')
		echo "$1:$line$how  min/max normalized $mn/$mx (target: within 1 point, min/max >= 0.98)$(verdict "$ok")" |
			tee -a "$OUT/sched-summary.txt"
	fi
}
# solo NAME NATIVE XGPU POLICY: a tenant alone against native (credit:
# >= 0.99 judged)
solo_line() {
	local r
	r=$(awk -v a="$3" -v b="$2" 'BEGIN{printf "%.4f", b ? a/b : 0}')
	if [ "$4" = credit ]; then
		echo "$1, sched $4: $3 vs native $2: ratio $r (target >= 0.99)$(verdict "$(awk -v r="$r" 'BEGIN{print (r >= 0.99) ? 1 : 0}')")"
	else
		echo "$1, sched $4: $3 vs native $2: ratio $r"
	fi | tee -a "$OUT/sched-summary.txt"
}

: >"$OUT/sched-summary.txt"
# weights 1:2:4 under credit, 1 ms and 20 ms kernels, then plain fifo
pols=
want shares && pols=credit
want fifo && pols="$pols fifo"
for pol in $pols; do
	for us in 1000 20000; do
		PHASE=$pol-$us STAMP=1
		start "$pol"
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
		if [ "$pol" = credit ]; then
			report "$PHASE weights 1:2:4" "A B C" "14.3 28.6 57.1" judge
		else
			report "$PHASE weights 1:2:4" "A B C" "14.3 28.6 57.1"
			break
		fi
	done
done
# a 25% cap on A beside an uncapped B (equal weights)
if want cap; then
	PHASE=cap STAMP=1; start credit
	cli sched-credit -d local:spinA -w 256 -c 25 >/dev/null
	tenant A 1000 "$SECS" & p1=$!
	tenant B 1000 "$SECS" & p2=$!
	sample_start
	wait $p1 $p2; sample_stop; stop
	report "cap A=25% beside B" "A B" "25 75" judge
fi
# idle share is lent: A runs only the first half; B and C (1:2) share the rest
if want idle; then
	PHASE=idle STAMP=; start credit
	cli sched-credit -d local:spinA -w 256 >/dev/null
	cli sched-credit -d local:spinB -w 256 >/dev/null
	cli sched-credit -d local:spinC -w 512 >/dev/null
	tenant A 1000 $((SECS / 2)) & p1=$!
	tenant B 1000 "$SECS" & p2=$!
	tenant C 1000 "$SECS" & p3=$!
	sample_start
	wait $p1 $p2 $p3; sample_stop; stop
	report "idle: A stops at half time, B:C 1:2" "A B C" "- - -"
fi
# one tenant alone: native, through xgpu without and with the scheduler
if want solo; then
	PHASE=solo STAMP=
	XGPU_X=1 "$T/spinsolo" 1000 $((SECS / 2)) >"$OUT/solo.native.out"
	nat=$(sed -n 's/.*kernels=\([0-9]*\).*/\1/p' "$OUT/solo.native.out")
	for pol in off credit; do
		start $pol; tenant solo 1000 $((SECS / 2)); stop
		cp "$OUT/solo.solo.out" "$OUT/solo.$pol.out"
		solo_line "solo 1 ms kernels" "$nat" "$(count solo)" $pol
	done
fi
# one tenant in turns: a kernel of 100 us (then 20 us), synchronise, again
# (the guest is idle between turns, so the GPU changes hands at every
# turn: what the scheduler's wake-up path costs)
usl=
want turns && usl="100 20"
for us in $usl; do
	PHASE=solo STAMP=
	XGPU_X=1 "$T/spinsolo" "$us" $((SECS / 2)) 1 >"$OUT/turns$us.native.out"
	nat=$(sed -n 's/.*kernels=\([0-9]*\).*/\1/p' "$OUT/turns$us.native.out")
	for pol in off credit; do
		start $pol; tenant solo "$us" $((SECS / 2)) 1; stop
		cp "$OUT/solo.solo.out" "$OUT/turns$us.$pol.out"
		solo_line "solo turns of one $us us kernel + sync" "$nat" \
			"$(count solo)" $pol
	done
done
rm -rf "$T"
"$(dirname "$0")/plot.sh" "$OUT" || true
MISSED=$(grep -c ' MISS$' "$OUT/sched-summary.txt")
echo "targets missed: $MISSED" | tee -a "$OUT/sched-summary.txt"
[ "$MISSED" = 0 ] || exit 3
