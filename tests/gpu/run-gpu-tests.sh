#!/bin/bash
# Run the GPU test programs natively and through xgpu, and compare.
#
# usage: tests/gpu/run-gpu-tests.sh [--xgpu-lib DIR] [--backend PATH]
#                                   [--out DIR] [--bin DIR] [PROG...]
#
#   --xgpu-lib DIR  folder holding xgpu's libcuda.so.1
#                   (default: $XGPU_LIB_DIR, else <repo>/build/lib)
#   --backend PATH  the backend daemon; started here as
#                   PATH --local SOCK --foreground --driver REALLIB
#                   (default: $XGPU_BACKEND, else <repo>/build/bin/xen-gpubackd)
#   --out DIR       where outputs and logs go (default: a new /tmp folder)
#   --bin DIR       the built test programs (default: <repo>/build/gpu;
#                   built with make -C tests/gpu when missing)
#   PROG...         run only these programs (default: all)
#
# For each program: run it natively (LD_LIBRARY_PATH untouched), then through
# xgpu (XGPU_SOCKET and LD_LIBRARY_PATH set), each under timeout 300. Both
# runs must end with "PASS <prog>" and their output without TIME lines must
# be identical. The loader's own trace (LD_DEBUG=libs) proves which
# libcuda.so.1 each run loaded: the host driver's natively, xgpu's through
# xgpu and nothing else. Then groups of programs run at the same time
# through xgpu. The last line is "N passed, M failed"; the exit status is
# 0 when nothing failed.
#
# On a machine without an NVIDIA GPU it prints one SKIP line and exits 0.

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
XGPU_LIB=${XGPU_LIB_DIR:-$ROOT/build/lib}
BACKEND=${XGPU_BACKEND:-$ROOT/build/bin/xen-gpubackd}
OUT=
BIN=$ROOT/build/gpu
PROG_TIMEOUT=300
SOCKET_WAIT_TENTHS=100          # 10 s

ALL_PROGS="vecadd matmul streams memset_dtod globals texture drvapi thrust_sort cublas_sgemm"
# Each group runs at the same time through xgpu, all against one backend.
CONCURRENT_GROUPS="matmul,thrust_sort cublas_sgemm,streams,drvapi"

usage() {
	sed -n '2,27s/^# \{0,1\}//p' "$0"
	exit "$1"
}

PROGS=
while [ $# -gt 0 ]; do
	case $1 in
	--xgpu-lib) [ $# -ge 2 ] || usage 2; XGPU_LIB=$2; shift 2 ;;
	--backend)  [ $# -ge 2 ] || usage 2; BACKEND=$2; shift 2 ;;
	--out)      [ $# -ge 2 ] || usage 2; OUT=$2; shift 2 ;;
	--bin)      [ $# -ge 2 ] || usage 2; BIN=$2; shift 2 ;;
	-h|--help)  usage 0 ;;
	-*)         echo "unknown option: $1" >&2; usage 2 ;;
	*)          PROGS="$PROGS $1"; shift ;;
	esac
