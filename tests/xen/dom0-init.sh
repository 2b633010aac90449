#!/bin/dash
# SPDX-License-Identifier: MIT
#
# /init of the test Dom0 (tests/xen/run.sh builds the image).  Brings Xen's
# user space up, starts two PV DomUs, attaches an xgpu device to each the
# way a toolstack would, and drives the test steps.  Every step prints one
# "XGPU-STEP PASS name ..." or "XGPU-STEP FAIL name: why" line that the
# host checks; every wait is bounded; at the end it prints "XGPU-RESULT"
# and powers the machine off.
#
# Dom0 and the DomUs talk through xenstore (no console parsing): Dom0
# writes the next command to /local/domain/<id>/data/xgpu-cmd, a DomU
# writes its results under /local/domain/<id>/data/xgpu-res/ (libxl makes
# data/ writable by the domain).  The DomU side is domU-init.sh.
#
# Runs under dash: busybox ash as PID 1 once died of heap corruption under
# TCG (see the research notes); busybox is only used for its applets.

export PATH=/usr/lib/xen-4.17/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mkdir -p /run/lock /run/xen /run/xgpu /var/lib/xen /var/lib/xenstored \
	/var/log/xen/console /etc/xen/scripts /etc/default /tmp
ln -s /run /var/run
ln -s /run/lock /var/lock
: >/etc/xen/xl.conf
hostname dom0

. /etc/xgpu-test.conf
: "${DEADLINE:=380}"

echo "XGPU-TEST-BEGIN"

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

# ---- step dom0-xen: Xen's user space ---------------------------------------

say "kernel $(uname -r), $(grep MemTotal /proc/meminfo)"
why=
for m in xen-evtchn xen-privcmd xenfs xen-gntdev xen-gntalloc; do
	insmod "/lib/modules/xen/$m.ko" || why="${why}insmod $m failed; "
done
mount -t xenfs xenfs /proc/xen || why="${why}mount xenfs failed; "
# the daemon logs to syslog: keep it in memory and stream it to the console
syslogd -C256
wait_until 5 logread >/dev/null 2>&1 # (its buffer appears a moment later)
(logread -f 2>&1 | prefix "[syslog] ") &
xenstored --pid-file /run/xenstored.pid || why="${why}xenstored failed; "
wait_until 15 xenstore-ls / >/dev/null 2>&1 || why="${why}no xenstore; "
timeout 30 xen-init-dom0 >/tmp/init-dom0.log 2>&1 ||
	why="${why}xen-init-dom0 failed ($(tail -n 1 /tmp/init-dom0.log)); "
xenconsoled --log=guest --log-dir=/var/log/xen/console \
	--pid-file=/run/xenconsoled.pid || why="${why}xenconsoled failed; "
if timeout 30 xl info >/tmp/xlinfo 2>&1; then
	say "xl info: $(grep -E '^(total|free)_memory' /tmp/xlinfo | tr -s ' \n' ' ')"
else
	why="${why}xl info failed; "
fi
if [ -z "$why" ]; then
	pass dom0-xen
else
	fail dom0-xen "$why"
	show "" /tmp/xlinfo
	BLOCKED="dom0-xen failed"
fi

# ---- the hotplug path: script, uevent helper, daemon options ----------------

if [ -f /opt/xgpu/hotplug-xgpu ]; then
	# (busybox has no install applet)
	cp /opt/xgpu/hotplug-xgpu /etc/xen/scripts/xgpu &&
		chmod 0755 /etc/xen/scripts/xgpu
fi
echo "XGPUBACKD_OPTS=\"$XGPUBACKD_OPTS\"" >/etc/default/xen-gpubackd
# (debug/measurement: the daemon without libxenstore.so.4, polling)
[ -n "${XGPUB_XENSTORE:-}" ] &&
	echo "export XGPUB_XENSTORE=$XGPUB_XENSTORE" >>/etc/default/xen-gpubackd
: >/var/log/xgpu-hotplug.log
# Debian's kernel has no CONFIG_UEVENT_HELPER (/proc/sys/kernel/hotplug):
# busybox's uevent applet listens on the kernel's netlink socket instead
# and runs the helper for every event, with the event as its environment
uevent /opt/xgpu/uevent-helper &

# ---- step domu-boot: two PV DomUs -------------------------------------------

