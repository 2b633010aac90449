#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A hostile guest on the real GPU: one process queues a kernel that would
# run for a minute beside two normal guests (bench/spin: 100 us kernels,
# synchronising every 4) under xen-gpubackd --gpu-limit-ms LIMIT.
#   - the hostile guest must end with cudaErrorLaunchTimeout within
#     LIMIT + 2 s;
#   - the normal guests together must complete >= 95% of the kernels they
#     complete natively beside the same kernel for as long (killed at
#     LIMIT + 0.2 s there).  (Their ratio to a run alone is printed too:
#     through xgpu alone they complete more than natively alone, so that
#     ratio understates them.)  While the hostile kernel lives the driver time-slices it
#     with the others, which xgpu cannot change; its end is xgpu's doing.
#     (The three-way share, 1 - (LIMIT/SECS)/3 of the alone count, is
#     printed too.);
#   - GPU memory (nvidia-smi) must be back to what it was before the
#     hostile guest came within 1 s of its end (its context freed);
#   - a guest killed (SIGKILL) mid-way through 1 GiB copies, and one
#     killed mid-way through a kernel of a minute: GPU memory back to what
#     it was before each started within 1 s of the kill.
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

# These scripts test other things than the pageable-memory refusal: on a
# host whose driver lets kernels reach pageable host memory (open kernel
# modules with HMM, or ATS) the daemon refuses to start without
# --allow-pageable-access, so it is passed whenever the daemon knows it.
PAGEABLE_OPT=$("$BACKEND" --help 2>/dev/null | grep -o -m1 -- --allow-pageable-access)
# shellcheck disable=SC2086 # empty or one word
"$BACKEND" --local "$T/s.sock" --control none --foreground --driver "$DRV" \
	--gpu-limit-ms "$LIMIT_MS" $PAGEABLE_OPT >"$OUT/backend.log" 2>&1 &
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

# ms from T0 (date +%s%N) until GPU memory was back to M0 MiB (2 MiB
# of slack), looked at TRIES + 1 times 50 ms apart; nothing if it was not
mem_back() {	# mem_back M0 T0 TRIES
	local i
	for i in $(seq 0 "$3"); do
		if [ "$(gpu_mem)" -le $(($1 + 2)) ]; then
			echo $((($(date +%s%N) - $2) / 1000000))
			return
		fi
		sleep 0.05
	done
}

# one phase: the two normal guests for SECS, and (hostile != -) a hostile
# one started a second in; MODE native or xgpu.  Sets A, B (kernels) and,
# with a hostile guest, HR (its exit status), HMS (how long it lived),
# BACK (ms until GPU memory was back, empty: not within 1 s), MEM0.
phase() {	# phase NAME MODE HOSTILE
	local name=$1 mode=$2 hostile=$3 pa pb t0 t1 env=()
	[ "$mode" = xgpu ] && env=(XGPU_SOCKET="$T/s.sock" LD_LIBRARY_PATH="$LIB")
	env "${env[@]}" "$T/spinA" 100 "$SECS" 4 >"$OUT/$name.A.out" 2>&1 &
	pa=$!
	env "${env[@]}" "$T/spinB" 100 "$SECS" 4 >"$OUT/$name.B.out" 2>&1 &
	pb=$!
	if [ "$hostile" != - ]; then
		sleep 1
		MEM0=$(gpu_mem)
		t0=$(date +%s%N)
		if [ "$mode" = xgpu ]; then
			# ended by the daemon at its limit
			timeout $((LIMIT_MS / 1000 + 30)) env "${env[@]}" \
				"$T/spinH" 60000000 5 1 >"$OUT/$name.H.out" 2>&1
		else
			# natively nothing ends it: killed as late as the
			# daemon's limit would
			timeout -s KILL "$(awk -v l="$LIMIT_MS" \
				'BEGIN { printf "%.2f", l / 1000 + 0.2 }')" \
				"$T/spinH" 60000000 5 1 >"$OUT/$name.H.out" 2>&1
		fi
		HR=$?
		t1=$(date +%s%N)
		HMS=$(((t1 - t0) / 1000000))
		BACK=$(mem_back "$MEM0" "$t1" 20)
	fi
	wait "$pa" "$pb"
	A=$(count "$OUT/$name.A.out")
	B=$(count "$OUT/$name.B.out")
}

