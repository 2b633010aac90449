#!/bin/bash
# Run the benchmarks natively and through xgpu, and tabulate them.
#
# usage: bench/run-bench.sh [--xgpu-lib DIR] [--backend PATH] [--out DIR]
#                           [--bin DIR] [BENCH...]
#
#   --xgpu-lib DIR  folder holding xgpu's libcuda.so.1
#                   (default: $XGPU_LIB_DIR, else <repo>/build/lib)
#   --backend PATH  the backend daemon; started here as
#                   PATH --local SOCK --foreground --driver REALLIB
#                   (default: $XGPU_BACKEND, else <repo>/build/bin/xen-gpubackd)
#   --out DIR       raw outputs, logs and bench-summary.txt (the table)
#                   (default: a new /tmp folder)
#   --bin DIR       the built benchmarks (default: <repo>/build/bench;
#                   built with make -C bench when missing)
#   BENCH...        run only these of: bw rtt launch (default: all)
#
# Each benchmark runs natively (LD_LIBRARY_PATH untouched), then through
# xgpu (XGPU_SOCKET and LD_LIBRARY_PATH set), each under timeout 300. The
# table shows native, xgpu and their comparison, and marks the targets:
#   pinned copies >= 4 MiB       xgpu >= 90% of native
#   pageable copies >= 4 MiB     xgpu >= 100% of native
#   round trips, p50             xgpu <= native + 5 us
#   async launch                 throughput (native_us / xgpu_us) >= 90%
# Exit status: 0 all ran and all targets met; 3 all ran, some target missed;
# 1 a run failed; 2 bad usage or set-up.
#
# On a machine without an NVIDIA GPU it prints one SKIP line and exits 0.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
XGPU_LIB=${XGPU_LIB_DIR:-$ROOT/build/lib}
BACKEND=${XGPU_BACKEND:-$ROOT/build/bin/xen-gpubackd}
OUT=
BIN=$ROOT/build/bench
PROG_TIMEOUT=300
SOCKET_WAIT_TENTHS=100          # 10 s
ALL_BENCHES="bw rtt launch"

usage() {
	sed -n '2,29s/^# \{0,1\}//p' "$0"
	exit "$1"
}

BENCHES=
while [ $# -gt 0 ]; do
	case $1 in
	--xgpu-lib) [ $# -ge 2 ] || usage 2; XGPU_LIB=$2; shift 2 ;;
	--backend)  [ $# -ge 2 ] || usage 2; BACKEND=$2; shift 2 ;;
	--out)      [ $# -ge 2 ] || usage 2; OUT=$2; shift 2 ;;
	--bin)      [ $# -ge 2 ] || usage 2; BIN=$2; shift 2 ;;
	-h|--help)  usage 0 ;;
	-*)         echo "unknown option: $1" >&2; usage 2 ;;
	*)          BENCHES="$BENCHES $1"; shift ;;
	esac