D1=
D2=
domu_cfg() {
	cat >"/etc/xen/$1.cfg" <<-EOF
		name = "$1"
		type = "pv"
		kernel = "/boot/vmlinux"
		ramdisk = "/boot/domu.cpio"
		extra = "console=hvc0 quiet xgpu_role=$1"
		memory = $DOMU_MEM
		vcpus = 1
		on_poweroff = "destroy"
		on_reboot = "destroy"
		on_crash = "destroy"
	EOF
}
if ! blocked domu-boot; then
	why=
	for n in domu1 domu2; do
		domu_cfg $n
		if timeout 60 xl create "/etc/xen/$n.cfg" >"/tmp/create-$n.log" 2>&1
		then
			# the console, live, into the serial log (xl console
			# quits on EOF of its stdin: give it one that stays)
			(sleep 100000 | xl console $n 2>&1 | prefix "[$n] ") &
		else
			why="${why}xl create $n failed: $(tail -n 1 /tmp/create-$n.log); "
		fi
	done
	D1=$(xl domid domu1 2>/dev/null)
	D2=$(xl domid domu2 2>/dev/null)
	say "domu1 is domain ${D1:-?}, domu2 is domain ${D2:-?}"
	[ -n "$D2" ] && xenstore-write "/local/domain/$D2/data/xgpu-xbench-args" \
		"$XBENCH_ARGS"
	if [ -z "$why" ]; then
		for d in $D1 $D2; do
			wait_res "$d" hello 90 || why="${why}domain $d never said hello; "
		done
	fi
	if [ -z "$why" ]; then
		pass "domu-boot (domu1=$D1 domu2=$D2)"
	else
		fail domu-boot "$why"
		BLOCKED="domu-boot failed"
	fi
fi

# ---- step platform: is the emulated machine sound? ------------------------------
#
# All three domains copy memory and start short-lived processes for
# PLATFORM_S seconds and check the results.  QEMU 7.2 TCG with XSAVE
# exposed to Xen corrupts vector registers across domain switches (bad
# memcpy results, busybox dying in malloc): run.sh hides XSAVE for that
# reason, and this step catches a platform that still misbehaves, so that
# xgpu is not blamed for it.  STRESS_ONLY=1 stops after this step.

if [ "${PLATFORM_S:-0}" -le 0 ]; then
	pass "platform (not checked: PLATFORM_S=0)"
elif ! blocked platform; then
	for d in $D1 $D2; do
		xenstore-write "/local/domain/$d/data/xgpu-stress" "$PLATFORM_S"
		cmd "$d" stress
	done
	memstress "$PLATFORM_S" 2 >/tmp/mem.out 2>&1 &
	mp=$!
	i=0
	crashed=0
	now
	end=$((NOW + PLATFORM_S))
	while [ "$NOW" -lt "$end" ]; do
		sed -n 1p /proc/version >/dev/null
		[ $? -ge 128 ] && crashed=$((crashed + 1))
		i=$((i + 1))
		now
	done
	wait $mp
	mrc=$?
	why=
	[ "$mrc" = 0 ] || why="${why}dom0: $(tail -n 1 /tmp/mem.out); "
	[ "$crashed" = 0 ] || why="${why}dom0: $crashed of $i processes crashed; "
	sums="dom0 $i processes, $(tail -n 1 /tmp/mem.out | sed 's/^memstress: //')"
	for d in $D1 $D2; do
		if ! wait_res "$d" stress $((PLATFORM_S + 30)); then
			why="${why}domain $d: no answer; "
			continue
		fi
		case $RES in
		PASS*) sums="$sums; dom$d ${RES#PASS }" ;;
		*) why="${why}domain $d: ${RES#FAIL: }; " ;;
		esac
	done
	n=$(dmesg | grep -c segfault)
	[ "$n" = 0 ] || why="${why}dom0 dmesg: $n segfault lines; "
	[ -z "$why" ] && pass "platform ($sums)" || fail platform "$why"
	if [ -n "${DEBUG_CMD:-}" ]; then
		say "DEBUG_CMD: $DEBUG_CMD"
		sh -c "$DEBUG_CMD" 2>&1 | prefix "debug: "
	fi
	if [ "${STRESS_ONLY:-0}" = 1 ]; then
		for d in $D1 $D2; do cmd "$d" teardown; done
		sleep 2
		echo "XGPU-RESULT: STRESS_ONLY"
		poweroff -f
	fi
