#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /init of the test DomUs (busybox sh; tests/xen/run.sh builds the image).
# The role (domu1 or domu2) comes from the kernel command line
# (xgpu_role=...).  Dom0 (dom0-init.sh) drives the steps: it writes the
# next command to our data/xgpu-cmd, we write results to data/xgpu-res/NAME
# ("PASS ..." or "FAIL: why").  Console output is for people: Dom0 streams
# it into the serial log with a [domuN] prefix.

export PATH=/usr/bin:/usr/sbin:/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run
mount -t tmpfs tmpfs /tmp

ROLE=domu
for w in $(cat /proc/cmdline); do
	case $w in
	xgpu_role=*) ROLE=${w#xgpu_role=} ;;
	esac
done
echo "DOMU-HELLO $ROLE"

MOD=xen-gpufront
DOMID=$(xenstore-read domid)
H=/local/domain/$DOMID/data
F=/local/domain/$DOMID/device/xgpu/0

say() {
	echo "$ROLE [$(cut -d' ' -f1 /proc/uptime)]: $*"
}
res() {
	xenstore-write "$H/xgpu-res/$1" "$2" || say "xenstore-write $1 failed"
	say "result $1: $2"
}
getcmd() {
	xenstore-read "$H/xgpu-cmd" 2>/dev/null
}
# wait_cmd WANT SECONDS: 0 when Dom0 asks for WANT; 1 on teardown/timeout
wait_cmd() {
	local c
	CMD_WANT=$1
	if wait_xs "$2" "$H/xgpu-cmd" cmd_is; then
		[ "$(getcmd)" = "$1" ] && return 0
		return 1
	fi
	say "no command '$1' from Dom0 within $2 s"
	return 1
}
cmd_is() {
	local c
	c=$(getcmd)
	[ "$c" = "$CMD_WANT" ] || [ "$c" = teardown ]
}
# wait_for SECONDS COMMAND...: poll COMMAND every 0.5 s
wait_for() {
	local end
	end=$(($(cut -d. -f1 /proc/uptime) + $1))
	shift
	while ! "$@"; do
		[ "$(cut -d. -f1 /proc/uptime)" -ge "$end" ] && return 1
		sleep 0.5
	done
	return 0
}
# wait_xs SECONDS XSPATH COMMAND...: the same, asleep in a xenstore watch
# on XSPATH between tries (processes are expensive under TCG: no polling)
wait_xs() {
	local end path
	end=$(($(cut -d. -f1 /proc/uptime) + $1))
	path=$2
	shift 2
	while ! "$@"; do
		[ "$(cut -d. -f1 /proc/uptime)" -ge "$end" ] && return 1
		timeout 2 xenstore-watch -n 2 "$path" >/dev/null 2>&1
	done
	return 0
}
front_connected() {
	[ "$(xenstore-read "$F/state" 2>/dev/null)" = 4 ]
}
# run a client of the guest library: run NAME OUT TIMEOUT [ARGS]
run() {
	local n=$1 out=$2 t=$3
	shift 3
	timeout "$t" "/usr/bin/$n" "$@" >"$out" 2>&1
}
# why a client failed: its first FAIL line, else its last line
why() {
	local l
	l=$(grep -m1 '^FAIL' "$1")
	[ -n "$l" ] || l=$(tail -n 1 "$1")
	echo "$l"
}
xgpu_dmesg() {
	dmesg | grep -iE 'gpufront|xgpu[^_]' | grep -v xgpu_role |
		tail -n "${1:-20}" | sed 's/^/  dmesg: /'
}

# "" or why the kernel log shows trouble since our last look (the count
# seen is kept in a file: oops runs in a subshell, o=$(oops))
oops() {
	local n seen
	n=$(dmesg | grep -cE 'Oops|BUG:|WARNING:|general protection|Call Trace|still pending|leaking')
	seen=$(cat /tmp/oops.seen 2>/dev/null)
	[ "$n" -gt "${seen:-0}" ] || return 1
	echo "$n" >/tmp/oops.seen
	# the whole report on the console, for people
	dmesg | grep -E -A 24 'Oops|BUG:|WARNING:|general protection' |
		tail -n 60 | sed 's/^/  kernel: /' >&2
	dmesg | grep -E 'Oops|BUG:|WARNING:|general protection|Call Trace|still pending|leaking' |
		tail -n 3 | tr '\n' ' '
}

teardown() {
	local d why=
	say "teardown"
	for d in /sys/bus/xen/devices/xgpu-*; do
		[ -e "$d/driver" ] || continue
		echo "${d##*/}" >"$d/driver/unbind" ||
			why="${why}unbind ${d##*/} failed; "
	done
	if grep -q "^${MOD//-/_} " /proc/modules; then
		rmmod "$MOD" || why="${why}rmmod $MOD failed; "
	fi
	xgpu_dmesg 40
	[ -z "$why" ] && res teardown PASS || res teardown "FAIL: $why"
	# Dom0 reads our results from our xenstore directory, which goes
	# away with us: wait until it says so (bounded)
	wait_cmd off 20
	sync
	poweroff -f
	sleep 30
}

# ---- save/restore (Dom0: dom0-steps-restore.sh) ---------------------------------
#
# Between the hostile steps and the next (spin / loop) Dom0 checkpoints
# domu2 (xl save -c), saves and restores it (xl save, xl restore), then
# domu1, and tries to migrate domu2 (xl migrate).  A restored domain has a
# new id: every wait reads it again (rehome) and results go to the new
# domain's directory.

# after a restore: our new domain id, and the paths that follow it
rehome() {
	local d
	d=$(xenstore-read domid 2>/dev/null)
	[ -n "$d" ] && [ "$d" != "$DOMID" ] || return 0
	say "restored: domain $DOMID is domain $d now"
	DOMID=$d
	H=/local/domain/$DOMID/data
	F=/local/domain/$DOMID/device/xgpu/0
}
# idle_start NAME: lostidle in the background (connected, then idle);
# trigger /tmp/NAME.go, output /tmp/NAME.out, exit status /tmp/NAME.rc
idle_start() {
	rm -f "/tmp/$1.go" "/tmp/$1.rc"
	(/usr/bin/lostidle "/tmp/$1.go" 900 >"/tmp/$1.out" 2>&1
	 echo $? >"/tmp/$1.rc") &
}
idle_up() {
	grep -q '^lostidle: connected' "/tmp/$1.out" 2>/dev/null
}
idle_ended() {
	[ -s "/tmp/$1.rc" ]
}
# idle_ready RES NAME...: they all connected (or why not), as result RES
idle_ready() {
	local r=$1 n why=
	shift
	for n in "$@"; do
		wait_for 60 idle_up "$n" || why="${why}$n: $(tail -n 1 "/tmp/$n.out"); "
		idle_ended "$n" && why="${why}$n ended: $(tail -n 1 "/tmp/$n.out"); "
	done
	[ -z "$why" ] && res "$r" "PASS $*" || res "$r" "FAIL: $why"
}
# idle_call NAME lost|alive RES: its next call now; its verdict as RES
idle_call() {
	local n=$1 r=$3 o
	echo "$2" >"/tmp/$n.tmp" && mv "/tmp/$n.tmp" "/tmp/$n.go"
	if ! wait_for 30 idle_ended "$n"; then
		res "$r" "FAIL: lostidle still runs 30 s after its call began: $(tail -n 1 "/tmp/$n.out")"
		return
	fi
	sed "s/^/  $n: /" "/tmp/$n.out"
	if [ "$(cat "/tmp/$n.rc")" != 0 ]; then
		res "$r" "FAIL: $(why "/tmp/$n.out")"
	elif o=$(oops); then
		res "$r" "FAIL: kernel log: $o"
	else
		res "$r" "PASS $(sed -n 's/^PASS lostidle: //p' "/tmp/$n.out")"
	fi
}
# restored_basic RES [quick]: the device connects again and basic passes
# (quick: a new lostidle allocates and copies, a few seconds instead of
# basic's twenty); how the module took the device back (its last kernel
# log line on it)
restored_basic() {
	local r=$1 rc how what
	if ! wait_xs 60 "$F/state" front_connected; then
		res "$r" "FAIL: device/xgpu/0 not Connected 60 s after the restore (state $(xenstore-read "$F/state" 2>/dev/null || echo none))"
		xgpu_dmesg
		return
	fi
	if ! wait_for 10 test -c /dev/xgpu; then
		res "$r" "FAIL: no /dev/xgpu after the restore"
		xgpu_dmesg
		return
	fi
	if [ "$2" = quick ]; then
		echo alive >/tmp/quick.go
		run lostidle /tmp/basic.out 60 /tmp/quick.go 10
	else
		run basic /tmp/basic.out 180
	fi
	rc=$?
	xgpu_dmesg 12
	how=$(dmesg | grep -E 'resumed: backend|probing it again' | tail -n 1)
	case $how in
	*"probing it again"*) how="the module probed the device again once its nodes came" ;;
	*resumed*) how="the xenbus core resumed the device" ;;
	*) how="the module never said it resumed" ;;
	esac
	if [ "$rc" != 0 ]; then
		sed 's/^/  basic: /' /tmp/basic.out
		res "$r" "FAIL: exit status $rc: $(why /tmp/basic.out) ($how)"
	elif o=$(oops); then
		res "$r" "FAIL: kernel log: $o"
	else
		if [ "$2" = quick ]; then
			what="a new program: $(sed -n 's/^PASS lostidle: //p' /tmp/basic.out)"
		else
			what="basic: $(grep -c '^PASS' /tmp/basic.out) checks"
		fi
		res "$r" "PASS $what; $how"
	fi
}
SR_DONE=
sr_new_cmd() {
	local c
	rehome
	c=$(getcmd)
	[ -n "$c" ] && [ "$c" != "$SR_DONE" ]
}
# like wait_xs, but the path watched follows a restore
sr_wait() {
	local end
	end=$(($(cut -d. -f1 /proc/uptime) + $1))
	while ! sr_new_cmd; do
		[ "$(cut -d. -f1 /proc/uptime)" -ge "$end" ] && return 1
		timeout 2 xenstore-watch -n 2 "$H/xgpu-cmd" >/dev/null 2>&1
	done
	return 0
}
# serve_restore NEXT LAST: Dom0's save/restore commands (LAST: the one
# served before them) until it sends NEXT, the next step's command
serve_restore() {
	local c
	SR_DONE=$2
	while :; do
		if ! sr_wait 600; then
			say "no command from Dom0 within 600 s"
			teardown
		fi
		c=$(getcmd)
		case $c in
		"$1") return 0 ;;
		teardown) teardown ;;
		ck-start)
			# the second one idles on across save-restore
			idle_start ck
			idle_start sr
			idle_ready ck-ready ck sr ;;
		ck-call) idle_call ck alive ck-call ;;
		sr-spin)
			# blocked in cuCtxSynchronize (XGPU_IOC_WAIT) across
			# the save: must end with an error after the restore
			rm -f /tmp/srspin.rc
			(/usr/bin/spin 100000 >/tmp/srspin.out 2>&1
			 echo $? >/tmp/srspin.rc) &
			if wait_for 60 grep -q '^spin: launched' /tmp/srspin.out &&
				! idle_ended srspin; then
				res sr-spin launched
			else
				res sr-spin "FAIL: spin did not launch: $(tail -n 1 /tmp/srspin.out)"
			fi ;;
		sr-call)
			idle_call sr lost sr-call
			if ! wait_for 10 idle_ended srspin; then
				res sr-spin-end "FAIL: spin, blocked in a wait across the save, still runs after the restore: $(tail -n 1 /tmp/srspin.out)"
			elif [ "$(cat /tmp/srspin.rc)" = 0 ]; then
				res sr-spin-end "FAIL: spin passed (its kernel runs 100 s)"
			else
				res sr-spin-end "PASS exit $(cat /tmp/srspin.rc): $(tail -n 1 /tmp/srspin.out)"
			fi
			restored_basic sr-basic ;;
		sr-neighbour)
			run basic /tmp/basic.out 180
			rc=$?
			if [ "$rc" = 0 ]; then
				res sr-neighbour "PASS $(grep -c '^PASS' /tmp/basic.out) checks"
			else
				sed 's/^/  basic: /' /tmp/basic.out
				res sr-neighbour "FAIL: exit status $rc: $(why /tmp/basic.out)"
			fi ;;
		ra-hello) res ra-hello "up $(cut -d' ' -f1 /proc/uptime) s" ;;
		ra-basic) restored_basic ra-basic quick ;;
		mg-start)
			idle_start mg
			idle_ready mg-ready mg ;;
		mg-call-alive) idle_call mg alive mg-call ;;
		mg-call-lost)
			idle_call mg lost mg-call
			restored_basic mg-basic ;;
		*) say "unknown command '$c'" ;;
		esac
		SR_DONE=$c
	done
}

