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
#
# The helpers and the steps are parts that this script sources from
# /opt/xgpu (run.sh copies every tests/xen/dom0-*.sh there):
#   dom0-lib.sh            helpers: step results, bounded waits, the DomU
#                          protocol, processes, the daemon's state
#   dom0-steps-bringup.sh  dom0-xen, domu-boot, platform, hotplug,
#                          domu1-basic, domu2-basic
#   dom0-steps-guests.sh   vcpu-coord, hostile-xenstore, hostile-ring,
#                          hostile-handles, hostile-grants,
#                          hostile-geometry, hostile-blobs, hostile-xsflood,
#                          hostile-flood,
#                          hostile-neighbour, list, destroy-busy, measure,
#                          backend-restart, unbind-busy, teardown
#   dom0-steps-restore.sh  save-checkpoint, save-restore, restore-attach,
#                          migrate-local (between hostile-neighbour and
#                          list)
# Each step is a function; they run below in order, then the end.
#
# shellcheck source-path=SCRIPTDIR

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

# the parts; one missing is a broken image: say so the way a step fails
PARTS=/opt/xgpu
for f in dom0-lib.sh dom0-steps-bringup.sh dom0-steps-guests.sh \
	dom0-steps-restore.sh; do
	[ -r "$PARTS/$f" ] && continue
	echo "XGPU-STEP FAIL dom0-xen: $PARTS/$f is not in the image"
	echo "XGPU-RESULT: FAIL (1 failed)"
	sync
	poweroff -f
done
# shellcheck source=dom0-lib.sh
. "$PARTS/dom0-lib.sh"
# shellcheck source=dom0-steps-bringup.sh
. "$PARTS/dom0-steps-bringup.sh"
# shellcheck source=dom0-steps-guests.sh
. "$PARTS/dom0-steps-guests.sh"
# shellcheck source=dom0-steps-restore.sh
. "$PARTS/dom0-steps-restore.sh"
# shellcheck source=dom0-steps-chain.sh
. "$PARTS/dom0-steps-chain.sh"

# ---- the steps ----------------------------------------------------------------

step_dom0_xen
step_packages
hotplug_path
step_domu_boot
if [ "${STEPS:-all}" = chain ]; then
	# the chain on a GPU machine (run.sh XEN_STEPS=chain): the daemon
	# up, then straight to net-chain
	step_hotplug
	step_net_chain
	step_teardown
else
	step_platform
	step_hotplug
	step_basic
	step_vcpu_coord
	step_hostile
	step_save_checkpoint
	step_save_restore
	step_restore_attach
	step_migrate_local
	step_list
	step_destroy_busy
	step_measure
	step_backend_restart
	step_unbind_busy
	step_net_chain
	step_grant_budget
	step_same_domain
	step_teardown
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