fi

# ---- step hotplug: xgpu attach, hotplug script, daemon ------------------------

XPID=
# debug only (DEBUG_MANUAL_ATTACH=1): the nodes `xgpu attach` would write,
# and the daemon and hotplug-status the hotplug script would provide
manual_attach() {
	local d=$1 b f
	b=/local/domain/0/backend/xgpu/$d/0
	f=/local/domain/$d/device/xgpu/0
	xenstore-write "$b/frontend" "$f" "$b/frontend-id" "$d" "$b/state" 1 &&
	xenstore-chmod -r "/local/domain/0/backend/xgpu/$d" n0 "r$d" &&
	xenstore-write "$f/backend" "$b" "$f/backend-id" 0 &&
	xenstore-chmod -r "/local/domain/$d/device/xgpu" "n$d" r0 &&
	{ [ -n "$(find_daemon)" ] || xen-gpubackd --xen $XGPUBACKD_OPTS; } &&
	xenstore-write "$b/hotplug-status" connected &&
	xenstore-write "$f/state" 1
}
hotplug_ok() {
	[ "$(xsr "/local/domain/0/backend/xgpu/$1/0/hotplug-status")" = connected ]
}
back_waiting() {
	local s
	s=$(xsr "/local/domain/0/backend/xgpu/$1/0/state")
	[ -n "$s" ] && [ "$s" -ge 2 ]
}
if ! blocked hotplug; then
	why=
	if [ "$DEBUG_MANUAL_ATTACH" = 1 ]; then
		for d in $D1 $D2; do
			manual_attach "$d" || why="${why}manual attach of $d failed; "
		done
		why="${why}DEBUG_MANUAL_ATTACH=1: nodes written by the test, xgpu attach and the hotplug script not tested; "
	elif ! command -v xgpu >/dev/null; then
		why="no xgpu CLI in the image (build/bin/xgpu is missing); "
	elif [ ! -x /etc/xen/scripts/xgpu ]; then
		why="no hotplug script (tools/hotplug/xgpu is missing); "
	else
		for n in domu1 domu2; do
			timeout 30 xgpu attach $n >"/tmp/attach-$n.log" 2>&1 ||
				why="${why}xgpu attach $n: exit $? ($(tail -n 1 /tmp/attach-$n.log)); "
		done
		for d in $D1 $D2; do
			wait_xs 20 "/local/domain/0/backend/xgpu/$d/0" hotplug_ok "$d" ||
				why="${why}domain $d: no hotplug-status=connected after 20 s; "
		done
	fi
	# (nothing to wait for when the toolstack pieces are missing)
	case $why in
	no\ xgpu\ CLI*|no\ hotplug\ script*) XPID=$(find_daemon) ;;
	*)
		wait_until 10 daemon_found ||
			why="${why}no xen-gpubackd process; "
		for d in $D1 $D2; do
			wait_xs 15 "/local/domain/0/backend/xgpu/$d/0" back_waiting "$d" ||
				why="${why}backend of $d never left state '$(xsr "/local/domain/0/backend/xgpu/$d/0/state")'; "
		done
		# xenstore watches (libxenstore.so.4), not polling
		MODE=
		mode_known() {
			MODE=$(daemon_mode "$XPID")
			[ -n "$MODE" ]
		}
		[ -z "$XPID" ] || wait_until 5 mode_known
		[ -z "$XPID" ] || mode_ok "$MODE" ||
			why="${why}the daemon says '${MODE:-nothing}' about xenstore; "
		# before any program runs, `xgpu list` shows both attached
		# domains, idle (no channel)
		list_idle() {
			timeout 20 xgpu list >/tmp/list0.out 2>&1 &&
			awk -v a="$D1" -v b="$D2" '($1 == a || $1 == b) && $3 == 0 &&
				$7 == "idle" { n++ } END { exit n != 2 }' /tmp/list0.out
		}
		if [ -z "$why" ] && ! wait_until 20 list_idle; then
			why="${why}xgpu list before any program does not show both domains idle; "
		fi
		show "xgpu list: " /tmp/list0.out
		;;
	esac
	if [ -z "$why" ]; then
		pass "hotplug (daemon pid $XPID, ${MODE#xenstore }; xgpu list: both domains idle)"
	else
		fail hotplug "$why"
		show "hotplug.log: " /var/log/xgpu-hotplug.log
		logread 2>/dev/null | grep -E 'xen-gpubackd|xgpu-hotplug' |
			tail -n 15 | sed 's/^/    daemon log: /'
		for n in domu1 domu2; do show "attach-$n: " /tmp/attach-$n.log; done
	fi
