# shellcheck shell=bash
# tests/gpu/harness.sh: what tests/gpu/run-gpu-tests.sh and
# bench/run-bench.sh share; sourced by both, never run.
#
# Both run CUDA programs natively and then through xgpu, against a backend
# daemon started here on the host's own driver, and tell from the loader's
# trace (LD_DEBUG=libs) which libcuda.so.1 each run loaded.  They differ in
# what they do with the results and in how they report a failed set-up, so
# the caller provides, before sourcing:
#
#   ROOT  the repository
#   BIN   where the built programs are by default (--bin overrides it)
#   ALL   every program it knows, space-separated
#   DEFAULT  (optional) the programs run when none are named (else ALL)
#
# and, before harness_setup, a function that reports and exits:
#
#   setup_failed STAGE MESSAGE [LOG]   STAGE: build or setup; LOG: a file
#                                      whose tail explains it
#
# Then: harness_init, harness_setup, harness_start_backend, and for each
# run harness_run and harness_wrong_libcuda.

XGPU_LIB=${XGPU_LIB_DIR:-$ROOT/build/lib}
BACKEND=${XGPU_BACKEND:-$ROOT/build/bin/xen-gpubackd}
OUT=
PROG_TIMEOUT=${XGPU_PROG_TIMEOUT:-300}
SOCKET_WAIT_TENTHS=100          # 10 s
BACKEND_PID=
SOCKDIR=

# The caller's usage text: its opening comment, up to the first blank line.
harness_usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
	exit "$1"
}

# Runs from the EXIT trap.
# shellcheck disable=SC2317
harness_cleanup() {
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

# harness_init WHAT TEMPLATE ARG...: the options, then on a machine without
# an NVIDIA GPU one SKIP line for WHAT and exit 0; else the clean-up trap and
# the output folder (a new /tmp/TEMPLATE.XXXXXX unless --out).  NAMES: the
# programs asked for (default: ALL).
harness_init() {
	local what=$1 template=$2

	shift 2
	NAMES=
	while [ $# -gt 0 ]; do
		case $1 in
		--xgpu-lib) [ $# -ge 2 ] || harness_usage 2; XGPU_LIB=$2; shift 2 ;;
		--backend)  [ $# -ge 2 ] || harness_usage 2; BACKEND=$2; shift 2 ;;
		--out)      [ $# -ge 2 ] || harness_usage 2; OUT=$2; shift 2 ;;
		--bin)      [ $# -ge 2 ] || harness_usage 2; BIN=$2; shift 2 ;;
		-h|--help)  harness_usage 0 ;;
		-*)         echo "unknown option: $1" >&2; harness_usage 2 ;;
		*)          NAMES="$NAMES $1"; shift ;;
		esac
	done
	NAMES=${NAMES# }
	[ -n "$NAMES" ] || NAMES=${DEFAULT:-$ALL}

	if ! timeout 30 nvidia-smi -L >/dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
		echo "SKIP $what: no NVIDIA GPU on this machine"
		exit 0
	fi

	trap harness_cleanup EXIT
	trap 'exit 130' INT TERM

	if [ -z "$OUT" ]; then
		OUT=$(mktemp -d "/tmp/$template.XXXXXX") || exit 2
	else
		mkdir -p "$OUT" || exit 2
	fi
	OUT=$(cd "$OUT" && pwd)
}

