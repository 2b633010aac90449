# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# What tests/integration/run.sh and run-net.sh share, sourced by both after
# they set TMP (the run's folder), LOG (the backend's log), DPID (the
# daemon's pid, empty while none runs) and npass=0 nfail=0.

# pass NAME / fail NAME [WHY...]: one line per step, counted
pass() {
	echo "PASS $1"
	npass=$((npass + 1))
}

fail() {
	local name=$1
	shift
	echo "FAIL $name${1:+: $*}"
	nfail=$((nfail + 1))
}

# the FAIL lines (or the last lines) of a client's output, indented
show() {
	if grep -q '^FAIL' "$1" 2>/dev/null; then
		grep '^FAIL' "$1" | head -n 20 | sed 's/^/    /'
	else
		tail -n 10 "$1" 2>/dev/null | sed 's/^/    /'
	fi
}

# the last line of every run, "N passed, M failed"
summary() {
	echo "$npass passed, $nfail failed"
}

# need FILE...: every FILE is there and executable, else fail the set-up
# and end the run
need() {
	local f
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			fail setup "$f is missing (make all integration)"
			summary
			exit 1
		fi
	done
}

# wait_until TRIES PID CMD...: run CMD every 0.1 s, TRIES times at most,
# until it succeeds or process PID is gone; then CMD's status once more
wait_until() {
	local tries=$1 pid=$2 _
	shift 2
	for _ in $(seq "$tries"); do
		"$@" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	"$@"
}

stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=
}

# on exit: the daemon stopped, the worker user run.sh made (MADE_USER)
# removed, clients of ours that a failed step left behind killed; the run's
# folder removed, or kept with the log's tail printed if a step failed
cleanup() {
	local pids
	stop_daemon
	[ -n "${MADE_USER:-}" ] && userdel "$MADE_USER" >/dev/null 2>&1
	pids=$(jobs -p)
	# shellcheck disable=SC2086 # one word per pid
	[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	if [ "$nfail" -gt 0 ]; then
		echo "---- backend log (last 40 lines; all of it in $LOG)"
		tail -n 40 "$LOG" 2>/dev/null
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# fence_counts OUT: the guest library's count of how synchronizes ended,
# from a client's XGPU_DEBUG output: "G W L" (answered by the GPU, by the
# worker, asked again after the spin); nothing if the line is missing
fence_counts() {
	sed -n 's/.*synchronizes: \([0-9]*\) answered by the GPU, \([0-9]*\) by the worker, \([0-9]*\) asked again.*/\1 \2 \3/p' "$1"
}