fi

# ---- steps domu1-basic, domu2-basic -----------------------------------------

for n in domu1 domu2; do
	blocked $n-basic && continue
	[ $n = domu1 ] && d=$D1 || d=$D2
	cmd "$d" basic
done
if [ -z "$BLOCKED" ]; then
	for n in domu1 domu2; do
		[ $n = domu1 ] && d=$D1 || d=$D2
		if ! wait_res "$d" basic 200; then
			fail $n-basic "no result from the DomU within 200 s"
		else
			case $RES in
			PASS*) pass "$n-basic${RES#PASS}" ;;
			*) fail $n-basic "${RES#FAIL: }" ;;
			esac
		fi
	done
fi

# ---- step vcpu-coord: the VCPU coordinator, checked and measured -------------
#
# Both DomUs' VCPUs share physical CPU 1 (Dom0 keeps CPU 0): domu1 spins
# on it (a CPU hog with the default weight) while domu2 feeds the GPU in
# turns (20 ms of CPU work, a 5 ms kernel of the fake device, sync).  How
# many turns domu2 gets through depends on the CPU Xen gives it, which is
# what the coordinator changes.  Phases (VCPU_S seconds each):
#   alone    no hog: the reference
#   off      hog; `xgpu vcpu off`; domu2 GPU weight 1024 (VCPU weight 256)
#   weights  hog; on without boost; GPU weight 1024 -> VCPU weight 4 x base
#   boost    hog; on, boost 200% for 10 ms; GPU weight 256
#   both     hog; on, boost; GPU weight 1024
# It must hold: the coordinator is on (credit2, or credit with
# XEN_SCHED=credit, via libxenctrl), domu2's
# VCPU weight is 4 x base while it runs with GPU weight 1024 and base with
# the coordinator off or once its programs end, boosts happen in the boost
# phase, every run succeeds.  The turn rates are printed, not judged (TCG).

vw() {
	xl "sched-${XEN_SCHED:-credit2}" -d "$1" 2>/dev/null |
		awk 'NR == 2 { print $3 }'
}
vw_is() {
	[ "$(vw domu2)" = "$1" ]
}
# the coordinator's line for domain $1 in `xgpu vcpu` (while it runs)
vdom() {
	xgpu vcpu 2>/dev/null | awk -v d="$1" '$1 == d'
}
# vphase NAME GPU-WEIGHT VCPU-ARGS...: run domu2's phase NAME; sets
# VRES (its result), VW (domu2's VCPU weight halfway), VB (boosts so far)
vphase() {
	local n=$1 w=$2
	shift 2
	xgpu sched-credit -d domu2 -w "$w" >/dev/null 2>&1 ||
		why="${why}sched-credit -w $w failed; "
	xgpu vcpu "$@" >/tmp/vcpu-set.out 2>&1 ||
		why="${why}xgpu vcpu $*: $(tail -n 1 /tmp/vcpu-set.out); "
	cmd "$D2" "vcpu-$n"
	sleep $((VCPU_S / 2 + 1))
	VW=$(vw domu2)
	VB=$(vdom "$D2" | awk '{ print $8 }')
	vdom "$D2" >"/tmp/vcpu-$n.dom"
	VRES=
	wait_res "$D2" "vrun-$n" $((VCPU_S + 90)) && VRES=$RES
	case $VRES in
	turns=*) ;;
	*) why="${why}phase $n: ${VRES:-no result}; " ;;
	esac
	echo "XGPU-VCPU $n gpu_weight=$w vcpu_weight=${VW:-?} boosts=${VB:-0} $VRES"
}
if [ "${VCPU_S:-0}" -le 0 ]; then
	pass "vcpu-coord (not run: VCPU_S=0)"
