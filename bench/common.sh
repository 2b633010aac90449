# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# bench/common.sh: what bench/run-many.sh and bench/run-sched.sh share;
# sourced by both, never run.  Each starts its own xen-gpubackd on the
# host's driver in a folder T of its own, with its log in $OUT/backend.log.

# bench_options "--opt=VAR ..." ARG...: every "--opt VALUE" of ARG sets
# VAR to VALUE; an option not in the list, or one without a value, is bad
# usage (exit 2)
bench_options() {
	local map=$1 opt var
	shift
	while [ $# -gt 0 ]; do
		var=
		for opt in $map; do
			[ "${opt%%=*}" = "$1" ] && var=${opt#*=}
		done
		[ -n "$var" ] || { echo "unknown option $1" >&2; exit 2; }
		[ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
		printf -v "$var" '%s' "$2"
		shift 2
	done
}

# bench_abs VAR...: each of these variables, a path, made absolute
bench_abs() {
	local p
	for p; do
		case ${!p} in /*) ;; *) printf -v "$p" '%s' "$PWD/${!p}" ;; esac
	done
}

# bench_need_gpu WHAT: without an NVIDIA GPU, one SKIP line and exit 0;
# else DRV: the host driver's libcuda.so.1
bench_need_gpu() {
	local d
	if ! nvidia-smi -L >/dev/null 2>&1; then
		echo "SKIP $1: no GPU"
		exit 0
	fi
	DRV=
	for d in /usr/lib/x86_64-linux-gnu/libcuda.so.1 \
		 /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib64/libcuda.so.1; do
		[ -e "$d" ] && DRV=$d && break
	done
}

# bench_start POLICY: the daemon on $T/s.sock (control: $T/c.sock) with
# scheduler POLICY; DPID its pid.  These runs test other things than the
# pageable-memory refusal: on a host whose driver lets kernels reach
# pageable host memory (open kernel modules with HMM, or ATS) the daemon
# refuses to start without --allow-pageable-access, so it is passed
# whenever the daemon knows it.
bench_start() {
	local pageable
	pageable=$("$BACKEND" --help 2>/dev/null |
		grep -o -m1 -- --allow-pageable-access)
	# shellcheck disable=SC2086 # empty or one word; options, split
	"$BACKEND" --local "$T/s.sock" --control "$T/c.sock" --foreground \
		--driver "$DRV" --sched "$1" $pageable ${BENCH_BACKEND_OPTS:-} \
		>>"$OUT/backend.log" 2>&1 &
	DPID=$!
	for _ in $(seq 50); do [ -S "$T/c.sock" ] && break; sleep 0.1; done
}

bench_stop() {
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	rm -f "$T"/*.sock
}