# ---- the guest package (dpkg -i, as an administrator installs it) -----------

# --force-depends: the image's C library is files, unknown to its dpkg
# database; then ldconfig, as libc-bin's trigger does on Debian.  The test
# programs find the guest library through the linker's cache alone.
PKG=PASS
if ! dpkg -i --force-depends /opt/xgpu/debs/xgpu-guest_*.deb >/tmp/dpkg.log 2>&1; then
	PKG="FAIL: dpkg -i exit status $?: $(grep -m1 -E 'error' /tmp/dpkg.log)"
elif ! ldconfig || ! ldconfig -p | grep -q 'libcuda.so.1 .*/xgpu/libcuda.so.1$'; then
	PKG="FAIL: ldconfig does not list the guest library"
else
	PKG="PASS $(dpkg-query -W -f='${Package} ${Version} ${Status}' xgpu-guest)"
fi
[ "$PKG" = "${PKG#PASS}" ] && sed 's/^/    /' /tmp/dpkg.log

res hello "$DOMID"
res package "$PKG"

# ---- the module --------------------------------------------------------------

if [ ! -f "/$MOD.ko" ]; then
	res insmod "FAIL: no $MOD.ko in the image"
elif insmod "/$MOD.ko"; then
	res insmod PASS
else
	res insmod "FAIL: insmod exit status $?"
