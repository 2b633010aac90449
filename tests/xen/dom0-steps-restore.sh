# SPDX-License-Identifier: MIT
# shellcheck shell=dash
#
# dom0-steps-restore.sh: the steps of the test Dom0's /init that save,
# restore, checkpoint and migrate the DomUs (domU-init.sh answers them in
# serve_restore), one function each, run by dom0-init.sh in this order
# after hostile-neighbour (both DomUs idle) and before list:
#
#   step_save_checkpoint  save-checkpoint: xl save -c domu2; its idle
#                         programs go on
#   step_save_restore     save-restore: xl save domu2, xl restore; its
#                         idle program's next call fails at once, its
#                         device comes back by the rule of xgpu.conf,
#                         basic passes; domu1's basic beside it passes
#   step_restore_attach   restore-attach: xl save domu1, xl restore, and
#                         only then `xgpu attach domu1`: the module takes
#                         the late device; a new program works
#   step_migrate_local    migrate-local: xl migrate domu2 to this host
#                         (SKIP where this Xen cannot migrate a PV guest)
#
# A restored domain has a new id: D1 and D2 are read again by name, and
# the DomU follows its own (domU-init.sh's rehome).  Its GPU state does
# not survive: it lived in the workers of the old domain, which the daemon
# stops once that domain is gone ("domain gone", as for destroy-busy).
#
# The image goes to a tmpfs of its own (SAVE_DIR), as big as a DomU: Dom0
# gets DOM0_MEM for it (run.sh).

SAVE_DIR=/var/lib/xgpu-save

# the console of a (re)created domain, live, into the serial log
console_of() {
	(sleep 100000 | xl console "$1" 2>&1 | prefix "[$1] ") &
}
save_dir() {
	grep -q " $SAVE_DIR tmpfs " /proc/mounts && return 0
	mkdir -p "$SAVE_DIR" &&
		mount -t tmpfs -o "size=$((DOMU_MEM + DOMU_MEM / 8 + 16))m" \
			tmpfs "$SAVE_DIR"
}
# the daemon's workers of domain $1 still running (pids from its log)
dom_workers() {
	logread | sed -n "s/.*: dom$1 ch[0-9]*: worker pid \([0-9]*\).*/\1/p" |
		while read -r p; do
			[ -d "/proc/$p" ] &&
				! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null &&
				echo "$p"
		done | tr '\n' ' '
}
no_workers_of() {
	[ -z "$(dom_workers "$1" | tr -d ' ')" ]
}
# seconds since t0 (uptime), one decimal
since() {
	awk -v t0="$1" '{ printf "%.1f", $1 - t0 }' /proc/uptime
}
up_s() {
	cut -d' ' -f1 /proc/uptime
}
# the DomU's test data that domu-boot wrote: again for a new domain id
domu2_data() {
	xenstore-write "/local/domain/$D2/data/xgpu-xbench-args" "$XBENCH_ARGS" \
		"/local/domain/$D2/data/xgpu-images-mb" "$(images_mb)"
}
# res_ok NAME DOMID SECONDS: the DomU's result NAME is a PASS (RES holds it)
res_ok() {
	wait_res "$2" "$1" "$3" || { RES="FAIL: no result within $3 s"; return 1; }
	case $RES in PASS*) return 0 ;; esac
	return 1
}
# step_end NAME TEXT: the end of a step: the daemon must still run; PASS
# "NAME (TEXT)" if nothing went wrong (why empty), else FAIL NAME: why and 1
step_end() {
	daemon_alive || why="${why}the daemon (pid $XPID) is gone; "
	if [ -z "$why" ]; then
		pass "$1 ($2)"
		return 0
	fi
	fail "$1" "$why"
	return 1
}

# ---- step save-checkpoint: xl save -c, the domain goes on --------------------
#
# domu2 starts two idle programs (lostidle: connected, 1 MiB on the
# device); `xl save -c` suspends it, writes its image and lets it go on in
# the same domain (the guest sees a cancelled suspend).  Nothing may be
# lost: the first program's next call brings its data back intact.  (The
# second idles on into save-restore.)