elif ! blocked vcpu-coord; then
	why=
	xgpu vcpu >/tmp/vcpu.out 2>&1
	show "xgpu vcpu: " /tmp/vcpu.out
	grep -q "VCPU coordination: on (xen ${XEN_SCHED:-credit2} " /tmp/vcpu.out ||
		why="${why}coordinator not on with ${XEN_SCHED:-credit2}: $(head -n 1 /tmp/vcpu.out); "
	base=$(vw domu2)
	xl vcpu-pin Domain-0 all 0 >/dev/null 2>&1
	xl vcpu-pin domu1 all 1 >/dev/null 2>&1 &&
		xl vcpu-pin domu2 all 1 >/dev/null 2>&1 ||
		why="${why}xl vcpu-pin failed; "
	xenstore-write "/local/domain/$D2/data/xgpu-vcpu-secs" "$VCPU_S" \
		"/local/domain/$D2/data/xgpu-vcpu-phases" "alone off weights boost both"
	cmd "$D2" vcpu-calib
	if wait_res "$D2" vcalib 150 && [ "${RES#FAIL}" = "$RES" ]; then
		say "vcpubench: $RES loops for 20 ms of CPU work"
		vphase alone 256 on -b 200:10
		cmd "$D1" vcpu-hog
		wait_res "$D1" hog 60 || why="${why}domu1 did not start its hog; "
		vphase off 1024 off
		[ "$VW" = "$base" ] ||
			why="${why}off: domu2 VCPU weight $VW, not its own $base; "
		vphase weights 1024 on -b 100
		[ "$VW" = $((base * 4)) ] ||
			why="${why}weights: domu2 VCPU weight $VW, not 4 x $base; "
		vphase boost 256 on -b 200:10
		[ "${VB:-0}" -gt 0 ] 2>/dev/null ||
			why="${why}boost: no boost counted ($(cat /tmp/vcpu-boost.dom)); "
		vphase both 1024 on -b 200:10
		cmd "$D1" vcpu-done
		wait_res "$D1" hogstop 30 || why="${why}domu1's hog did not stop; "
	else
		why="${why}calibration: ${RES:-no result}; "
		cmd "$D1" vcpu-done
	fi
	# back to the defaults; domu2's programs ended: its own weight again
	xgpu sched-credit -d domu2 -w 256 >/dev/null 2>&1
	xgpu vcpu on >/dev/null 2>&1
	wait_until 5 vw_is "$base" ||
		why="${why}domu2's VCPU weight $(vw domu2) after the runs, not $base; "
	for d in Domain-0 domu1 domu2; do
		xl vcpu-pin "$d" all all >/dev/null 2>&1
	done
	[ -z "$why" ] && pass vcpu-coord || fail vcpu-coord "$why"
fi

# ---- step list: both guests busy, `xgpu list` shows both ----------------------

SPIN=
if [ -z "$BLOCKED" ]; then
	cmd "$D1" spin
	cmd "$D2" loop
	wait_res "$D1" spin 60 && SPIN=$RES
fi
# both guests have a channel open now (domu1's spin, domu2's loop: it
# may still be starting its first client, hence the retries)
list_both() {
	timeout 20 xgpu list >/tmp/list.out 2>&1 || return 1
	list_shows /tmp/list.out "$D1" domu1 && list_shows /tmp/list.out "$D2" domu2
}
if ! blocked list; then
	if ! command -v xgpu >/dev/null; then
		fail list "no xgpu CLI in the image"
	elif wait_until 15 list_both; then
		show "xgpu list: " /tmp/list.out
		pass list
	elif ! { timeout 20 xgpu list >/tmp/list.out 2>&1; rc=$?; [ $rc = 0 ]; }
	then
		fail list "xgpu list: exit status $rc"
		show "" /tmp/list.out
	else
		show "xgpu list: " /tmp/list.out
		why=
		list_shows /tmp/list.out "$D1" domu1 || why="${why}domain $D1 missing; "
		list_shows /tmp/list.out "$D2" domu2 || why="${why}domain $D2 missing; "
		fail list "$why(for 15 s)"
	fi
fi

# ---- step destroy-busy: domu1 destroyed in the middle of a call ------------------

