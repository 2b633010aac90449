#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Many guests at once on the real GPU: N tenants (bench/spin, each a
# process of its own, i.e. a guest of the local transport) run kernels of
# a fixed amount of work (SPIN_ITERS, calibrated to the length alone on
# the GPU: a kernel that waits for a timer would finish on time while the
# driver time-slices it), synchronising every EVERY kernels, for SECS
# seconds, all from one moment once every tenant's context is up;
# first N native processes, then N guests through xen-gpubackd (credit
# scheduler, equal weights).  For each N and kernel length it prints the
# kernels completed natively and through xgpu, their ratio (target
# >= 0.97), the GPU busy fraction of each (kernel time / wall: kernels of
# different processes do not overlap on the GPU; target for xgpu >= 0.90
# from N = 8, where native processes that synchronise leave gaps) and the GPU memory each
# process holds (nvidia-smi, mid-run), and the Dom0 CPU the workers used
# (the daemon logs each worker's CPU seconds and life when it reaps it)
# per guest-second (bound: 1.2, a core per guest and its driver's
# threads) and per second of GPU work.
#
#   bench/run-many.sh --xgpu-lib DIR --backend PATH --bin DIR [--out DIR]
#                     [--secs N] [--counts "1 8 32 64"] [--us "100 1000 5000"]
#                     [--every K]
# Exit status: 0 every ratio met its target, 3 some missed, 2 bad usage.
set -u
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
LIB= BACKEND= BIN= OUT=/tmp/xgpu-many SECS=6 COUNTS="1 8 32 64" US="100 1000 5000"
EVERY=4
bench_options "--xgpu-lib=LIB --backend=BACKEND --bin=BIN --out=OUT \
	--secs=SECS --counts=COUNTS --us=US --every=EVERY" "$@"
for p in LIB BACKEND BIN; do
	[ -n "${!p}" ] || { echo "usage: missing --${p,,}" >&2; exit 2; }
done
bench_abs LIB BACKEND BIN
mkdir -p "$OUT"
bench_need_gpu many
T=$(mktemp -d /tmp/xgpu-many.XXXXXX)
DPID=
start() { bench_start credit; }
# stop L0 N: the tenants are gone; the daemon reaps their N workers, whose
# exit lines (in the log from line L0 on) carry the Dom0 CPU each used:
# wait for them (64 contexts take seconds to tear down), 60 s at most
stop() {
	local i c n
	for i in $(seq 600); do
		read -r c c n < <(worker_cpu "$1")
		[ "$n" -ge "$2" ] && break
		sleep 0.1
	done
	bench_stop
}

# the workers' CPU seconds and lifetimes in the log from line $1 on
worker_cpu() {
	tail -n "+$1" "$OUT/backend.log" |
		sed -n 's/.*[(;] *CPU \([0-9.]*\) s in \([0-9.]*\) s).*/\1 \2/p' |
		awk '{ c += $1; l += $2; n++ } END { printf "%.3f %.3f %d", c, l, n }'
}

# phase MODE N US: N tenants at once; prints "<kernels> <MiB per process>"
phase() {
	local mode=$1 n=$2 us=$3 i pids=() tot=0 k mem
	export SPIN_ITERS=${ITERS[$us]}
	# every tenant's timed window starts at one moment, once all are up
	SPIN_START_AT=$(awk -v n="$n" -v now="$(date +%s.%N)" \
		'BEGIN { printf "%.3f", now + 3 + n * 0.25 }')
	export SPIN_START_AT
	for i in $(seq 1 "$n"); do
		cp "$BIN/spin" "$T/t$i" 2>/dev/null || true
		if [ "$mode" = native ]; then
			"$T/t$i" "$us" "$SECS" "$EVERY" \
				>"$OUT/$mode.$n.$us.$i.out" 2>&1 &
		else
			XGPU_SOCKET=$T/s.sock LD_LIBRARY_PATH=$LIB \
				"$T/t$i" "$us" "$SECS" "$EVERY" \
				>"$OUT/$mode.$n.$us.$i.out" 2>&1 &
		fi
		pids+=($!)
	done
	sleep "$(awk -v s="$SECS" -v at="$SPIN_START_AT" -v now="$(date +%s.%N)" \
		'BEGIN { print at - now + s / 2 }')"
	# the processes' GPU memory: the tenants natively, the workers
	# through xgpu
	mem=$(nvidia-smi --query-compute-apps=used_memory \
		--format=csv,noheader,nounits 2>/dev/null |
		awk '{ s += $1; n++ } END { printf "%.0f", n ? s / n : 0 }')
	wait "${pids[@]}"
	late=$(cat "$OUT/$mode.$n.$us".*.out | grep -c 'spin: late')
	[ "$late" -eq 0 ] || echo "$mode N=$n: $late tenants started late" >&2
	for i in $(seq 1 "$n"); do
		k=$(sed -n 's/.*kernels=\([0-9]*\).*/\1/p' \
			"$OUT/$mode.$n.$us.$i.out")
		tot=$((tot + ${k:-0}))
	done
	echo "$tot $mem"
}