fi

# ---- platform check (dom0-init.sh explains) -------------------------------------

# net-chain: Dom0's backend reaches its driver over TLS; byte-for-byte
# copies (pageable, pinned, 2D), a module, and threads sharing a channel
chain_run() {
	local why=
	# (Dom0's STEPS=chain: the first program of this DomU)
	wait_xs 30 "$F/state" front_connected && wait_for 10 test -c /dev/xgpu ||
		why="device/xgpu/0 not Connected or no /dev/xgpu; "
	# netcopy's module and threads' kernels are the fake driver's: with
	# GPU programs (a real GPU at the end), netcopy's copies alone
	local gpu=
	ls /usr/lib/xgpu-test/gpu/* >/dev/null 2>&1 && gpu=nomodule
	run netcopy /tmp/chain-netcopy.out 200 small xen $gpu ||
		why="${why}netcopy: $(why /tmp/chain-netcopy.out); "
	if [ -z "$gpu" ]; then
		run threads /tmp/chain-threads.out 200 ||
			why="${why}threads: $(why /tmp/chain-threads.out); "
	fi
	# the programs of run.sh's GPU_PROGS: each one's exit status, the
	# digest of its output without TIME lines (the GPU harness's stable
	# lines), its seconds and its last line, for a comparison with its
	# native run
	local p n rc t0 t1 np=0 nok=0
	for p in /usr/lib/xgpu-test/gpu/*; do
		[ -x "$p" ] || continue
		n=${p##*/}
		np=$((np + 1))
		t0=$(cut -d' ' -f1 /proc/uptime)
		timeout 180 "$p" >"/tmp/gpu-$n.out" 2>&1
		rc=$?
		t1=$(cut -d' ' -f1 /proc/uptime)
		sed "s/^/  $n: /" "/tmp/gpu-$n.out"
		res "gpu-$n" "$rc $(grep -v '^TIME' "/tmp/gpu-$n.out" |
			md5sum | cut -d' ' -f1) $(awk -v a="$t0" -v b="$t1" \
			'BEGIN { printf "%.2f", b - a }') $(tail -n 1 "/tmp/gpu-$n.out")"
		if [ "$rc" = 0 ] && [ "$(tail -n 1 "/tmp/gpu-$n.out")" = "PASS $n" ]; then
			nok=$((nok + 1))
		else
			why="${why}$n: exit $rc: $(why "/tmp/gpu-$n.out"); "
		fi
	done
	if [ -z "$why" ]; then
		local more=
		[ -z "$gpu" ] && more=", threads"
		[ "$np" -gt 0 ] && more="$more, $nok GPU programs"
		res chain "PASS (netcopy $(grep -c '^PASS' /tmp/chain-netcopy.out) steps$more)"
	else
		res chain "FAIL: $why"
	fi
}