if ! blocked destroy-busy; then
	why=
	if [ "$SPIN" != launched ]; then
		why="domu1's spin never launched (${SPIN:-no answer})"
	fi
	if [ -z "$why" ]; then
		sleep 0.5	# let the launch reach the worker
		W_BEFORE=$(workers "$XPID")
		IT0=$(res "$D2" loop-iter)
		# domu1's own workers, as the daemon logged them
		W1=$(logread | sed -n "s/.*: dom$D1 ch[0-9]*: worker pid \([0-9]*\).*/\1/p" |
			while read -r p; do [ -d /proc/$p ] && echo "$p"; done | tr '\n' ' ')
		say "destroying domu1 (domain $D1); workers now: $W_BEFORE(domu1's: ${W1:-none found}); domu2 at iteration ${IT0:-?}"
		now
		t0=$NOW
		if ! { timeout 30 xl destroy domu1 >/tmp/destroy.log 2>&1; rc=$?; [ $rc = 0 ]; }
		then
			why="${why}xl destroy: exit $rc ($(tail -n 1 /tmp/destroy.log)); "
		fi
		# a domain whose grants Dom0 still maps stays as a "(null)"
		# zombie until the worker lets go
		if ! wait_xs 15 @releaseDomain dom_gone "$D1"; then
			why="${why}domain $D1 still listed 15 s after xl destroy: $(xl list | awk -v d="$D1" '$2 == d'); "
		else
			now
			GONE_S=$((NOW - t0))
			say "domain $D1 gone from xl list after $GONE_S s"
		fi
		w1_gone() {
			local p
			for p in $W1; do
				[ -d "/proc/$p" ] &&
					! grep -q '^State:.*Z' /proc/$p/status 2>/dev/null &&
					return 1
			done
			return 0
		}
		[ -n "$W1" ] || why="${why}no worker of domu1 in the daemon's log; "
		wait_until 10 w1_gone ||
			why="${why}domu1's worker(s) $W1still run 10 s after xl destroy; "
		# domu2 must go on passing: the iteration that was waiting
		# behind domu1's long kernel must finish (and pass, below)
		want=$((${IT0:-0} + 1))
		it_reached() {
			local i
			i=$(res "$D2" loop-iter)
			[ "${i:-0}" -ge "$want" ]
		}
		wait_xs 150 "/local/domain/$D2/data/xgpu-res/loop-iter" it_reached ||
			why="${why}domu2 stuck at iteration $(res "$D2" loop-iter) (wanted $want); "
		daemon_alive || why="${why}the daemon (pid $XPID) died; "
		left=
		no_old_worker() {
			local p
			left=
			for p in $W_BEFORE; do
				[ -d "/proc/$p" ] &&
					! grep -q '^State:.*Z' /proc/$p/status 2>/dev/null &&
					left="$left $p"
			done
			[ -z "$left" ]
		}
		wait_until 10 no_old_worker ||
			why="${why}workers$left still run 10 s after domu1 was destroyed; "
		if command -v xgpu >/dev/null; then
			timeout 20 xgpu list >/tmp/list2.out 2>&1
			show "xgpu list: " /tmp/list2.out
			list_shows /tmp/list2.out "$D1" domu1 &&
				why="${why}xgpu list still shows domain $D1; "
		fi
		cmd "$D2" hostile
		if ! wait_res "$D2" loop 150; then
			why="${why}domu2's loop never reported; "
		else
			case $RES in
			PASS*) ;;
			*) why="${why}domu2's runs: $RES; " ;;
			esac
		fi
	else
		cmd "$D2" hostile
	fi
	if [ -z "$why" ]; then
		pass "destroy-busy (domu1 gone from xl list after ${GONE_S:-?} s, its worker(s) gone; domu2 went on: ${RES#PASS })"
	else
		fail destroy-busy "$why"
	fi
fi

# ---- steps hostile-xenstore, hostile-ring (run by domu2) ------------------------

for s in hostile-xenstore:hxs hostile-ring:hring; do
	name=${s%%:*}
	blocked "$name" && continue
	if ! wait_res "$D2" "${s#*:}" 120; then
		fail "$name" "no result from domu2 within 120 s"
		continue
	fi
	r=$RES
	if [ "$name" = hostile-ring ]; then
		if ! wait_res "$D2" after 150; then
			r="FAIL: ${r#FAIL: }; basic after the hostile guests: no result"
		else
			case $RES in
			PASS*) ;;
			*) r="FAIL: ${r#FAIL: }; basic after the hostile guests: ${RES#FAIL: }" ;;
			esac
		fi
	fi
	daemon_alive || r="FAIL: the daemon (pid ${XPID:-?}) is gone; ${r#FAIL: }"
	case $r in
	PASS*) pass "$name${r#PASS}" ;;
	*) fail "$name" "${r#FAIL: }" ;;
	esac