done
BENCHES=${BENCHES# }
[ -n "$BENCHES" ] || BENCHES=$ALL_BENCHES

if ! timeout 30 nvidia-smi -L >/dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
	echo "SKIP bench: no NVIDIA GPU on this machine"
	exit 0
fi

BACKEND_PID=
SOCKDIR=

die() {
	echo "ERROR $*"
	exit 2
}

# Runs from the EXIT trap.
# shellcheck disable=SC2317
cleanup() {
	if [ -n "$BACKEND_PID" ] && kill -0 "$BACKEND_PID" 2>/dev/null; then
		kill "$BACKEND_PID" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$BACKEND_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$BACKEND_PID" 2>/dev/null && kill -9 "$BACKEND_PID" 2>/dev/null
		wait "$BACKEND_PID" 2>/dev/null
	fi
	BACKEND_PID=
	[ -n "$SOCKDIR" ] && rm -rf "$SOCKDIR"
	SOCKDIR=
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$OUT" ]; then
	OUT=$(mktemp -d /tmp/xgpu-bench.XXXXXX) || exit 2
else
	mkdir -p "$OUT" || exit 2
fi
OUT=$(cd "$OUT" && pwd)

# ---- set-up: programs, libraries, backend ----

# Absolute paths: make -C changes folder, and the runs must not depend on
# where the script was started.
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
case $BACKEND in /*) ;; *) BACKEND=$PWD/$BACKEND ;; esac

missing=
for b in $BENCHES; do
	case " $ALL_BENCHES " in
	*" $b "*) ;;
	*) echo "unknown benchmark: $b" >&2; exit 2 ;;
	esac
	[ -x "$BIN/$b" ] || missing="$missing $b"
done
if [ -n "$missing" ]; then
	echo "building the benchmarks into $BIN (missing:$missing)"
	make -C "$ROOT/bench" O="$BIN" > "$OUT/build.log" 2>&1 ||
		die "make -C bench failed, see $OUT/build.log"
fi

[ -e "$XGPU_LIB/libcuda.so.1" ] ||
	die "no libcuda.so.1 in $XGPU_LIB (use --xgpu-lib DIR)"
[ -x "$BACKEND" ] ||
	die "backend $BACKEND is not an executable (use --backend PATH)"
XGPU_LIB=$(cd "$XGPU_LIB" && pwd -P)
XGPU_LIBCUDA=$(readlink -f "$XGPU_LIB/libcuda.so.1")

# The host driver's libcuda.so.1, by absolute path, from the loader cache,
# never xgpu's (a backend that loaded xgpu's library would talk to itself).
find_real_libcuda() {
	local path real

	for path in $(ldconfig -p 2>/dev/null |
		      awk '$1 == "libcuda.so.1" && /64/ { print $NF }') \
		    $(ldconfig -p 2>/dev/null |
		      awk '$1 == "libcuda.so.1" { print $NF }'); do
		[ -e "$path" ] || continue
		real=$(readlink -f "$path")
		[ "$real" = "$XGPU_LIBCUDA" ] && continue
		[ "$(dirname "$real")" = "$XGPU_LIB" ] && continue
		[ "$(cd "$(dirname "$path")" && pwd -P)" = "$XGPU_LIB" ] && continue
		echo "$path"
		return 0
	done
	return 1
}
REAL_LIBCUDA=${REAL_LIBCUDA:-$(find_real_libcuda)}
[ -n "$REAL_LIBCUDA" ] ||
	die "ldconfig -p lists no libcuda.so.1 other than xgpu's (set REAL_LIBCUDA=PATH)"
echo "host driver: $REAL_LIBCUDA"
echo "xgpu library: $XGPU_LIB/libcuda.so.1"

SOCKDIR=$(mktemp -d /tmp/xgpu-sock.XXXXXX) || exit 2
SOCK=$SOCKDIR/backend.sock
"$BACKEND" --local "$SOCK" --control "$SOCKDIR/control.sock" \
	--foreground --driver "$REAL_LIBCUDA" \
	> "$OUT/backend.log" 2>&1 &
BACKEND_PID=$!
for _ in $(seq "$SOCKET_WAIT_TENTHS"); do
	[ -S "$SOCK" ] && break
	kill -0 "$BACKEND_PID" 2>/dev/null || break
	sleep 0.1
done
if [ ! -S "$SOCK" ]; then
	tail -n 20 "$OUT/backend.log" | sed 's/^/    /'
	die "backend: no socket $SOCK (see $OUT/backend.log)"
fi
echo "backend: pid $BACKEND_PID, socket $SOCK"

XGPU_LD_PATH=$XGPU_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---- runs ----

# run MODE BENCH: stdout to $OUT/BENCH.MODE.out, stderr to .err, the
# loader's trace (which libcuda.so.1 was loaded; no cost after start-up) to
# .ld.*; returns the benchmark's exit status.
run() {
	local mode=$1 b=$2

	rm -f "$OUT/$b.$mode".ld.*
	if [ "$mode" = native ]; then
		LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$b.native.ld" \
			timeout "$PROG_TIMEOUT" "$BIN/$b" \
			> "$OUT/$b.native.out" 2> "$OUT/$b.native.err"
	else
		XGPU_SOCKET=$SOCK LD_LIBRARY_PATH=$XGPU_LD_PATH \
			LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$b.xgpu.ld" \
			timeout "$PROG_TIMEOUT" "$BIN/$b" \
			> "$OUT/$b.xgpu.out" 2> "$OUT/$b.xgpu.err"
	fi
}

# wrong_lib MODE BENCH: prints the libcuda files the run should not have
# loaded (xgpu's in a native run, any other in an xgpu run).
wrong_lib() {
	local lib real

	cat "$OUT/$2.$1".ld.* 2>/dev/null |
		sed -n 's/.*calling init: \(.*libcuda\.so[^ ]*\).*/\1/p' |
		sort -u |
		while IFS= read -r lib; do
			real=$(readlink -f "$lib")
			if { [ "$1" = native ] && [ "$real" = "$XGPU_LIBCUDA" ]; } ||
			   { [ "$1" = xgpu ] && [ "$real" != "$XGPU_LIBCUDA" ]; }; then
				echo "$lib"
			fi
		done
}

RUN_FAILED=0
: > "$OUT/native.all"
: > "$OUT/xgpu.all"
for b in $BENCHES; do
	for mode in native xgpu; do
		echo "running $b ($mode)"
		run "$mode" "$b"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			RUN_FAILED=$((RUN_FAILED + 1))
			echo "FAIL $b ($mode): exit status $rc"
			grep '^FAIL' "$OUT/$b.$mode.out" | head -n 5 | sed 's/^/    /'
		fi
		wrong=$(wrong_lib "$mode" "$b")
		if [ -n "$wrong" ]; then
			RUN_FAILED=$((RUN_FAILED + 1))
			echo "FAIL $b ($mode): loaded the wrong libcuda: ${wrong//$'\n'/ }"
		fi
		cat "$OUT/$b.$mode.out" >> "$OUT/$mode.all"
	done
done

if ! kill -0 "$BACKEND_PID" 2>/dev/null; then
	RUN_FAILED=$((RUN_FAILED + 1))
	echo "FAIL backend: exited during the benchmarks, see $OUT/backend.log"
fi

# ---- the table ----

# Both files hold BW, RTT and LAUNCH lines; rows follow the native order.
# The last line is "targets: N met, M missed".
awk '
function row(what, n, x, cmp, target) {
	printf "%-30s %12s %12s %12s  %s\n", what, n, x, cmp, target
}
function num(v) { return v == "" ? "n/a" : v }
function mark(ok, text) {
	if (ok) { met++; return "ok   (" text ")" }
	missed++
	return "MISS (" text ")"
}
function keys(file_is_native,    k) {
	if ($1 == "BW" && NF >= 5) {
		k = "BW " $2 " " $3 " " $4
		set(file_is_native, k, $5)
	} else if ($1 == "RTT" && NF >= 6) {
		set(file_is_native, "RTT " $2 " p50", $4)
		set(file_is_native, "RTT " $2 " p99", $6)
	} else if ($1 == "LAUNCH" && NF >= 3) {
		set(file_is_native, "LAUNCH " $2, $3)
	}
}
function set(file_is_native, k, v) {
	if (file_is_native) {
		if (!(k in nat))
			order[++n] = k
		nat[k] = v
	} else {
		if (!(k in nat) && !(k in xg))
			order[++n] = k
		xg[k] = v
	}
}
FNR == NR { keys(1); next }
{ keys(0) }
END {
	row("what", "native", "xgpu", "compare", "target")
	for (i = 1; i <= n; i++) {
		k = order[i]
		split(k, f, " ")
		nv = (k in nat) ? nat[k] : ""
		xv = (k in xg) ? xg[k] : ""
		have = nv != "" && xv != "" && nv + 0 > 0 && xv + 0 > 0
		if (f[1] == "BW") {
			bytes = f[4] + 0
			cmp = have ? sprintf("%.2f", xv / nv) : "n/a"
			target = "-"
			if (bytes >= 4194304 && f[3] == "pinned")
				target = mark(have && xv / nv >= 0.90, ">= 0.90")
			else if (bytes >= 4194304 && f[3] == "pageable")
				target = mark(have && xv / nv >= 1.00, ">= 1.00")
			row(k " GB/s", num(nv), num(xv), cmp, target)
		} else if (f[1] == "RTT") {
			cmp = have ? sprintf("%+.2f us", xv - nv) : "n/a"
			target = "-"
			if (f[3] == "p50")
				target = mark(have && xv - nv <= 5.0, "<= native + 5 us")
			row(k " us", num(nv), num(xv), cmp, target)
		} else {
			if (f[2] == "async_us_per_launch") {
				cmp = have ? sprintf("%.2f thr", nv / xv) : "n/a"
				target = mark(have && nv / xv >= 0.90,
					      "throughput >= 0.90")
			} else {
				cmp = have ? sprintf("%+.2f us", xv - nv) : "n/a"
				target = "-"
			}
			row(k, num(nv), num(xv), cmp, target)
		}
	}
	printf "targets: %d met, %d missed\n", met, missed
}' "$OUT/native.all" "$OUT/xgpu.all" > "$OUT/bench-summary.txt"

cat "$OUT/bench-summary.txt"
echo "outputs in $OUT"
if [ "$RUN_FAILED" -gt 0 ]; then
	echo "$RUN_FAILED runs failed"
	exit 1
fi
if grep -q '^targets: [0-9]* met, [1-9]' "$OUT/bench-summary.txt"; then
	exit 3
fi
exit 0
