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
#   PROG...         run only these programs (default: all); a variant
#                   (VARIANTS below, e.g. managed_coherent) runs its
#                   program with more environment, both ways
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
BIN=$ROOT/build/gpu
ALL="vecadd matmul streams memset_dtod globals texture drvapi thrust_sort cublas_sgemm forked cufft_1d mempool graphs graphupd graphnodes hostfn managed managed_coherent vmm memops tmap libs surface jitlink printf_dev hostreg ctxmisc gpaver arrays legacylaunch shareable greenctx managedvar managedvar_coherent driverext drvlogs capmark broad broad2 broad2_ptds broad2_cdp cappage graphpage oldabi memops_mt torch_check torch_broad torch_models py_frameworks"
# Names that run a program of ALL with more environment (harness.sh):
# managed_coherent is managed with xgpu's coherent managed memory (the
# Xen transport's mode) on the local transport, managedvar_coherent the
# same for managedvar
VARIANTS="managed_coherent:managed:XGPU_MANAGED=coherent managedvar_coherent:managedvar:XGPU_MANAGED=coherent"
# Each group runs at the same time through xgpu, all against one backend.
CONCURRENT_GROUPS="matmul,thrust_sort cublas_sgemm,streams,drvapi"
# shellcheck source-path=SCRIPTDIR source=harness.sh
. "$ROOT/tests/gpu/harness.sh"

PASSED=0
FAILED=0

pass() { PASSED=$((PASSED + 1)); echo "PASS $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }

summary_and_exit() {
	echo "outputs in $OUT"
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
	exit $?
}

# A set-up that fails is one failure, with the tail of its log.
setup_failed() {
	fail "$1: $2"
	[ $# -ge 3 ] && tail -n 20 "$3" | sed 's/^/    /'
	summary_and_exit
}

harness_init "gpu tests" xgpu-gpu-tests "$@"
PROGS=$NAMES

# ---- set-up: programs, libraries, backend ----

harness_setup program "the test programs" tests/gpu
if ! harness_start_backend; then
	if kill -0 "$BACKEND_PID" 2>/dev/null; then
		fail "backend: no socket $SOCK after 10 s"
	else
		fail "backend: exited before creating its socket"
	fi
	tail -n 20 "$OUT/backend.log" | sed 's/^/    /'
	summary_and_exit
fi

# ---- running and comparing ----

# run MODE PROG TAG: harness_run, timed; prints "<exit status> <seconds>".
run() {
	local t0 t1 rc

	t0=$(date +%s.%N)
	harness_run "$@"
	rc=$?
	t1=$(date +%s.%N)
	echo "$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
}

# check_run MODE PROG TAG RC: prints the reasons a run is bad, if any.
check_run() {
	local mode=$1 prog=$2 tag=$3 rc=$4 lib last

	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "$mode run timed out after $PROG_TIMEOUT s"
	elif [ "$rc" -ne 0 ]; then
		echo "$mode run exited with status $rc"
	fi
	last=$(tail -n 1 "$OUT/$tag.out" 2>/dev/null)
	prog=$(harness_prog "$prog")
	[ "$last" = "PASS $prog" ] ||
		echo "$mode run does not end with 'PASS $prog' (last line: '$last')"
	harness_wrong_libcuda "$mode" "$tag" | while IFS= read -r lib; do
		if [ "$mode" = native ]; then
			echo "native run loaded xgpu's library $lib"
		else
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
	case $p in torch_*)
		if ! python3 -c 'import torch' 2>/dev/null; then
			echo "SKIP $p: no PyTorch for python3 here"
			continue
		fi ;;
	py_*)
		if ! command -v python3 >/dev/null; then
			echo "SKIP $p: no python3 here"
			continue
		fi ;;
	esac
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