# grant-budget (Dom0's daemon under --grant-mb 24): a process with a
# 16 MiB data area (idle, holding its channel) fits, a second one beside
# it does not (its refusal names the budget), a 1 MiB one does; once the
# first has gone, a 16 MiB one fits again
gb_connected() {
	grep -q connected /tmp/gb-idle.out
}
grantbudget_run() {
	local why= sp n
	# the holder does no GPU work: the budget alone is judged
	XGPU_DATA_MB=16 timeout 600 /usr/bin/idle 500 >/tmp/gb-idle.out 2>&1 &
	sp=$!
	wait_for 120 gb_connected ||
		why="the first process never connected: $(tail -n 1 /tmp/gb-idle.out); "
	if [ -z "$why" ]; then
		XGPU_DATA_MB=16 run basic /tmp/gb-over.out 120 &&
			why="${why}a second 16 MiB data area was taken past the budget; "
		grep -q 'grant budget' /tmp/gb-over.out ||
			why="${why}the refusal does not name the budget: $(tail -n 1 /tmp/gb-over.out); "
		XGPU_DATA_MB=1 run basic /tmp/gb-small.out 180 ||
			why="${why}a 1 MiB data area beside it: $(why /tmp/gb-small.out); "
	fi
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	# the first one's pages count until Dom0 has reaped its worker
	for n in 1 2 3 4 5; do
		XGPU_DATA_MB=16 run basic /tmp/gb-again.out 180 && break
		sleep 2
	done
	[ "$n" = 5 ] && ! grep -q '^PASS' /tmp/gb-again.out &&
		why="${why}no 16 MiB data area after the first had gone: $(why /tmp/gb-again.out); "
	if [ -z "$why" ]; then
		res grantbudget "PASS ($(grep -m1 -o '[0-9]* more granted pages.*' /tmp/gb-over.out))"
	else
		sed 's/^/  gb: /' /tmp/gb-over.out /tmp/gb-again.out 2>/dev/null |
			tail -n 8
		res grantbudget "FAIL: $why"
	fi
}

# grant-cap (Dom0's daemon under --grant-mb 24, domu2 given grant-mb=8 at
# run time): a 16 MiB data area is refused naming the domain's cap, a
# 2 MiB one (with basic's 4 MiB of pinned memory) fits
grantcap_run() {
	local why=
	XGPU_DATA_MB=16 run basic /tmp/gc-over.out 120 &&
		why="a 16 MiB data area was taken past the domain's 8 MiB; "
	grep -q "domain's grant cap" /tmp/gc-over.out ||
		why="${why}the refusal does not name the domain's cap: $(tail -n 1 /tmp/gc-over.out); "
	XGPU_DATA_MB=2 run basic /tmp/gc-small.out 180 ||
		why="${why}a 2 MiB data area (and basic's 4 MiB of pinned memory) within the cap: $(why /tmp/gc-small.out); "
	if [ -z "$why" ]; then
		res grantcap "PASS ($(grep -m1 -o '[0-9]* more granted pages.*' /tmp/gc-over.out))"
	else
		res grantcap "FAIL: $why"
	fi
}

# same-domain: a second process of this domain starts while the first
# holds the GPU alone (a kernel of 150 s, the fake driver's): it must be
# served beside it, not wait for a turn its domain already has
sd_launched() {
	grep -q launched /tmp/sd-spin.out
}
samedom_run() {
	local why= sp t0 t1
	timeout 300 /usr/bin/spin 150000 >/tmp/sd-spin.out 2>&1 &
	sp=$!
	wait_for 120 sd_launched ||
		why="the first process never launched: $(tail -n 1 /tmp/sd-spin.out); "
	if [ -z "$why" ]; then
		t0=$(cut -d' ' -f1 /proc/uptime)
		run basic /tmp/sd-basic.out 90 ||
			why="basic beside its own domain's long kernel: $(why /tmp/sd-basic.out); "
		t1=$(cut -d' ' -f1 /proc/uptime)
	fi
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	if [ -z "$why" ]; then
		res samedom "PASS (basic in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s beside a 150 s kernel of its own domain)"
	else
		tail -n 3 /tmp/sd-basic.out | sed 's/^/  sd: /'
		res samedom "FAIL: $why"
	fi
}

# the commands that come after measure (and, with Dom0's STEPS=chain,
# first): serve DONE, DONE the command already done
serve() {
	DONE=$1
	while :; do
		if ! wait_xs 300 "$H/xgpu-cmd" cmd_new; then
			say "no command from Dom0 within 300 s"
			teardown
		fi
		DONE=$(getcmd)
		c=${DONE#rs-}
		case $DONE in
		rs-TERM | rs-KILL) rs_round "$c" ;;
		rs-*-again) rs_again "${c%-again}" ;;
		unbind-busy) unbind_busy ;;
		chain) chain_run ;;
		grantbudget) grantbudget_run ;;
		grantcap) grantcap_run ;;
		samedom) samedom_run ;;
		teardown) teardown ;;
		*) say "unknown command '$DONE'" ;;
		esac
	done
}
cmd_new() {
	local c
	c=$(getcmd)
	[ -n "$c" ] && [ "$c" != "$DONE" ]
}

