# SPDX-License-Identifier: MIT
# shellcheck shell=dash
#
# dom0-steps-bringup.sh: the steps of the test Dom0's /init that bring the
# machine up, one function each, run by dom0-init.sh in this order:
#
#   step_dom0_xen     dom0-xen: Xen's user space (modules, xenstored,
#                     xenconsoled, syslog streamed to the console)
#   step_packages     packages: xgpu-backend and xgpu-guest installed
#                     with dpkg -i, as an administrator does
#   hotplug_path      (no step) the uevent helper and the daemon's options
#                     in place
#   step_domu_boot    domu-boot: two PV DomUs, each says hello
#   step_platform     platform: is the emulated machine sound?
#   step_hotplug      hotplug: xgpu attach (domu1), a rule of xgpu.conf
#                     (domu2), the hotplug script, the daemon
#   step_basic        domu1-basic, domu2-basic
#
# Sets what the later steps (dom0-steps-guests.sh) use: D1 and D2 (the
# DomUs' domain ids), XPID (the daemon), BLOCKED when the rest cannot run.

# ---- step dom0-xen: Xen's user space ----------------------------------------

step_dom0_xen() {
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
}

# ---- step packages: dpkg -i ---------------------------------------------------

# The daemon, the CLI, the hotplug script, the udev rule, the settings
# file and the guest library (the local transport's clients) come from
# the packages.  --force-depends: the image's Xen tools and C library are
# files taken from Debian's packages, unknown to this image's dpkg
# database; what dpkg says beyond dependencies fails the step.
step_packages() {
	local p st f vers=
	blocked packages && return
	why=
	dpkg -i --force-depends /opt/xgpu/debs/xgpu-backend_*.deb \
		/opt/xgpu/debs/xgpu-guest_*.deb >/tmp/dpkg.log 2>&1 ||
		why="dpkg -i: exit status $?; "
	grep -E '^dpkg: error|returned error exit status' /tmp/dpkg.log >/tmp/dpkg.err &&
		why="${why}$(head -n 2 /tmp/dpkg.err | tr '\n' ' '); "
	for p in xgpu-backend xgpu-guest; do
		st=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>&1)
		case $st in
		"install ok installed "*) vers="$vers $p ${st##* }" ;;
		*) why="${why}$p: $st; " ;;
		esac
	done
	# what libc-bin's ldconfig trigger does on a Debian system
	ldconfig
	ldconfig -p | grep -q 'libcuda.so.1 .*/xgpu/libcuda.so.1$' ||
		why="${why}ldconfig does not list the guest library; "
	for f in /usr/sbin/xen-gpubackd /usr/sbin/xgpu /etc/xen/scripts/xgpu \
		/lib/udev/rules.d/65-xgpu.rules /etc/default/xen-gpubackd \
		/etc/xen/xgpu.conf; do
		[ -e "$f" ] || why="${why}no $f; "
	done
	if [ -z "$why" ]; then
		pass "packages (dpkg -i:$vers)"
	else
		fail packages "$why"
		show "" /tmp/dpkg.log
		BLOCKED="packages failed"
	fi
}

# ---- the hotplug path: uevent helper, daemon options ----------------------

hotplug_path() {
	echo "XGPUBACKD_OPTS=\"$XGPUBACKD_OPTS\"" >/etc/default/xen-gpubackd
	# domu2's device comes from a rule of xgpu.conf (the daemon gives it
	# when it starts), domu1's from `xgpu attach` (DOMU2_RULE, dom0-lib.sh)
	[ "$DEBUG_MANUAL_ATTACH" = 1 ] ||
		echo "$DOMU2_RULE   # xgpu.conf(5)" >/etc/xen/xgpu.conf
	# (debug/measurement: the daemon without libxenstore.so.4, polling)
	[ -n "${XGPUB_XENSTORE:-}" ] &&
		echo "export XGPUB_XENSTORE=$XGPUB_XENSTORE" >>/etc/default/xen-gpubackd
	: >/var/log/xgpu-hotplug.log
	# Debian's kernel has no CONFIG_UEVENT_HELPER (/proc/sys/kernel/hotplug):
	# busybox's uevent applet listens on the kernel's netlink socket instead
	# and runs the helper for every event, with the event as its environment
	uevent /opt/xgpu/uevent-helper &
}