done

# ---- step measure: xbench in domu2 (Xen transport) and in Dom0 (local) ----------

if ! blocked measure; then
	why=
	cmd "$D2" measure
	if ! wait_res "$D2" xbench 240; then
		why="no xbench result from domu2; "
	else
		case $RES in
		FAIL*) why="domu2: $RES; " ;;
		*) echo "XBENCH-RESULT xen $RES" ;;
		esac
	fi
	opts="--local /run/xgpu/local.sock --driver $FAKECUDA --foreground"
	xen-gpubackd --help 2>&1 | grep -q -- --control &&
		opts="$opts --control /run/xgpu/local-control.sock"
	xen-gpubackd $opts 2>/tmp/local-daemon.log &
	LPID=$!
	if ! wait_until 20 test -S /run/xgpu/local.sock; then
		why="${why}the local daemon did not start ($(tail -n 1 /tmp/local-daemon.log)); "
	elif ! { XGPU_SOCKET=/run/xgpu/local.sock LD_LIBRARY_PATH=/usr/lib/xgpu \
		timeout 240 xbench $XBENCH_ARGS >/tmp/xbench.out 2>&1; rc=$?; [ $rc = 0 ]; }
	then
		why="${why}dom0 xbench: exit status $rc ($(tail -n 1 /tmp/xbench.out)); "
	else
		l=$(grep -m1 '^XBENCH ' /tmp/xbench.out)
		if [ -n "$l" ]; then
			echo "XBENCH-RESULT local ${l#XBENCH }"
		else
			why="${why}dom0 xbench printed no XBENCH line; "
		fi
	fi
	show "xbench dom0: " /tmp/xbench.out
	kill "$LPID" 2>/dev/null
	LPID=
	[ -z "$why" ] && pass measure || fail measure "$why"
fi

# ---- step backend-restart: the daemon stops under a busy guest and comes back --
#
# Twice (SIGTERM, then SIGKILL): domu2 starts `spin` (a 100 s kernel, its
# process blocked in cuCtxSynchronize), Dom0 stops the daemon; spin must
# end with an error (not hang) and the DomU kernel must stay clean; the
# old workers must end; the hotplug script starts the daemon again (as a
# new device's uevent would); domu2's frontend reconnects by itself and
# `basic` passes.  Before the SIGKILL, `xgpu list` must show domu2's
# channel on the restarted daemon.

CPU_LINE=
if ! blocked backend-restart; then
	why=
	ok=
	for sig in TERM KILL; do
		[ -z "$why" ] || break
		cmd "$D2" "rs-$sig"
		if ! wait_res "$D2" "rs-$sig-spin" 90 || [ "$RES" != launched ]; then
			why="${why}SIG$sig: domu2's spin: ${RES:-no answer}; "
			break
		fi
		if [ $sig = KILL ]; then
			# the restarted daemon serves domu2's new channel
			timeout 20 xgpu list >/tmp/list3.out 2>&1
			show "xgpu list: " /tmp/list3.out
			awk -v d="$D2" '$1 == d && $3 >= 1 { f = 1 } END { exit !f }' \
				/tmp/list3.out ||
				why="${why}xgpu list shows no channel of domain $D2 on the restarted daemon; "
		fi
		sleep 0.5	# let the launch reach the worker
		PIDS=$(workers "$XPID")
		[ $sig = TERM ] &&
			CPU_LINE="$(cpu_s "$XPID") s CPU in $(age_s "$XPID") s"
		say "stopping the daemon (pid $XPID, workers $PIDS) with SIG$sig"
		kill -$sig "$XPID"
		wait_until 10 pid_gone "$XPID" ||
			why="${why}SIG$sig: the daemon still runs 10 s later; "
		if ! wait_res "$D2" "rs-$sig-end" 60; then
			why="${why}SIG$sig: no word from domu2 about its spin; "
		else
			case $RES in
			PASS*) ok="$ok SIG$sig: ${RES#PASS };" ;;
			*) why="${why}SIG$sig: ${RES#FAIL: }; " ;;
			esac
		fi
		wait_until 10 pids_gone ||
			why="${why}SIG$sig: the old workers ($PIDS) still run 10 s after the daemon; "
		hotplug_add "$D2" || why="${why}SIG$sig: the hotplug script failed: $(tail -n 1 /var/log/xgpu-hotplug.log); "
		XPID=
		if ! wait_until 10 daemon_found; then
			why="${why}SIG$sig: no daemon after the hotplug script; "
			break
		fi
		m=$(daemon_mode "$XPID")
		mode_ok "$m" || why="${why}SIG$sig: the restarted daemon says '$m'; "
		cmd "$D2" "rs-$sig-again"
		if ! wait_res "$D2" "rs-$sig-basic" 200; then
			why="${why}SIG$sig: no basic result after the restart; "
		else
			case $RES in
			PASS*) ;;
			*) why="${why}SIG$sig: after the restart: ${RES#FAIL: }; " ;;
			esac
		fi
	done
	daemon_alive || why="${why}the restarted daemon (pid ${XPID:-?}) is gone; "
	if [ -z "$why" ]; then
		pass "backend-restart (first daemon: $CPU_LINE;$ok both times domu2 reconnected and basic passed)"
	else
		fail backend-restart "$why"
		logread 2>/dev/null | grep -E 'xen-gpubackd|xgpu-hotplug' |
			tail -n 20 | sed 's/^/    daemon log: /'
	fi