first_cmd() {
	[ -n "$(getcmd)" ]
}
wait_xs 400 "$H/xgpu-cmd" first_cmd
# Dom0's STEPS=chain: net-chain is the first command
[ "$(getcmd)" = chain ] && serve ""
if [ "$(getcmd)" = stress ]; then
	n=$(xenstore-read "$H/xgpu-stress")
	memstress "$n" 1 >/tmp/mem.out 2>&1 &
	mp=$!
	end=$(($(cut -d. -f1 /proc/uptime) + n))
	i=0
	crashed=0
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		sed -n 1p /proc/version >/dev/null
		[ $? -ge 128 ] && crashed=$((crashed + 1))
		i=$((i + 1))
	done
	wait $mp
	mrc=$?
	segv=$(dmesg | grep -c segfault)
	m=$(tail -n 1 /tmp/mem.out | sed 's/^memstress: //')
	if [ "$mrc" = 0 ] && [ "$crashed" = 0 ] && [ "$segv" = 0 ]; then
		res stress "PASS $i processes, $m"
	else
		res stress "FAIL: memstress exit $mrc ($m), $crashed of $i processes crashed, $segv segfault lines"
	fi
fi

# ---- basic ------------------------------------------------------------------------

wait_cmd basic 400 || teardown
INSMOD=$(xenstore-read "$H/xgpu-res/insmod")
if [ "$INSMOD" != PASS ]; then
	res basic "FAIL: module not loaded ($INSMOD)"
elif ! wait_xs 30 "$F/state" front_connected; then
	res basic "FAIL: device/xgpu/0 not Connected after 30 s (state $(xenstore-read "$F/state" 2>/dev/null || echo none))"
	xgpu_dmesg
elif ! wait_for 10 test -c /dev/xgpu; then
	res basic "FAIL: no /dev/xgpu"
	xgpu_dmesg
else
	s=$(cut -d' ' -f1 /proc/uptime)
	run basic /tmp/basic.out 180
	rc=$?
	e=$(cut -d' ' -f1 /proc/uptime)
	sed 's/^/  basic: /' /tmp/basic.out
	# managed memory over the Xen transport: coherent mode
	mrc=1
	if [ "$rc" = 0 ]; then
		run managed /tmp/managed.out 150 quick
		mrc=$?
		sed 's/^/  managed: /' /tmp/managed.out
	fi
	if [ "$rc" = 0 ] && [ "$mrc" = 0 ] &&
		grep -q 'coherent mode' /tmp/managed.out; then
		res basic "PASS ($(grep -c '^PASS' /tmp/basic.out) checks, $s..$e s; managed coherent: $(sed -n 's/^managed: reading //p' /tmp/managed.out))"
	elif [ "$rc" = 0 ]; then
		res basic "FAIL: managed: exit status $mrc: $(why /tmp/managed.out)"
		xgpu_dmesg
	else
		res basic "FAIL: exit status $rc: $(why /tmp/basic.out)"
		xgpu_dmesg
	fi
fi

# ---- vcpu-coord: GPU turns beside a CPU hog (domu1 hogs, domu2 measures) ---------
#
# Dom0 pins both DomUs' VCPUs to one physical CPU and switches the VCPU
# coordinator between phases; domu2 runs `vcpubench run` once per phase
# (names in data/xgpu-vcpu-phases), domu1 spins on the CPU from vcpu-hog
# to vcpu-done.  When Dom0 skips the step its first command is the next
# step's (spin / loop).

cmd_vcpu_or() {
	case $(getcmd) in vcpu-*|"$CMD_WANT"|teardown) return 0 ;; esac
	return 1
}
if [ "$ROLE" = domu1 ]; then CMD_WANT=good; else CMD_WANT=hostile; fi
wait_xs 300 "$H/xgpu-cmd" cmd_vcpu_or
if [ "$ROLE" = domu1 ] && [ "$(getcmd)" = vcpu-hog ]; then
	/usr/bin/vcpubench hog 600 >/dev/null 2>&1 &
	HOG=$!
	res hog started
	wait_cmd vcpu-done 300
	kill "$HOG" 2>/dev/null
	wait "$HOG" 2>/dev/null
	res hogstop stopped
elif [ "$ROLE" = domu2 ] && [ "$(getcmd)" = vcpu-calib ]; then
	run vcpubench /tmp/vcalib.out 120 calib 20
	K=$(sed -n 's/^VCPUCALIB k=//p' /tmp/vcalib.out)
	[ -n "$K" ] && res vcalib "$K" || res vcalib "FAIL: $(tail -n 1 /tmp/vcalib.out)"
	VS=$(xenstore-read "$H/xgpu-vcpu-secs")
	for p in $(xenstore-read "$H/xgpu-vcpu-phases"); do
		[ -n "$K" ] || break
		wait_cmd "vcpu-$p" 300 || break
		run vcpubench /tmp/vrun.out $((VS + 120)) run "$K" 5 "$VS"
		rc=$?
		l=$(grep -m1 '^VCPUBENCH ' /tmp/vrun.out)
		if [ "$rc" = 0 ] && [ -n "$l" ]; then
			res "vrun-$p" "${l#VCPUBENCH }"
		else
			res "vrun-$p" "FAIL: exit status $rc: $(tail -n 1 /tmp/vrun.out)"
		fi
	done
fi