: >"$OUT/many-summary.txt"
met=0 missed=0
# the GPU's memory (MiB), for the most guests whose contexts fit
GPU_MIB=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits \
	2>/dev/null | head -n 1 | tr -dc 0-9)
declare -A ITERS
for us in $US; do
	ITERS[$us]=$("$BIN/spin" calibrate "$us" | sed -n 's/^spin iters=//p')
	[ -n "${ITERS[$us]}" ] || { echo "ERROR spin calibrate $us failed"; exit 2; }
	echo "kernels of $us us: ${ITERS[$us]} iterations" | tee -a "$OUT/many-summary.txt"
done
for us in $US; do
	for n in $COUNTS; do
		read -r kn mn < <(phase native "$n" "$us")
		touch "$OUT/backend.log"
		l0=$(($(wc -l <"$OUT/backend.log") + 1))
		start
		read -r kx mx < <(phase xgpu "$n" "$us")
		stop "$l0" "$n"
		read -r wc wl wn < <(worker_cpu "$l0")
		line=$(awk -v n="$n" -v us="$us" -v kn="$kn" -v kx="$kx" \
			-v mn="$mn" -v mx="$mx" -v s="$SECS" -v wc="$wc" \
			-v wl="$wl" -v wn="$wn" -v gm="${GPU_MIB:-0}" 'BEGIN {
			r = kn ? kx / kn : 0
			# Dom0 CPU: the workers CPU over their lives, and over
			# the GPU time of the kernels they ran; a worker spins
			# for the next request and while its kernels run, so
			# up to one core per busy guest, never more
			pg = wl ? wc / wl : -1
			cpu_ok = wn == n && pg <= 1.2
			# many guests: the scheduler keeps the GPU busy
			bx = kx * us / (s * 1e6)
			busy = n < 8 ? "" : bx >= 0.90 ? " ok (>= 0.90 at N >= 8)" : " MISS (>= 0.90 at N >= 8)"
			printf "N=%d %d us kernels: native %d, xgpu %d: ratio %.3f %s; GPU busy native %.2f, xgpu %.2f%s; MiB per process native %d, xgpu %d (guests whose contexts fit in %d MiB: %d); Dom0 CPU %.3f s per guest-second, %.2f s per GPU-second %s",
				n, us, kn, kx, r,
				(r >= 0.97) ? "ok (>= 0.97)" : "MISS (>= 0.97)",
				kn * us / (s * 1e6), bx, busy, mn, mx,
				gm, (mx > 0 ? int(gm / mx) : 0),
				pg, kx ? wc / (kx * us / 1e6) : -1,
				cpu_ok ? "ok (<= 1.2 per guest)" : "MISS (<= 1.2 per guest, " wn " of " n " workers logged)"
		}')
		echo "$line" | tee -a "$OUT/many-summary.txt"
		case $line in
		*MISS*|"") missed=$((missed + 1)) ;;
		*) met=$((met + 1)) ;;
		esac
	done
done
echo "targets: $met met, $missed missed" | tee -a "$OUT/many-summary.txt"
rm -rf "$T"
[ "$missed" -eq 0 ] || exit 3