SR_IDLE=
step_save_checkpoint() {
	blocked save-checkpoint && return
	why=
	save_dir || why="cannot mount a tmpfs on $SAVE_DIR; "
	cmd "$D2" ck-start
	if res_ok ck-ready "$D2" 90; then
		SR_IDLE=1
	else
		why="${why}domu2's idle programs: ${RES#FAIL: }; "
	fi
	if [ -z "$why" ]; then
		t0=$(up_s)
		if ! timeout 180 xl save -c domu2 "$SAVE_DIR/ck.img" \
			>/tmp/ck-save.log 2>&1; then
			why="${why}xl save -c: $(grep -v progress /tmp/ck-save.log | tail -n 1); "
		fi
		CK_S=$(since "$t0")
		rm -f "$SAVE_DIR/ck.img"
		[ "$(xl domid domu2 2>/dev/null)" = "$D2" ] ||
			why="${why}domu2 is no longer domain $D2 after xl save -c; "
		cmd "$D2" ck-call
		res_ok ck-call "$D2" 60 ||
			why="${why}the idle program after the checkpoint: ${RES#FAIL: }; "
		CK_RES=${RES#PASS }
	fi
	step_end save-checkpoint "xl save -c in $CK_S s; domu2's idle program went on: $CK_RES"
}

# ---- step save-restore: xl save, xl restore ---------------------------------
#
# domu1 runs basic meanwhile.  domu2's second idle program holds a channel
# across `xl save domu2` + `xl restore`, and `spin` waits in
# cuCtxSynchronize (XGPU_IOC_WAIT) for its 100 s kernel: the old domain
# must leave xl list and its workers end (the daemon's "domain gone"), the
# restored domain (a new id, read again by name) gets its device again by
# the rule of xgpu.conf, the idle program's next call fails with
# CUDA_ERROR_DEVICE_UNAVAILABLE within 10 s (lostidle), spin ends with an
# error, the kernel log stays clean, basic passes in the restored domain,
# and `xgpu list` shows the new domain, not the old one.

step_save_restore() {
	local old img=$SAVE_DIR/domu2.img
	blocked save-restore && return
	why=
	old=$D2
	[ -n "$SR_IDLE" ] || why="domu2's idle program did not start (save-checkpoint); "
	save_dir || why="${why}cannot mount a tmpfs on $SAVE_DIR; "
	cmd "$D2" sr-spin
	wait_res "$D2" sr-spin 90 && [ "$RES" = launched ] ||
		why="${why}domu2's spin: ${RES:-no answer}; "
	sleep 0.5	# let the launch reach the worker
	W2=$(dom_workers "$old")
	cmd "$D1" sr-neighbour
	say "saving domu2 (domain $old, workers: ${W2:-none})"
	t0=$(up_s)
	if ! timeout 180 xl save domu2 "$img" >/tmp/sr-save.log 2>&1; then
		why="${why}xl save: $(grep -v progress /tmp/sr-save.log | tail -n 1); "
	fi
	SAVE_S=$(since "$t0")
	say "saved in $SAVE_S s: $(ls -l "$img" 2>&1)"
	# the old domain goes for good once the daemon lets go of its pages
	wait_xs 15 @releaseDomain dom_gone "$old" ||
		why="${why}domain $old still listed 15 s after xl save: $(xl list | awk -v d="$old" '$2 == d'); "
	wait_until 10 no_workers_of "$old" ||
		why="${why}domain $old's workers $(dom_workers "$old")still run after it went; "
	t0=$(up_s)
	if ! timeout 180 xl restore "$img" >/tmp/sr-restore.log 2>&1; then
		why="${why}xl restore: $(grep -v progress /tmp/sr-restore.log | tail -n 1); "
	fi
	RESTORE_S=$(since "$t0")
	rm -f "$img"
	D2=$(xl domid domu2 2>/dev/null)
	if [ -z "$D2" ]; then
		why="${why}no domu2 after xl restore; "
		fail save-restore "$why"
		show "xl restore: " /tmp/sr-restore.log
		BLOCKED="save-restore lost domu2"
		return
	fi
	say "restored in $RESTORE_S s: domu2 is domain $D2 now (was $old)"
	console_of domu2
	domu2_data
	[ "$D2" != "$old" ] || say "(the restored domain has the old id)"
	cmd "$D2" sr-call
	res_ok sr-call "$D2" 90 ||
		why="${why}the idle program after the restore: ${RES#FAIL: }; "
	SR_RES=${RES#PASS }
	res_ok sr-spin-end "$D2" 30 ||
		why="${why}the program blocked in a wait across the save: ${RES#FAIL: }; "
	SR_SPIN=${RES#PASS }
	res_ok sr-basic "$D2" 240 ||
		why="${why}basic in the restored domu2: ${RES#FAIL: }; "
	SR_BASIC=${RES#PASS }
	logread | grep -q "dom$D2 (domu2): xgpu device 0 attached" ||
		why="${why}the daemon did not give the restored domain $D2 its device by its rule; "
	res_ok sr-neighbour "$D1" 240 ||
		why="${why}domu1's basic beside it: ${RES#FAIL: }; "
	if timeout 20 xgpu list >/tmp/sr-list.out 2>&1; then
		list_shows /tmp/sr-list.out "$D2" domu2 ||
			why="${why}xgpu list does not show domain $D2; "
		awk -v d="$old" '$1 == d { f = 1 } END { exit !f }' /tmp/sr-list.out &&
			[ "$old" != "$D2" ] &&
			why="${why}xgpu list still shows the old domain $old; "
		show "xgpu list: " /tmp/sr-list.out
	else
		why="${why}xgpu list failed: $(tail -n 1 /tmp/sr-list.out); "
	fi
	step_end save-restore "xl save $SAVE_S s, xl restore $RESTORE_S s; domu2 domain $old -> $D2, its old worker(s) gone; the idle program: $SR_RES; spin, blocked in a wait across it: $SR_SPIN; restored domu2: $SR_BASIC; domu1's basic beside it passed" ||
		logread 2>/dev/null | grep -E 'xen-gpubackd' | tail -n 15 |
			sed 's/^/    daemon log: /'
}

# ---- step restore-attach: the device comes after the restore ----------------
#
# domu1's device was given by `xgpu attach` (no rule): after `xl save
# domu1` + `xl restore` the restored domain has none, so the guest resumes
# without its device nodes (the kernel's xenbus core gives up on the
# device).  Only once the guest answers from its new domain does Dom0 run
# `xgpu attach domu1`: the module must take the device again by itself
# (its watch on the frontend state; the kernel log says "probing it
# again"), and a new program allocate and copy (lostidle; basic's twenty
# seconds under TCG were spent in save-restore already).

step_restore_attach() {
	local old img=$SAVE_DIR/domu1.img
	blocked restore-attach && return
	why=
	old=$D1
	save_dir || why="cannot mount a tmpfs on $SAVE_DIR; "
	t0=$(up_s)
	timeout 180 xl save domu1 "$img" >/tmp/ra-save.log 2>&1 ||
		why="${why}xl save: $(grep -v progress /tmp/ra-save.log | tail -n 1); "
	wait_xs 15 @releaseDomain dom_gone "$old" ||
		why="${why}domain $old still listed 15 s after xl save; "
	timeout 180 xl restore "$img" >/tmp/ra-restore.log 2>&1 ||
		why="${why}xl restore: $(grep -v progress /tmp/ra-restore.log | tail -n 1); "
	RA_S=$(since "$t0")
	rm -f "$img"
	D1=$(xl domid domu1 2>/dev/null)
	if [ -z "$D1" ]; then
		fail restore-attach "${why}no domu1 after xl restore"
		show "xl restore: " /tmp/ra-restore.log
		BLOCKED="restore-attach lost domu1"
		return
	fi
	say "domu1 is domain $D1 now (was $old), saved and restored in $RA_S s"
	console_of domu1
	cmd "$D1" ra-hello
	wait_res "$D1" ra-hello 60 || why="${why}no word from the restored domu1; "
	[ -z "$(xsr "/local/domain/0/backend/xgpu/$D1/0/frontend")" ] ||
		why="${why}domain $D1 already has a device before xgpu attach (no rule should give it one); "
	timeout 30 xgpu attach domu1 >/tmp/ra-attach.log 2>&1 ||
		why="${why}xgpu attach domu1: $(tail -n 1 /tmp/ra-attach.log); "
	cmd "$D1" ra-basic
	res_ok ra-basic "$D1" 240 ||
		why="${why}a new program in the restored domu1: ${RES#FAIL: }; "
	RA_RES=${RES#PASS }
	step_end restore-attach "domu1 domain $old -> $D1 in $RA_S s; xgpu attach after the guest resumed; $RA_RES"
}

# ---- step migrate-local: xl migrate to this host ----------------------------
#
# `xl migrate -s "" domu2 "xl migrate-receive"` runs the receiving xl here
# (an empty ssh command makes the host argument the command itself).
# xl migrates live only, which needs log-dirty mode, and for a PV guest
# that is shadow paging: Debian's Xen is built without it ("Compiled-in
# support:" in xl dmesg has no SHADOW_PAGING), libxc then fails with
# "Failed to enable logdirty" before the guest is suspended, and HVM or
# PVH guests (HAP log-dirty) do not run under TCG.  There the step says
# SKIP with that reason, after checking that the refused migration left
# domu2 and an idle program of it alone.  Where the migration works, the
# program's next call must fail at once and basic pass in the migrated
# domain.

step_migrate_local() {
	local old rc xen_sp
	blocked migrate-local && return
	why=
	old=$D2
	cmd "$D2" mg-start
	res_ok mg-ready "$D2" 90 || why="domu2's idle program: ${RES#FAIL: }; "
	t0=$(up_s)
	timeout 300 xl migrate -s "" domu2 "xl migrate-receive" \
		>/tmp/migrate.log 2>&1
	rc=$?
	MG_S=$(since "$t0")
	show "xl migrate: " /tmp/migrate.log
	# does this Xen have shadow paging?  (xl info's virt_caps says
	# "shadow" where it has; its boot line "Compiled-in support:" says
	# SHADOW_PAGING, while still in xl dmesg)
	xen_sp=$(xl info 2>/dev/null | sed -n 's/^virt_caps *: *//p')
	if [ -n "$xen_sp" ]; then
		echo " $xen_sp " | grep -q ' shadow ' && xen_sp= ||
			xen_sp="xl info virt_caps: $xen_sp"
	else
		xen_sp=$(xl dmesg 2>/dev/null | grep -m1 'Compiled-in support:' |
			sed 's/.*Compiled-in support: */compiled-in support: /')
		echo "$xen_sp" | grep -q SHADOW_PAGING && xen_sp=
	fi
	if [ "$rc" != 0 ] && grep -q 'Failed to enable logdirty' /tmp/migrate.log &&
		[ -n "$xen_sp" ]; then
		# refused before the guest was touched: all must be as it was
		[ "$(xl domid domu2 2>/dev/null)" = "$old" ] ||
			why="${why}domu2 is no longer domain $old after the refused migration; "
		cmd "$D2" mg-call-alive
		res_ok mg-call "$D2" 60 ||
			why="${why}the idle program after the refused migration: ${RES#FAIL: }; "
		if [ -z "$why" ]; then
			skip migrate-local "xl migrate cannot work here: this Xen has no shadow paging ($xen_sp), which live migration of a PV guest needs for log-dirty mode (libxc: $(grep -m1 'Failed to enable logdirty' /tmp/migrate.log | sed 's/.*xc: error: //')); the refused migration left domu2 and its idle program alone (${RES#PASS })"
		else
			fail migrate-local "$why"
		fi
		return
	fi
	if [ "$rc" != 0 ]; then
		fail migrate-local "${why}xl migrate: exit status $rc: $(grep -v progress /tmp/migrate.log | tail -n 1)"
		D2=$(xl domid domu2 2>/dev/null)
		[ -n "$D2" ] || BLOCKED="migrate-local lost domu2"
		return
	fi
	D2=$(xl domid domu2 2>/dev/null)
	if [ -z "$D2" ]; then
		fail migrate-local "${why}no domu2 after xl migrate"
		BLOCKED="migrate-local lost domu2"
		return
	fi
	console_of domu2
	domu2_data
	wait_xs 15 @releaseDomain dom_gone "$old" ||
		why="${why}the old domain $old still listed 15 s after the migration; "
	wait_until 10 no_workers_of "$old" ||
		why="${why}domain $old's workers $(dom_workers "$old")still run; "
	cmd "$D2" mg-call-lost
	res_ok mg-call "$D2" 90 ||
		why="${why}the idle program after the migration: ${RES#FAIL: }; "
	MG_RES=${RES#PASS }
	res_ok mg-basic "$D2" 240 ||
		why="${why}basic in the migrated domu2: ${RES#FAIL: }; "
	step_end migrate-local "xl migrate in $MG_S s; domu2 domain $old -> $D2; the idle program: $MG_RES; basic: ${RES#PASS }"
}