# ---- domu2: hostile guests, while domu1 runs basic (domu1 below) -----------------------
#
# Dom0 sends domu1 `good` (a loop of basic until `good-stop`) and domu2
# `hostile` (the cases below, then basic once more) at the same time.

hostile_steps() {
	# kernels back to back beside the hostile steps, up to the flood
	# (which needs every channel): Dom0 compares the two domains' shares
	/usr/bin/spinloop 50 3600 100000 >/tmp/spinloop2.out 2>&1 &
	SP2=$!
	SP2_T0=$(date +%s)
	sleep 3

	# ---- hostile-xenstore: made-up channels with bad parameters -------------------

	B=$(xenstore-read "$F/backend")
	# fake_ch N ORDER REF PAGES EVTCHN (EVTCHN "-": left out)
	fake_ch() {
		local c=$F/ch/$1
		xenstore-write "$c/ring-page-order" "$2" "$c/ring-ref0" "$3" \
			"$c/data-pages" "$4" "$c/data-dir-ref0" 999998 \
			"$c/name" hostile "$c/pid" 1 || return 1
		[ "$5" = - ] || xenstore-write "$c/event-channel" "$5" || return 1
		xenstore-write "$c/state" 3
	}
	refused() {
		[ "$(xenstore-read "$B/ch/$1/state" 2>/dev/null)" = 6 ] &&
			[ -n "$(xenstore-read "$B/ch/$1/error" 2>/dev/null)" ]
	}
	ok=
	bad=
	for spec in "1000 0 999999 1 9 bad-ring-ref" "1001 99 999999 1 9 ring-order-99" \
		"1002 0 999999 4000000000 9 data-pages-4e9" "1003 0 999999 1 - no-event-channel"; do
		set -- $spec
		fake_ch "$1" "$2" "$3" "$4" "$5" || bad="${bad}$6: xenstore-write failed; "
	done
	for spec in "1000 bad-ring-ref" "1001 ring-order-99" "1002 data-pages-4e9" \
		"1003 no-event-channel"; do
		set -- $spec
		if wait_xs 10 "$B/ch/$1" refused "$1"; then
			ok="${ok} $2 '$(xenstore-read "$B/ch/$1/error")'"
		else
			bad="${bad}$2: backend ch/$1 state '$(xenstore-read "$B/ch/$1/state" 2>/dev/null)' error '$(xenstore-read "$B/ch/$1/error" 2>/dev/null)' after 10 s; "
		fi
	done
	for n in 1000 1001 1002 1003; do
		xenstore-rm "$F/ch/$n" 2>/dev/null
	done
	[ -z "$bad" ] && res hxs "PASS (refused with:$ok)" || res hxs "FAIL: $bad"

	# hostile_mode NAME RES SECS [ARGS]: hostile-ring BACKEND_DIR ARGS
	# (SECS at most), its verdict as result RES
	hostile_mode() {
		local n=$1 r=$2 t=$3 rc
		shift 3
		timeout "$t" /usr/bin/hostile-ring "$B" "$@" >"/tmp/$r.out" 2>&1
		rc=$?
		sed "s/^/  $n: /" "/tmp/$r.out"
		if [ "$rc" = 0 ]; then
			res "$r" "PASS ($(sed -n 's/^hostile-ring: verdict: //p' "/tmp/$r.out"))"
		else
			res "$r" "FAIL: exit status $rc: $(tail -n 1 "/tmp/$r.out")"
			xgpu_dmesg
		fi
	}
	# hostile-ring: corrupt ring indices on a real channel
	hostile_mode hostile-ring hring 30
	# hostile-handles: forged handles and addresses on a real channel
	hostile_mode hostile-handles hhandle 60 handles
	# hostile-grants: grant directories a backend must refuse
	hostile_mode hostile-grants hgrant 60 grants
	# hostile-geometry, hostile-blobs, hostile-xsflood, hostile-flood
	hostile_mode hostile-geometry hgeom 90 geometry
	hostile_mode hostile-blobs hblob 90 blobs $(xenstore-read "$H/xgpu-images-mb" 2>/dev/null)
	# a window of 20 s at least for the shares (the steps are quick):
	# Dom0 ends it when spin2 comes, and says so in xgpu-ack once it
	# has its figures; the kernels stop after that
	while [ $(($(date +%s) - SP2_T0)) -lt 23 ]; do sleep 1; done
	if ! kill -0 "$SP2" 2>/dev/null; then
		say "domu2's kernels beside the hostile steps ended early: $(tail -n 2 /tmp/spinloop2.out)"
		res spin2 "ended early: $(tail -n 1 /tmp/spinloop2.out)"
	else
		res spin2 running
	fi
	spin2_seen() {
		[ "$(xenstore-read "$H/xgpu-ack" 2>/dev/null)" = spin2 ]
	}
	wait_xs 60 "$H/xgpu-ack" spin2_seen ||
		say "Dom0 did not say it had the shares' figures within 60 s"
	kill "$SP2" 2>/dev/null
	wait "$SP2" 2>/dev/null
	hostile_mode hostile-xsflood hxsflood 110 xsflood 2000
	# the daemon looks at this guest's xenstore nodes 100 times a second
	# at most (its own bucket): after those 2000 writes its next
	# channels wait their turn, some 20 s in all.  On a slower host
	# (2026-11-29: the whole run 870 s where 610 s had been usual) the
	# flood's first channel connected in the daemon 0.8 s after it was
	# asked for and the module's 10 s wait ran out before the
	# backend's state reached it: the flood's connects may wait 60 s
	local ct=/sys/module/xen_gpufront/parameters/connect_timeout_ms ct0=
	[ -w "$ct" ] && ct0=$(cat "$ct") && echo 60000 >"$ct"
	hostile_mode hostile-flood hflood 150 flood
	[ -n "$ct0" ] && echo "$ct0" >"$ct"

	run basic /tmp/basic.out 180
	rc=$?
	if [ "$rc" = 0 ]; then
		res after PASS
	else
		sed 's/^/  basic: /' /tmp/basic.out
		res after "FAIL: exit status $rc: $(why /tmp/basic.out)"
	fi
}