# ---- step domu-boot: two PV DomUs -------------------------------------------

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
step_domu_boot() {
	D1=
	D2=
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
			"$XBENCH_ARGS" \
			"/local/domain/$D2/data/xgpu-images-mb" "$(images_mb)"
		if [ -z "$why" ]; then
			for d in $D1 $D2; do
				wait_res "$d" hello 90 || why="${why}domain $d never said hello; "
			done
		fi
		# each DomU installs the guest package before its hello
		if [ -z "$why" ]; then
			for d in $D1 $D2; do
				wait_res "$d" package 10 || RES="no result"
				case $RES in
				PASS*) ;;
				*) why="${why}domain $d: guest package: $RES; " ;;
				esac
			done
		fi
		if [ -z "$why" ]; then
			pass "domu-boot (domu1=$D1 domu2=$D2)"
		else
			fail domu-boot "$why"
			BLOCKED="domu-boot failed"
		fi
	fi
}

# ---- step platform: is the emulated machine sound? --------------------------
#
# All three domains copy memory and start short-lived processes for
# PLATFORM_S seconds and check the results.  QEMU 7.2 TCG with XSAVE
# exposed to Xen corrupts vector registers across domain switches (bad
# memcpy results, busybox dying in malloc): run.sh hides XSAVE for that
# reason, and this step catches a platform that still misbehaves, so that
# xgpu is not blamed for it.  STRESS_ONLY=1 stops after this step.

step_platform() {
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
}

# ---- step hotplug: xgpu attach, xgpu.conf, hotplug script, daemon ----------

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
step_hotplug() {
	XPID=
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
			# domu1 by hand, with a cap of the device's own in
			# xenstore (channels=14, under the daemon's 16); its
			# hotplug script starts the daemon, which gives domu2
			# its device by the rule of /etc/xen/xgpu.conf
			# (hotplug_path)
			timeout 30 xgpu attach domu1 channels=14 >/tmp/attach-domu1.log 2>&1 ||
				why="${why}xgpu attach domu1: exit $? ($(tail -n 1 /tmp/attach-domu1.log)); "
			for d in $D1 $D2; do
				wait_xs 20 "/local/domain/0/backend/xgpu/$d/0" hotplug_ok "$d" ||
					why="${why}domain $d: no hotplug-status=connected after 20 s; "
			done
			auto_said() {
				logread 2>/dev/null | grep -q "dom$D2 (domu2): xgpu device 0 attached (/etc/xen/xgpu.conf line 1: domu2)"
			}
			wait_until 5 auto_said ||
				why="${why}the daemon does not say it attached domu2 by its rule; "
			timeout 20 xgpu config show >/tmp/config.out 2>&1 &&
				grep -qE '^ +1 +domu2 +yes +256 +- +- +- +- +- +48 +12 +- +- *$' /tmp/config.out ||
				why="${why}xgpu config show: $(tr '\n' ' ' </tmp/config.out); "
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
			# domu1's own cap from xenstore, published as its limit
			case $why in
			*xgpu\ attach*) ;;
			*)	mc=$(xsr "/local/domain/0/backend/xgpu/$D1/0/max-channels")
				[ "$mc" = 14 ] ||
					why="${why}domu1's device cap channels=14 (xenstore caps/channels '$(xsr "/local/domain/0/backend/xgpu/$D1/0/caps/channels")') published as max-channels '$mc'; "
				;;
			esac
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
			pass "hotplug (domu1 by xgpu attach with its device's cap channels=14 in xenstore, published; domu2 by its rule of xgpu.conf; daemon pid $XPID, ${MODE#xenstore }; xgpu list: both domains idle)"
		else
			fail hotplug "$why"
			show "hotplug.log: " /var/log/xgpu-hotplug.log
			logread 2>/dev/null | grep -E 'xen-gpubackd|xgpu-hotplug' |
				tail -n 15 | sed 's/^/    daemon log: /'
			show "attach-domu1: " /tmp/attach-domu1.log
		fi
	fi
}

# ---- steps domu1-basic, domu2-basic -----------------------------------------

step_basic() {
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
}
