# SPDX-License-Identifier: MIT
# shellcheck shell=dash
#
# dom0-steps-chain.sh: the step of the test Dom0's /init that chains this
# Dom0's backend to a daemon on the host that runs QEMU (run.sh starts it
# on 127.0.0.1:CHAIN_PORT, its driver the fake one; on a GPU machine the
# host's real driver), run by dom0-init.sh after unbind-busy:
#
#   step_net_chain   net-chain: Dom0's network up (QEMU's user network,
#                    e1000), the daemon restarted by the hotplug path
#                    with --remote-driver and xgpu's own libcuda.so.1 as
#                    its driver, XGPU_SOCKET=tcp://10.0.2.2:CHAIN_PORT;
#                    domu2's netcopy (small) and threads pass through
#                    DomU -> ring -> Dom0 worker -> TLS -> the host's
#                    worker -> driver, and so do the programs of
#                    GPU_PROGS (run.sh) where they are in the image,
#                    each reported as "XGPU-CHAIN-PROG name rc digest
#                    seconds last-line"; then
#                    the daemon as it was, for teardown
#   step_grant_budget grant-budget: the host's budget of granted pages
#                    (--grant-mb) refuses a channel past it, and only
#                    while the pages are mapped
#   step_same_domain same-domain: a domain's second process is served
#                    while its first holds the GPU alone
#
# run.sh's verdict checks the host's half (its daemon's log).

CHAIN_LIB=/usr/lib/x86_64-linux-gnu/xgpu/libcuda.so.1

# the daemon restarted through the hotplug path with the options of
# /etc/default/xen-gpubackd as they are now: 0 when it runs
restart_daemon() {
	if [ -n "$XPID" ]; then
		kill "$XPID"
		wait_until 10 pid_gone "$XPID" || return 1
	fi
	hotplug_add "$D2" || return 1
	XPID=
	wait_until 10 daemon_found
}

# daemon_with: the daemon restarted with the lines on stdin added to
# /etc/default/xen-gpubackd (0 when it runs); daemon_as_before: the file
# and the daemon as they were, for what follows
daemon_with() {
	cp /etc/default/xen-gpubackd /tmp/xen-gpubackd.default
	{
		cat /tmp/xen-gpubackd.default
		cat
	} >/etc/default/xen-gpubackd
	restart_daemon
}
daemon_as_before() {
	cp /tmp/xen-gpubackd.default /etc/default/xen-gpubackd
	restart_daemon
}

# A step's verdict is kept in WHY (what failed, appended to) and OK (what
# passed, for its PASS line); verdict NAME TEXT reports it.
verdict() {
	if [ -z "$WHY" ]; then
		pass "$1${2:+ $2}"
	else
		fail "$1" "$WHY"
	fi
}

# domu2_result CMD SECONDS: domu2 runs CMD (its result has the same
# name); OK holds the result after PASS, or WHY (appended to) says why not
domu2_result() {
	cmd "$D2" "$1"
	if ! wait_res "$D2" "$1" "$2"; then
		WHY="${WHY}no result from domu2; "
		return 1
	fi
	case $RES in
	PASS*) OK="${RES#PASS }" ;;
	*) WHY="${WHY}domu2: ${RES#FAIL: }; " ;;
	esac
}

step_net_chain() {
	WHY= OK=
	blocked net-chain && return
	if [ -z "${CHAIN_ADDR:-}" ] || [ ! -f /etc/xgpu/chain.psk ]; then
		skip net-chain "no host daemon given (CHAIN_ADDR)"
		return
	fi
	insmod /lib/modules/net/e1000.ko 2>/tmp/e1000.err ||
		WHY="${WHY}insmod e1000: $(cat /tmp/e1000.err); "
	wait_until 10 test -e /sys/class/net/eth0 ||
		WHY="${WHY}no eth0; "
	ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 ||
		WHY="${WHY}eth0 not configured; "
	if [ -n "$WHY" ]; then
		fail net-chain "$WHY"
		return
	fi
	if ! daemon_with <<EOF_OPTS
XGPUBACKD_OPTS="\$XGPUBACKD_OPTS --remote-driver --driver $CHAIN_LIB"
export XGPU_SOCKET=tcp://$CHAIN_ADDR
export XGPU_TLS_PSK=/etc/xgpu/chain.psk
EOF_OPTS
	then
		WHY="no chained daemon after the hotplug script: $(tail -n 1 /var/log/xgpu-hotplug.log); "
	else
		# netcopy and threads, then each of GPU_PROGS (a GPU machine's
		# chain: seconds each under TCG, tens through the user network)
		set -- ${GPU_PROGS:-}
		domu2_result chain $((240 + 200 * $#))
		# each program's exit status, output digest and last line, for
		# run.sh's caller to compare with the program's native run
		for p in ${GPU_PROGS:-}; do
			echo "XGPU-CHAIN-PROG $p $(res "$D2" "gpu-$p")"
		done
		logread | grep -q "executor $CHAIN_LIB" ||
			WHY="${WHY}no worker ran on $CHAIN_LIB; "
	fi
	daemon_as_before ||
		WHY="${WHY}the daemon did not come back as before; "
	verdict net-chain "(domu2: $OK through Dom0's worker on xgpu's own library, TLS to $CHAIN_ADDR)"
}

# grant-budget: the daemon restarted with --grant-mb 24 (Dom0's maptrack
# table is shared by every backend of every domain: the host's budget of
# granted pages for all xgpu channels); domu2's second 16 MiB data area
# at once is refused naming the budget, a 1 MiB one fits beside the
# first, a 16 MiB one fits again once the first has gone (domU-init.sh
# grantbudget_run); Dom0's log holds the refusal; then domu2's own cap at
# run time (`xgpu config set domu2 grant-mb=8`): a 16 MiB data area is
# refused naming the domain's cap though the host's budget has room, a
# 2 MiB one fits (grantcap_run); then the daemon as it was
step_grant_budget() {
	WHY= OK=
	blocked grant-budget && return
	if ! daemon_with <<EOF_OPTS
XGPUBACKD_OPTS="\$XGPUBACKD_OPTS --grant-mb 24"
EOF_OPTS
	then
		WHY="no daemon with --grant-mb after the hotplug script: $(tail -n 1 /var/log/xgpu-hotplug.log); "
	else
		domu2_result grantbudget 900
		logread | grep -q "grant budget, 24 MiB (--grant-mb)" ||
			WHY="${WHY}no refusal naming the budget in Dom0's log; "
		ok1=$OK
		if timeout 20 xgpu config set domu2 grant-mb=8 \
			>/tmp/grantcap.set 2>&1; then
			domu2_result grantcap 600
			logread | grep -q "domain's grant cap, 8 MiB" ||
				WHY="${WHY}no refusal naming the domain's cap in Dom0's log; "
		else
			WHY="${WHY}xgpu config set domu2 grant-mb=8: $(cat /tmp/grantcap.set); "
		fi
		OK="$ok1; $OK"
	fi
	daemon_as_before || WHY="${WHY}the daemon did not come back as before; "
	verdict grant-budget "$OK"
}

# same-domain: domu2's second process, started while its first holds the
# GPU alone with a long kernel, is served at once (the scheduler gives
# every channel of the holding domain the grant, also one opened during
# its turn; a domain alone keeps its turn from slice to slice)
step_same_domain() {
	WHY= OK=
	blocked same-domain && return
	domu2_result samedom 400
	daemon_alive || WHY="${WHY}the daemon (pid ${XPID:-?}) is gone; "
	verdict same-domain "$OK"
}