done
PROGS=${PROGS# }
[ -n "$PROGS" ] || PROGS=$ALL_PROGS

if ! timeout 30 nvidia-smi -L >/dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
	echo "SKIP gpu tests: no NVIDIA GPU on this machine"
	exit 0
fi

PASSED=0
FAILED=0
BACKEND_PID=
SOCKDIR=

pass() { PASSED=$((PASSED + 1)); echo "PASS $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }

summary_and_exit() {
	echo "outputs in $OUT"
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
	exit $?
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
	OUT=$(mktemp -d /tmp/xgpu-gpu-tests.XXXXXX) || exit 2
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
for p in $PROGS; do
	case " $ALL_PROGS " in
	*" $p "*) ;;
	*) echo "unknown program: $p" >&2; exit 2 ;;
	esac
	[ -x "$BIN/$p" ] || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "building the test programs into $BIN (missing:$missing)"
	if ! make -C "$ROOT/tests/gpu" O="$BIN" > "$OUT/build.log" 2>&1; then
		fail "build: make -C tests/gpu failed, see $OUT/build.log"
		tail -n 20 "$OUT/build.log" | sed 's/^/    /'
		summary_and_exit
	fi
fi

if [ ! -e "$XGPU_LIB/libcuda.so.1" ]; then
	fail "setup: no libcuda.so.1 in $XGPU_LIB (use --xgpu-lib DIR)"
	summary_and_exit
fi
if [ ! -x "$BACKEND" ]; then
	fail "setup: backend $BACKEND is not an executable (use --backend PATH)"
	summary_and_exit
fi
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
if [ -z "$REAL_LIBCUDA" ]; then
	fail "setup: ldconfig -p lists no libcuda.so.1 other than xgpu's (set REAL_LIBCUDA=PATH)"
	summary_and_exit
fi
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
	if kill -0 "$BACKEND_PID" 2>/dev/null; then
		fail "backend: no socket $SOCK after 10 s"
	else
		fail "backend: exited before creating its socket"
	fi
	tail -n 20 "$OUT/backend.log" | sed 's/^/    /'
	summary_and_exit
fi
echo "backend: pid $BACKEND_PID, socket $SOCK"

XGPU_LD_PATH=$XGPU_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ---- running and comparing ----

# run MODE PROG TAG: runs PROG natively or through xgpu, stdout to
# $OUT/TAG.out, stderr to $OUT/TAG.err, the loader's trace to $OUT/TAG.ld.*;
# prints "<exit status> <seconds>".
run() {
	local mode=$1 prog=$2 tag=$3 t0 t1 rc

	rm -f "$OUT/$tag".ld.*
	t0=$(date +%s.%N)
	if [ "$mode" = native ]; then
		LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$tag.ld" \
			timeout "$PROG_TIMEOUT" "$BIN/$prog" \
			> "$OUT/$tag.out" 2> "$OUT/$tag.err"
	else
		XGPU_SOCKET=$SOCK LD_LIBRARY_PATH=$XGPU_LD_PATH \
			LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$tag.ld" \
			timeout "$PROG_TIMEOUT" "$BIN/$prog" \
			> "$OUT/$tag.out" 2> "$OUT/$tag.err"
	fi
	rc=$?
	t1=$(date +%s.%N)
	echo "$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
}

# The libcuda files a run initialised, one per line, from its loader trace.
loaded_libcuda() {
	cat "$OUT/$1".ld.* 2>/dev/null |
		sed -n 's/.*calling init: \(.*libcuda\.so[^ ]*\).*/\1/p' |
		sort -u
}

# check_run MODE PROG TAG RC: prints the reasons a run is bad, if any.
check_run() {
	local mode=$1 prog=$2 tag=$3 rc=$4 lib real last

	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "$mode run timed out after $PROG_TIMEOUT s"
	elif [ "$rc" -ne 0 ]; then
		echo "$mode run exited with status $rc"
	fi
	last=$(tail -n 1 "$OUT/$tag.out" 2>/dev/null)
	[ "$last" = "PASS $prog" ] ||
		echo "$mode run does not end with 'PASS $prog' (last line: '$last')"
	loaded_libcuda "$tag" | while IFS= read -r lib; do
		real=$(readlink -f "$lib")
		if [ "$mode" = native ] && [ "$real" = "$XGPU_LIBCUDA" ]; then
			echo "native run loaded xgpu's library $lib"
		elif [ "$mode" = xgpu ] && [ "$real" != "$XGPU_LIBCUDA" ]; then
			echo "xgpu run loaded $lib, not xgpu's library"
		fi
	done
}

# Output lines that must agree between runs: everything but TIME lines.
stable() { grep -v '^TIME' "$1"; }

# compare TAG_A TAG_B: prints a diff of the stable lines, if any.
compare() {
	diff -u --label "$1" --label "$2" \
		<(stable "$OUT/$1.out") <(stable "$OUT/$2.out") | head -n 40
}

report() {
	local name=$1 problems=$2

	if [ -z "$problems" ]; then
		pass "$name"
	else
		fail "$name"
		printf '    %s\n' "${problems//$'\n'/$'\n'    }"
	fi
}

for p in $PROGS; do
	read -r nrc nsec <<< "$(run native "$p" "$p.native")"
	read -r xrc xsec <<< "$(run xgpu "$p" "$p.xgpu")"
	problems=$(check_run native "$p" "$p.native" "$nrc"
		   check_run xgpu "$p" "$p.xgpu" "$xrc"
		   compare "$p.native" "$p.xgpu")
	[ -n "$problems" ] && [ -s "$OUT/$p.xgpu.err" ] &&
		problems=$(printf '%s\nxgpu stderr (tail):\n%s' "$problems" \
			   "$(grep -v '^TIME' "$OUT/$p.xgpu.err" | tail -n 5)")
	report "$p (native $nsec s, xgpu $xsec s)" "$problems"
done

# Programs at the same time through xgpu, each compared with its own
# native run.
for group in $CONCURRENT_GROUPS; do
	members=
	for p in ${group//,/ }; do
		case " $PROGS " in *" $p "*) members="$members $p" ;; esac
	done
	# shellcheck disable=SC2086
	set -- $members
	[ $# -ge 2 ] || continue
	t0=$(date +%s.%N)
	pids=
	for p in "$@"; do
		run xgpu "$p" "$p.concurrent" > "$OUT/$p.concurrent.rc" &
		pids="$pids $!"
	done
	for pid in $pids; do
		wait "$pid"
	done
	t1=$(date +%s.%N)
	problems=
	for p in "$@"; do
		rc=
		read -r rc _ < "$OUT/$p.concurrent.rc"
		more=$(check_run xgpu "$p" "$p.concurrent" "${rc:-1}"
		       compare "$p.native" "$p.concurrent")
		[ -n "$more" ] &&
			problems="${problems:+$problems$'\n'}$p: ${more//$'\n'/$'\n'$p: }"
	done
	report "concurrent ${members# } through xgpu ($(awk -v a="$t0" -v b="$t1" \
		'BEGIN { printf "%.2f", b - a }') s)" "$problems"
done

if ! kill -0 "$BACKEND_PID" 2>/dev/null; then
	fail "backend: exited during the tests, see $OUT/backend.log"
	tail -n 20 "$OUT/backend.log" | sed 's/^/    /'
fi

summary_and_exit