fi

# ---- step unbind-busy: unbind and rmmod under an open /dev/xgpu ------------------
#
# domu2 holds /dev/xgpu open twice (a busy spin, an idle file), unbinds
# the device: spin must end with an error; rmmod must be refused while
# the idle file is open; once it closes, the granted pages must come back
# (MemFree), the kernel log must stay clean; then rebind, reconnect and
# `basic` pass.  Dom0: the daemon lives and keeps no worker.

if ! blocked unbind-busy; then
	why=
	cmd "$D2" unbind-busy
	if ! wait_res "$D2" unbind 240; then
		why="no result from domu2; "
	else
		case $RES in
		PASS*) ;;
		*) why="${RES#FAIL: }; " ;;
		esac
	fi
	r=$RES
	daemon_alive || why="${why}the daemon (pid ${XPID:-?}) is gone; "
	w_none() { [ -z "$(workers "$XPID" | tr -d ' ')" ]; }
	wait_until 10 w_none ||
		why="${why}workers $(workers "$XPID") still run after domu2's programs ended; "
	[ -z "$why" ] && pass "unbind-busy ${r#PASS }" || fail unbind-busy "$why"
fi

# ---- step teardown: domu2 unbinds, unloads and powers off; nothing left ---------

if ! blocked teardown; then
	why=
	cmd "$D2" teardown
	if ! wait_res "$D2" teardown 60; then
		why="no teardown result from domu2; "
	else
		case $RES in
		PASS*) ;;
		*) why="domu2: $RES; " ;;
		esac
	fi
	# (it waits for this before powering off: its results go with it)
	cmd "$D2" off
	wait_xs 30 @releaseDomain dom_gone "$D2" ||
		why="${why}domain $D2 still listed 30 s after its teardown; "
	if [ -n "$XPID" ]; then
		daemon_alive || why="${why}the daemon (pid $XPID) is gone; "
		w_left() { [ -z "$(workers "$XPID" | tr -d ' ')" ]; }
		wait_until 10 w_left ||
			why="${why}workers $(workers "$XPID") still run with no guest left; "
	fi
	[ -z "$why" ] && pass teardown || fail teardown "$why"
fi

# ---- the end ------------------------------------------------------------------

if [ "$NFAIL" -gt 0 ]; then
	say "---- diagnostics"
	show "hotplug.log: " /var/log/xgpu-hotplug.log
	xenstore-ls -f /local/domain/0/backend/xgpu >/tmp/xs-back 2>&1
	show "xenstore: " /tmp/xs-back
	procs >/tmp/procs
	show "proc: " /tmp/procs
	for f in /var/log/xen/console/guest-*.log; do
		[ -f "$f" ] && tail -n 30 "$f" | prefix "[${f##*/}] "
	done
fi
for n in domu1 domu2; do
	dom_listed "$(xl domid $n 2>/dev/null)" && timeout 20 xl destroy $n
done
echo "XGPU-RESULT: $([ "$NFAIL" = 0 ] && echo PASS || echo FAIL) ($NFAIL failed)"
sync
poweroff -f