good_or() {
	case $(getcmd) in good|spin|teardown) return 0 ;; esac
	return 1
}
hostile_or() {
	case $(getcmd) in hostile|loop|teardown) return 0 ;; esac
	return 1
}
if [ "$ROLE" = domu1 ]; then
	wait_xs 300 "$H/xgpu-cmd" good_or
	if [ "$(getcmd)" = good ]; then
		i=0
		bad=
		n0=
		# GPU work back to back beside it: Dom0 measures its share
		# (never synchronising: under the emulated CPU the gap
		# before the next batch is a domain's idle time)
		/usr/bin/spinloop 50 3600 100000 >/tmp/spinloop.out 2>&1 &
		sp=$!
		while [ "$(getcmd)" = good ]; do
			i=$((i + 1))
			run basic /tmp/good.out 180
			rc=$?
			n=$(grep -c '^PASS' /tmp/good.out)
			if [ "$rc" != 0 ]; then
				[ -n "$bad" ] || bad="run $i: exit status $rc: $(why /tmp/good.out)"
				sed 's/^/  basic: /' /tmp/good.out
				xgpu_dmesg 10
			elif [ -n "$n0" ] && [ "$n" != "$n0" ]; then
				[ -n "$bad" ] || bad="run $i: $n checks passed, $n0 in the first"
			fi
			n0=${n0:-$n}
			xenstore-write "$H/xgpu-res/good-iter" "$i" ||
				say "xenstore-write good-iter failed"
			say "basic beside the hostile guest: run $i done${bad:+ (failed: $bad)}"
		done
		kill "$sp" 2>/dev/null
		wait "$sp" 2>/dev/null
		[ -z "$bad" ] && res good "PASS $i runs of basic, $n0 checks each" ||
			res good "FAIL: $bad"
	fi
else
	wait_xs 300 "$H/xgpu-cmd" hostile_or
	[ "$(getcmd)" = hostile ] && hostile_steps
fi

# ---- domu1: a long call, then Dom0 destroys us ------------------------------------

if [ "$ROLE" = domu1 ]; then
	serve_restore spin good-stop
	/usr/bin/spin 100000 >/tmp/spin.out 2>&1 &
	SPID=$!
	launched() {
		grep -q '^spin: launched' /tmp/spin.out && return 0
		kill -0 "$SPID" 2>/dev/null || return 0	# it ended: give up
		return 1
	}
	if wait_for 60 launched && grep -q '^spin: launched' /tmp/spin.out; then
		res spin launched
	else
		res spin "FAIL: $(tail -n 1 /tmp/spin.out)"
	fi
	wait_cmd never-sent 400
	teardown
fi

# ---- domu2: busy loop while domu1 is destroyed ----------------------------------------

serve_restore loop hostile
i=0
bad=
while [ "$(getcmd)" = loop ]; do
	i=$((i + 1))
	run threads /tmp/threads.out 120
	rc=$?
	if [ "$rc" != 0 ]; then
		[ -n "$bad" ] || bad="iteration $i: threads exit $rc: $(why /tmp/threads.out)"
		sed 's/^/  threads: /' /tmp/threads.out
	fi
	run basic /tmp/basic.out 120
	rc=$?
	if [ "$rc" != 0 ]; then
		[ -n "$bad" ] || bad="iteration $i: basic exit $rc: $(why /tmp/basic.out)"
		sed 's/^/  basic: /' /tmp/basic.out
	fi
	xenstore-write "$H/xgpu-res/loop-iter" "$i" ||
		say "xenstore-write loop-iter failed"
	say "loop iteration $i done${bad:+ (failed: $bad)}"
done
say "loop ended: command now '$(xenstore-read "$H/xgpu-cmd" 2>&1)'"
[ -z "$bad" ] && res loop "PASS $i iterations of threads+basic passed" ||
	res loop "FAIL: $bad"

# ---- measure --------------------------------------------------------------------

wait_cmd measure 300 || teardown
run xbench /tmp/xbench.out 300 $(xenstore-read "$H/xgpu-xbench-args" 2>/dev/null)
rc=$?
sed 's/^/  xbench: /' /tmp/xbench.out
l=$(grep -m1 '^XBENCH ' /tmp/xbench.out)
if [ "$rc" = 0 ] && [ -n "$l" ]; then
	res xbench "${l#XBENCH }"
else
	res xbench "FAIL: exit status $rc: $(tail -n 1 /tmp/xbench.out)"
fi

# ---- backend-restart: the daemon stops under a busy program, comes back --------
#
# Dom0 sends rs-TERM / rs-KILL (start a busy program; Dom0 then stops the
# daemon with that signal), rs-TERM-again / rs-KILL-again (the daemon is
# back: reconnect and pass `basic`), then unbind-busy, then teardown.

