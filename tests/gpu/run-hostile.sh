#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A hostile guest on the real GPU: one process queues a kernel that would
# run for a minute beside two normal guests (bench/spin: 100 us kernels,
# synchronising every 4) under xen-gpubackd --gpu-limit-ms LIMIT.
#   - the hostile guest must end with cudaErrorLaunchTimeout within
#     LIMIT + 2 s;
#   - the normal guests together must complete >= 95% of their fair share
#     of kernels, against a phase where they run alone: while the hostile
#     kernel lives the GPU is shared three ways (its kernel time-sliced by
#     the driver), after it two ways, so fair = 1 - (LIMIT/SECS)/3 of the
#     alone count;
#   - GPU memory (nvidia-smi) must be back to what it was before the
#     hostile guest came within 1 s of its end (its context freed).
# Prints PASS/FAIL lines and "N passed, M failed"; exit 0 when all passed.
# On a machine without an NVIDIA GPU: one SKIP line, exit 0.
#
#   tests/gpu/run-hostile.sh --xgpu-lib DIR --backend PATH --bin DIR
#                            [--out DIR] [--secs N] [--limit-ms N]
#   (--bin: where bench/spin was built, e.g. build/bench)
set -u
LIB= BACKEND= BIN= OUT=/tmp/xgpu-hostile SECS=10 LIMIT_MS=2000
while [ $# -gt 0 ]; do
	case $1 in
	--xgpu-lib) LIB=$2; shift ;;
	--backend) BACKEND=$2; shift ;;
	--bin) BIN=$2; shift ;;
	--out) OUT=$2; shift ;;
	--secs) SECS=$2; shift ;;
	--limit-ms) LIMIT_MS=$2; shift ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP hostile: no GPU"
	exit 0
fi
for p in LIB BACKEND BIN; do
	[ -n "${!p}" ] || { echo "missing --${p,,}" >&2; exit 2; }
	case ${!p} in /*) ;; *) eval "$p=\$PWD/\${!p}" ;; esac
done
mkdir -p "$OUT"
DRV=
for d in /usr/lib/x86_64-linux-gnu/libcuda.so.1 \
	/usr/local/nvidia/lib64/libcuda.so.1 /usr/lib64/libcuda.so.1; do
	[ -e "$d" ] && DRV=$d && break
done
T=$(mktemp -d /tmp/xgpu-hostile.XXXXXX)
for n in A B H; do cp "$BIN/spin" "$T/spin$n"; done
npass=0 nfail=0
pass() { echo "PASS $*"; npass=$((npass + 1)); }
fail() { echo "FAIL $*"; nfail=$((nfail + 1)); }

"$BACKEND" --local "$T/s.sock" --control none --foreground --driver "$DRV" \
	--gpu-limit-ms "$LIMIT_MS" >"$OUT/backend.log" 2>&1 &
DPID=$!
trap 'kill $DPID 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -S "$T/s.sock" ] && break; sleep 0.1; done
tenant() {	# tenant NAME US SECS EVERY OUTFILE
	XGPU_SOCKET=$T/s.sock LD_LIBRARY_PATH=$LIB "$T/spin$1" "$2" "$3" "$4" \
		>"$5" 2>&1
}
count() { sed -n 's/.*kernels=\([0-9]*\).*/\1/p' "$1"; }
gpu_mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits |
	head -n 1; }

# phase 1: the two normal guests alone
tenant A 100 "$SECS" 4 "$OUT/alone.A.out" &
pa=$!
tenant B 100 "$SECS" 4 "$OUT/alone.B.out" &
pb=$!
wait "$pa" "$pb"
a0=$(count "$OUT/alone.A.out"); b0=$(count "$OUT/alone.B.out")

# phase 2: the same beside a hostile guest started a second in
tenant A 100 "$SECS" 4 "$OUT/with.A.out" &
pa=$!
tenant B 100 "$SECS" 4 "$OUT/with.B.out" &
pb=$!
sleep 1
mem0=$(gpu_mem)
t0=$(date +%s%N)
timeout $((LIMIT_MS / 1000 + 30)) \
	env XGPU_SOCKET="$T/s.sock" LD_LIBRARY_PATH="$LIB" \
	"$T/spinH" 60000000 5 1 >"$OUT/hostile.out" 2>&1
hr=$?
t1=$(date +%s%N)
back=
for i in $(seq 0 20); do
	m=$(gpu_mem)
	if [ "$m" -le $((mem0 + 2)) ]; then back=$((i * 50)); break; fi
	sleep 0.05
done
wait "$pa" "$pb"
a1=$(count "$OUT/with.A.out"); b1=$(count "$OUT/with.B.out")
kill "$DPID" 2>/dev/null
wait "$DPID" 2>/dev/null

ended_ms=$(((t1 - t0) / 1000000))
echo "hostile: exit $hr after $ended_ms ms: $(tail -n 1 "$OUT/hostile.out")"
if [ "$hr" -ne 0 ] && grep -q cudaErrorLaunchTimeout "$OUT/hostile.out" &&
	[ "$ended_ms" -le $((LIMIT_MS + 2000)) ]; then
	pass "hostile guest ended with cudaErrorLaunchTimeout in $ended_ms ms (limit $LIMIT_MS ms)"
else
	fail "hostile guest: exit $hr after $ended_ms ms (limit $LIMIT_MS ms)"
fi
if [ -z "$a0" ] || [ -z "$b0" ] || [ -z "$a1" ] || [ -z "$b1" ]; then
	fail "normal guests: a run failed (alone $a0 $b0, beside $a1 $b1)"
else
	awk -v a0="$a0" -v b0="$b0" -v a1="$a1" -v b1="$b1" -v s="$SECS" \
		-v l="$LIMIT_MS" 'BEGIN {
		fair = 1 - (l / 1000 / s) / 3
		r = (a1 + b1) / (a0 + b0)
		printf "normal guests: %d+%d kernels beside it, %d+%d alone: " \
		       "%.3f of alone, fair %.3f, %.3f of fair\n",
		       a1, b1, a0, b0, r, fair, r / fair
		exit !(r / fair >= 0.95)
	}' && pass "normal guests keep >= 0.95 of their fair share" ||
		fail "normal guests below 0.95 of their fair share"
fi
if [ -n "$back" ]; then
	pass "GPU memory back to $mem0 MiB within $back ms of the hostile guest's end"
else
	fail "GPU memory $(gpu_mem) MiB, not back to $mem0 MiB 1 s after the hostile guest's end"
fi
grep 'past the limit' "$OUT/backend.log" | head -n 1
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