# The host driver's libcuda.so.1, by absolute path, from the loader cache,
# never xgpu's (a backend that loaded xgpu's library would talk to itself).
harness_find_real_libcuda() {
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

# Variants: a test name that runs another program with more environment,
# one "name:program:VAR=value[,VAR=value...]" word per variant in VARIANTS
# (set by the caller).  harness_prog NAME: the program NAME runs (NAME
# itself unless it is a variant); harness_env NAME: its extra environment,
# VAR=value words (none unless a variant).
harness_prog() {
	local v

	for v in ${VARIANTS:-}; do
		case $v in "$1":*) v=${v#*:}; echo "${v%%:*}"; return ;; esac
	done
	echo "$1"
}

harness_env() {
	local v

	for v in ${VARIANTS:-}; do
		case $v in "$1":*:*) v=${v#*:}; v=${v#*:}; echo "${v//,/ }"; return ;; esac
	done
}

# harness_setup NOUN PLURAL DIR: every name in NAMES must be one of ALL
# (else "unknown NOUN", exit 2); the missing programs are built into BIN
# with make -C DIR (DIR: the caller's folder in the repository; announced
# as building PLURAL); then xgpu's library, the backend and the host
# driver's library (REAL_LIBCUDA) are found.
harness_setup() {
	local noun=$1 plural=$2 dir=$3 missing="" n

	# Absolute paths: make -C changes folder, and the runs must not
	# depend on where the script was started.
	case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
	case $BACKEND in /*) ;; *) BACKEND=$PWD/$BACKEND ;; esac

	for n in $NAMES; do
		case " $ALL " in
		*" $n "*) ;;
		*) echo "unknown $noun: $n" >&2; exit 2 ;;
		esac
		[ -x "$BIN/$(harness_prog "$n")" ] || missing="$missing $n"
	done
	if [ -n "$missing" ]; then
		echo "building $plural into $BIN (missing:$missing)"
		make -C "$ROOT/$dir" O="$BIN" > "$OUT/build.log" 2>&1 ||
			setup_failed build \
				"make -C $dir failed, see $OUT/build.log" \
				"$OUT/build.log"
	fi

	[ -e "$XGPU_LIB/libcuda.so.1" ] ||
		setup_failed setup "no libcuda.so.1 in $XGPU_LIB (use --xgpu-lib DIR)"
	[ -x "$BACKEND" ] ||
		setup_failed setup "backend $BACKEND is not an executable (use --backend PATH)"
	XGPU_LIB=$(cd "$XGPU_LIB" && pwd -P)
	XGPU_LIBCUDA=$(readlink -f "$XGPU_LIB/libcuda.so.1")

	REAL_LIBCUDA=${REAL_LIBCUDA:-$(harness_find_real_libcuda)}
	[ -n "$REAL_LIBCUDA" ] ||
		setup_failed setup "ldconfig -p lists no libcuda.so.1 other than xgpu's (set REAL_LIBCUDA=PATH)"
	echo "host driver: $REAL_LIBCUDA"
	echo "xgpu library: $XGPU_LIB/libcuda.so.1"
}

# Starts the backend on the host driver (with XGPU_BACKEND_OPTS, e.g.
# "--sched off", added to its options), its log in $OUT/backend.log, and
# waits up to 10 s for its socket SOCK.  Returns 1 when there is none (the
# caller reports it: BACKEND_PID tells whether the daemon is still alive).
harness_start_backend() {
	SOCKDIR=$(mktemp -d /tmp/xgpu-sock.XXXXXX) || exit 2
	SOCK=$SOCKDIR/backend.sock
	# The workers sandboxed as on an installed system: the user xgpu
	# where it exists (the daemon's default), else nobody, unless
	# XGPU_BACKEND_OPTS names one ("--worker-user root --no-seccomp": as
	# before the sandbox)
	WORKER_OPT=
	case " ${XGPU_BACKEND_OPTS:-} " in
	*" --worker-user "*) ;;
	*)	if [ "$(id -u)" = 0 ] && ! getent passwd xgpu >/dev/null &&
			getent passwd nobody >/dev/null; then
			WORKER_OPT="--worker-user nobody"
		fi ;;
	esac
	# Not what these runs test: on a host whose driver lets kernels reach
	# pageable host memory (open kernel modules with HMM, or ATS) the
	# daemon refuses to start without --allow-pageable-access; passed
	# whenever the daemon knows the option
	PAGEABLE_OPT=$("$BACKEND" --help 2>/dev/null |
		grep -o -m1 -- --allow-pageable-access)
	# shellcheck disable=SC2086 # XGPU_BACKEND_OPTS: more options, split
	"$BACKEND" --local "$SOCK" --control "$SOCKDIR/control.sock" \
		--foreground --driver "$REAL_LIBCUDA" $WORKER_OPT $PAGEABLE_OPT \
		${XGPU_BACKEND_OPTS:-} > "$OUT/backend.log" 2>&1 &
	BACKEND_PID=$!
	for _ in $(seq "$SOCKET_WAIT_TENTHS"); do
		[ -S "$SOCK" ] && break
		kill -0 "$BACKEND_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ -S "$SOCK" ] || return 1
	echo "backend: pid $BACKEND_PID, socket $SOCK" \
		"${WORKER_OPT:+(workers: $WORKER_OPT)}"

	XGPU_LD_PATH=$XGPU_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# harness_run MODE PROG TAG: runs $BIN/PROG natively (LD_LIBRARY_PATH
# untouched) or through xgpu (XGPU_SOCKET and LD_LIBRARY_PATH set), under
# timeout; stdout to $OUT/TAG.out, stderr to $OUT/TAG.err, the loader's
# trace (which libcuda.so.1 was loaded; no cost after start-up) to
# $OUT/TAG.ld.*; returns PROG's exit status.
harness_run() {
	local mode=$1 prog=$2 tag=$3 exe extra

	exe=$BIN/$(harness_prog "$prog")
	extra=$(harness_env "$prog")
	rm -f "$OUT/$tag".ld.*
	# shellcheck disable=SC2086 # extra: VAR=value words
	if [ "$mode" = native ]; then
		env $extra LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$tag.ld" \
			timeout "$PROG_TIMEOUT" "$exe" \
			> "$OUT/$tag.out" 2> "$OUT/$tag.err"
	else
		env $extra XGPU_SOCKET="$SOCK" LD_LIBRARY_PATH="$XGPU_LD_PATH" \
			LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$tag.ld" \
			timeout "$PROG_TIMEOUT" "$exe" \
			> "$OUT/$tag.out" 2> "$OUT/$tag.err"
	fi
}

# harness_wrong_libcuda MODE TAG: the libcuda files the run TAG initialised
# that it should not have (xgpu's in a native run, any other in an xgpu
# run), one per line.
harness_wrong_libcuda() {
	local mode=$1 tag=$2 lib real

	cat "$OUT/$tag".ld.* 2>/dev/null |
		sed -n 's/.*calling init: \(.*libcuda\.so[^ ]*\).*/\1/p' |
		sort -u |
		while IFS= read -r lib; do
			real=$(readlink -f "$lib")
			if { [ "$mode" = native ] && [ "$real" = "$XGPU_LIBCUDA" ]; } ||
			   { [ "$mode" = xgpu ] && [ "$real" != "$XGPU_LIBCUDA" ]; }; then
				echo "$lib"
			fi
		done
}