# a process found by its result file, not kill -0 (a zombie passes that)
bg_spin() {
	rm -f /tmp/bg.rc
	(/usr/bin/spin 100000 >/tmp/bg.out 2>&1
	 echo $? >/tmp/bg.rc) &
}
bg_launched() {
	grep -q '^spin: launched' /tmp/bg.out 2>/dev/null || [ -s /tmp/bg.rc ]
}
bg_ended() {
	[ -s /tmp/bg.rc ]
}
# start spin, say it launched, then (Dom0 stops the daemon) it must end
# with an error within 40 s
rs_round() {
	local sig=$1 s e rc
	bg_spin
	if ! wait_for 60 bg_launched || bg_ended; then
		res "rs-$sig-spin" "FAIL: spin did not launch: $(tail -n 1 /tmp/bg.out)"
		return
	fi
	res "rs-$sig-spin" launched
	s=$(cut -d. -f1 /proc/uptime)
	if ! wait_for 40 bg_ended; then
		res "rs-$sig-end" "FAIL: spin still runs 40 s after the daemon got SIG$sig: $(tail -n 1 /tmp/bg.out)"
		return
	fi
	e=$(cut -d. -f1 /proc/uptime)
	rc=$(cat /tmp/bg.rc)
	sed 's/^/  spin: /' /tmp/bg.out
	if [ "$rc" = 0 ]; then
		res "rs-$sig-end" "FAIL: spin passed (its kernel runs 100 s)"
	elif o=$(oops); then
		res "rs-$sig-end" "FAIL: kernel log: $o"
	else
		res "rs-$sig-end" "PASS spin ended in $((e - s)) s with exit $rc ($(tail -n 1 /tmp/bg.out))"
	fi
	xgpu_dmesg 6
}
# the daemon is back: the frontend reconnects by itself, basic passes
rs_again() {
	local sig=$1 rc
	if ! wait_xs 40 "$F/state" front_connected; then
		res "rs-$sig-basic" "FAIL: device/xgpu/0 not Connected 40 s after the restart (state $(xenstore-read "$F/state" 2>/dev/null || echo none))"
		xgpu_dmesg
		return
	fi
	if ! wait_for 10 test -c /dev/xgpu; then
		res "rs-$sig-basic" "FAIL: no /dev/xgpu after the restart"
		return
	fi
	run basic /tmp/basic.out 180
	rc=$?
	if [ "$rc" != 0 ]; then
		sed 's/^/  basic: /' /tmp/basic.out
		res "rs-$sig-basic" "FAIL: exit status $rc: $(why /tmp/basic.out)"
		xgpu_dmesg
	else
		res "rs-$sig-basic" "PASS ($(grep -c '^PASS' /tmp/basic.out) checks)"
	fi
}
memfree() {
	awk '/^MemFree:/ { print $2 }' /proc/meminfo
}
# unbind with a busy program and an idle open file; rmmod refused while
# the file is open; pages come back; rebind, basic passes
unbind_busy() {
	local dev=/sys/bus/xen/devices/xgpu-0 drv mem0 hpid rc s e why= ok=
	drv=$(readlink -f "$dev/driver")
	mem0=$(memfree)
	sleep 600 3</dev/xgpu &
	hpid=$!
	bg_spin
	if ! wait_for 60 bg_launched || bg_ended; then
		kill "$hpid" 2>/dev/null
		res unbind "FAIL: spin did not launch: $(tail -n 1 /tmp/bg.out)"
		return
	fi
	s=$(cut -d. -f1 /proc/uptime)
	echo xgpu-0 >"$drv/unbind" || why="${why}unbind failed; "
	if wait_for 30 bg_ended; then
		e=$(cut -d. -f1 /proc/uptime)
		rc=$(cat /tmp/bg.rc)
		[ "$rc" != 0 ] || why="${why}spin passed after the unbind; "
		ok="spin ended $((e - s)) s after the unbind (exit $rc: $(tail -n 1 /tmp/bg.out))"
	else
		why="${why}spin still runs 30 s after the unbind; "
	fi
	if rmmod "$MOD" 2>/tmp/rmmod.err; then
		why="${why}rmmod succeeded while /dev/xgpu was open; "
		insmod "/$MOD.ko"
	elif ! grep -q "^${MOD//-/_} " /proc/modules; then
		why="${why}rmmod failed but the module is gone; "
	else
		ok="$ok; rmmod refused ($(tr -d '\n' </tmp/rmmod.err | sed 's/.*: //'))"
	fi
	kill "$hpid"
	wait "$hpid" 2>/dev/null
	mem_back() {
		[ "$(memfree)" -ge $((mem0 - 6144)) ]
	}
	# granted pages come back once Dom0 unmapped them (deferred)
	if wait_for 20 mem_back; then
		ok="$ok; MemFree back ($(( ($(memfree) - mem0) / 1024 )) MiB)"
	else
		why="${why}MemFree $(( (mem0 - $(memfree)) / 1024 )) MiB below the start 20 s later (pages leaked?); "
	fi
	if o=$(oops); then
		why="${why}kernel log: $o; "
	fi
	if [ -e "$dev/driver" ]; then
		why="${why}the device is still bound; "
	elif ! echo xgpu-0 >"$drv/bind"; then
		why="${why}rebind failed; "
	fi
	xgpu_dmesg 12
	if [ -z "$why" ]; then
		rs_again unbind
		case $(xenstore-read "$H/xgpu-res/rs-unbind-basic") in
		PASS*) ;;
		*) why="after the rebind: $(xenstore-read "$H/xgpu-res/rs-unbind-basic"); " ;;
		esac
	fi
	[ -z "$why" ] && res unbind "PASS ($ok)" || res unbind "FAIL: $why"
}

serve measure
