# SPDX-License-Identifier: MIT
# shellcheck shell=dash
#
# dom0-lib.sh: the helpers of the test Dom0's /init (dom0-init.sh sources
# it first; the step files use them): step results (pass, fail, skip,
# blocked), bounded waits (wait_until polls, wait_xs sleeps in a xenstore
# watch), output (say, prefix, show), the DomU protocol over xenstore
# (cmd, res, wait_res), processes from /proc (procs, find_daemon,
# workers, cpu_s, age_s) and the daemon's state (daemon_alive,
# daemon_mode, mode_ok).
#
# The run's state starts here, as /init sources this file: NFAIL (steps
# failed), BLOCKED (why the steps left cannot run, once one that they need
# failed); DEADLINE (uptime seconds no wait goes past) is the test's
# configuration (/etc/xgpu-test.conf).

CR=$(printf '\r')
NFAIL=0
BLOCKED=

now() {
	read -r NOW _ </proc/uptime
	NOW=${NOW%.*}
}
say() {
	local u
	read -r u _ </proc/uptime
	echo "dom0 [$u]: $*"
}
pass() {
	echo "XGPU-STEP PASS $*"
}
fail() {
	local n=$1
	shift
	echo "XGPU-STEP FAIL $n: $*"
	NFAIL=$((NFAIL + 1))
}
# a step that cannot run on this machine, with the exact reason (counted
# neither as passed nor as failed)
skip() {
	local n=$1
	shift
	echo "XGPU-STEP SKIP $n: $*"
}
# a step that cannot run because an earlier one failed
blocked() {
	[ -n "$BLOCKED" ] || return 1
	fail "$1" "not run: $BLOCKED"
	return 0
}
# wait_until SECONDS COMMAND...: run COMMAND every 0.5 s until it succeeds
# (0) or SECONDS pass (1); never past the global deadline
wait_until() {
	local end
	now
	end=$((NOW + $1))
	[ "$end" -gt "$DEADLINE" ] && end=$DEADLINE
	shift
	while :; do
		"$@" && return 0
		now
		[ "$NOW" -ge "$end" ] && return 1
		sleep 0.5
	done
}
# wait_xs SECONDS XSPATH COMMAND...: like wait_until, but sleeps in a
# xenstore watch on XSPATH (any change under it wakes it) instead of
# polling: under TCG every process costs tens of milliseconds, and polling
# loops in three domains starve the programs under test.  The 2 s timeout
# covers a change between the check and the watch's registration.
wait_xs() {
	local end path
	now
	end=$((NOW + $1))
	[ "$end" -gt "$DEADLINE" ] && end=$DEADLINE
	path=$2
	shift 2
	while :; do
		"$@" && return 0
		now
		[ "$NOW" -ge "$end" ] && return 1
		timeout 2 xenstore-watch -n 2 "$path" >/dev/null 2>&1
	done
}
# prefix every line (the DomU consoles, the log stream)
prefix() {
	local l
	while IFS= read -r l; do
		echo "$1${l%"$CR"}"
	done
}
show() {
	sed "s/^/    $1/" "$2" 2>/dev/null
}

xsr() {
	xenstore-read "$1" 2>/dev/null
}
# DomU protocol: a command for it, and its results
cmd() {
	xenstore-write "/local/domain/$1/data/xgpu-cmd" "$2"
}
res() {
	xsr "/local/domain/$1/data/xgpu-res/$2"
}
has_res() {
	[ -n "$(res "$1" "$2")" ]
}
# wait_res DOMID NAME SECONDS: RES=the result, or "" after SECONDS
wait_res() {
	RES=
	wait_xs "$3" "/local/domain/$1/data/xgpu-res/$2" has_res "$1" "$2"
	RES=$(res "$1" "$2")
	[ -n "$RES" ] && return 0
	now
	say "no data/xgpu-res/$2 from domain $1 within $3 s (uptime $NOW): $(xenstore-read "/local/domain/$1/data/xgpu-res/$2" 2>&1)"
	return 1
}