# a guest killed (SIGKILL) in the middle of its work: ARGS for spin (a
# 1 GiB copy in a loop, or a kernel of a minute), killed once it has
# begun and a second later; sets KBACK (ms until the GPU memory of
# before it started was back, empty: not within 3 s) and KPEAK (MiB
# while it ran)
killed() {	# killed NAME MARK ARGS...
	local name=$1 mark=$2 m0 kp t0
	shift 2
	m0=$(gpu_mem)
	XGPU_SOCKET=$T/s.sock LD_LIBRARY_PATH=$LIB "$T/spinK" "$@" \
		>"$OUT/killed-$name.out" 2>&1 &
	kp=$!
	for _ in $(seq 300); do
		grep -q "$mark" "$OUT/killed-$name.out" && break
		sleep 0.1
	done
	sleep 1
	KPEAK=$(gpu_mem)
	kill -9 "$kp" 2>/dev/null
	t0=$(date +%s%N)
	wait "$kp" 2>/dev/null
	KBACK=$(mem_back "$m0" "$t0" 60)
	KMEM0=$m0
}

phase native-alone native -; na0=$A nb0=$B
phase native-beside native H; na1=$A nb1=$B nhms=$HMS
phase xgpu-alone xgpu -; a0=$A b0=$B
phase xgpu-beside xgpu H; a1=$A b1=$B hr=$HR mem0=$MEM0 back=$BACK
cp "$BIN/spin" "$T/spinK"
killed copy "spin copying" copy 60; kc_back=$KBACK kc_peak=$KPEAK kc_m0=$KMEM0
killed kernel "spin first kernel" 60000000 60 1
kk_back=$KBACK kk_peak=$KPEAK kk_m0=$KMEM0
kill "$DPID" 2>/dev/null
wait "$DPID" 2>/dev/null

hostile_out=$OUT/xgpu-beside.H.out
ended_ms=$HMS
echo "hostile: exit $hr after $ended_ms ms: $(tail -n 1 "$hostile_out")"
if [ "$hr" -ne 0 ] && grep -q cudaErrorLaunchTimeout "$hostile_out" &&
	[ "$ended_ms" -le $((LIMIT_MS + 2000)) ]; then
	pass "hostile guest ended with cudaErrorLaunchTimeout in $ended_ms ms (limit $LIMIT_MS ms)"
else
	fail "hostile guest: exit $hr after $ended_ms ms (limit $LIMIT_MS ms)"
fi
if [ -z "$a0$b0" ] || [ -z "$a1$b1" ] || [ -z "$na0$nb0" ] ||
	[ -z "$na1$nb1" ]; then
	fail "normal guests: a run failed (xgpu alone $a0 $b0, beside $a1 $b1;" \
		"native alone $na0 $nb0, beside $na1 $nb1)"
else
	awk -v a0="$a0" -v b0="$b0" -v a1="$a1" -v b1="$b1" -v s="$SECS" \
		-v na0="$na0" -v nb0="$nb0" -v na1="$na1" -v nb1="$nb1" \
		-v l="$LIMIT_MS" -v nh="$nhms" 'BEGIN {
		fair = 1 - (l / 1000 / s) / 3
		r = (a1 + b1) / (a0 + b0)
		nr = (na1 + nb1) / (na0 + nb0)
		printf "normal guests through xgpu: %d+%d kernels beside it, " \
		       "%d+%d alone: %.3f (a three-way share while it " \
		       "lives would give %.3f)\n", a1, b1, a0, b0, r, fair
		printf "natively, beside the same kernel killed after %d ms: " \
		       "%d+%d, alone %d+%d: %.3f\n", nh, na1, nb1, na0, nb0, nr
		x = (a1 + b1) / (na1 + nb1)
		printf "beside it, through xgpu they complete %.3f of the " \
		       "kernels they complete natively (%.3f relative to " \
		       "each alone)\n", x, r / nr
		exit !(x >= 0.95)
	}' && pass "normal guests beside it complete >= 0.95 of what they complete natively" ||
		fail "normal guests beside it complete < 0.95 of what they complete natively"
fi
if [ -n "$back" ]; then
	pass "GPU memory back to $mem0 MiB within $back ms of the hostile guest's end"
else
	fail "GPU memory $(gpu_mem) MiB, not back to $mem0 MiB 1 s after the hostile guest's end"
fi
for k in copy kernel; do
	if [ "$k" = copy ]; then
		kb=$kc_back kp=$kc_peak km=$kc_m0 what="mid-way through 1 GiB copies"
	else
		kb=$kk_back kp=$kk_peak km=$kk_m0 what="mid-way through a kernel of a minute"
	fi
	if [ "$kp" -le $((km + 2)) ]; then
		fail "guest killed $what: it held no GPU memory ($kp MiB, $km before; see $OUT/killed-$k.out)"
	elif [ -n "$kb" ] && [ "$kb" -le 1000 ]; then
		pass "guest killed $what: GPU memory back to $km MiB (from $kp) within $kb ms"
	else
		fail "guest killed $what: GPU memory $(gpu_mem) MiB, not back to $km MiB (from $kp) within 1 s (${kb:-more than 3000} ms)"
	fi
done
grep 'past the limit' "$OUT/backend.log" | head -n 1
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