# every process as "pid ppid comm" (from /proc: no ps flavour needed)
procs() {
	local d st c rest
	for d in /proc/[0-9]*; do
		read -r st 2>/dev/null <"$d/stat" || continue
		c=${st#*\(}
		c=${c%\)*}
		rest=${st##*\) }
		set -- $rest
		echo "${st%% *} $2 $c"
	done
}
# the xgpu daemon started by the hotplug script: a top-level xen-gpubackd
find_daemon() {
	local all
	all=$(procs)
	echo "$all" | while read -r p pp c; do
		[ "$c" = xen-gpubackd ] || continue
		[ "$p" = "${LPID:-x}" ] && continue
		pc=$(echo "$all" | awk -v p="$pp" '$1 == p { print $3 }')
		[ "$pc" = xen-gpubackd ] && continue
		echo "$p"
	done | head -n 1
}
# the daemon's children: its per-channel workers
workers() {
	procs | awk -v p="$1" '$2 == p { print $1 }' | tr '\n' ' '
}
daemon_alive() {
	[ -n "$XPID" ] && [ -d "/proc/$XPID" ] &&
		! grep -q '^State:.*Z' "/proc/$XPID/status" 2>/dev/null
}
dom_listed() {
	xl list 2>/dev/null | awk -v d="$1" '$2 == d { f = 1 } END { exit !f }'
}
dom_gone() {
	! dom_listed "$1"
}
# does `xgpu list` (output in file $1) show domain $2 (name $3)?  Its
# first columns are the domain id and name.
list_shows() {
	awk -v d="$2" -v n="$3" '$1 == d || $2 == n { f = 1 } END { exit !f }' "$1"
}

# domu2's rule of xgpu.conf (hotplug_path): its device comes from it, and
# it gives domu2 caps of its own below the daemon's (--images-mb 64,
# --max-channels 16), which hostile-blobs and hostile-flood then meet;
# 256: the default weight the later steps expect
DOMU2_IMAGES_MB=48
DOMU2_RULE="domu2 weight=256 channels=12 images-mb=$DOMU2_IMAGES_MB"

# domu2's image cap: its rule's, or (no rule: DEBUG_MANUAL_ATTACH) the
# one the daemon was given (--images-mb), or nothing
images_mb() {
	if [ "$DEBUG_MANUAL_ATTACH" != 1 ]; then
		echo "$DOMU2_IMAGES_MB"
		return
	fi
	echo " $XGPUBACKD_OPTS " | sed -n 's/.* --images-mb[ =]\([0-9][0-9]*\) .*/\1/p'
}

# what the uevent helper runs for a new device
hotplug_add() {
	XENBUS_PATH=backend/xgpu/$1/0 /etc/xen/scripts/xgpu add \
		>>/var/log/xgpu-hotplug.log 2>&1
}
# CPU seconds a process used, and its age in seconds (USER_HZ is 100)
cpu_s() {
	awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat" 2>/dev/null
}
age_s() {
	awk -v up="$(cut -d' ' -f1 /proc/uptime)" \
		'{ printf "%.0f", up - $22 / 100 }' "/proc/$1/stat" 2>/dev/null
}
# the daemon's xenstore mode, from its syslog line
daemon_mode() {
	logread | grep "xen-gpubackd\[$1\]: --xen: xenstore" | tail -n 1 |
		sed 's/.*--xen: //'
}
# the mode we want: watches, unless the run forces the static library
mode_ok() {
	case $1 in
	"xenstore watches via libxenstore.so.4")
		[ "${XGPUB_XENSTORE:-}" != static ] ;;
	"xenstore watches unavailable"*)
		[ "${XGPUB_XENSTORE:-}" = static ] ;;
	*) return 1 ;;
	esac
}
pid_gone() {
	[ ! -d "/proc/$1" ]
}
pids_gone() {
	local p
	for p in $PIDS; do
		[ -d "/proc/$p" ] &&
			! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null &&
			return 1
	done
	return 0
}
daemon_found() {
	XPID=$(find_daemon)
	[ -n "$XPID" ]
}
