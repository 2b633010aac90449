#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The test Dom0 has no udev.  The kernel runs this program for every uevent
# (/proc/sys/kernel/hotplug), with the event in its environment.  It does
# what Xen's udev rule does for xgpu: on the xen-backend bus, for devices
# xgpu-<domid>-<devid>, run /etc/xen/scripts/xgpu with the action, the
# device's XENBUS_PATH etc. passed on in the environment.
[ "$SUBSYSTEM" = xen-backend ] || exit 0
dev=${DEVPATH##*/}
case $dev in
xgpu-*) ;;
*) exit 0 ;;
esac
export PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/lib/xen-4.17/bin
# the kernel gives a helper no open files
exec </dev/null >>/var/log/xgpu-hotplug.log 2>&1
echo "uevent: $ACTION $dev XENBUS_PATH=$XENBUS_PATH" | tee /dev/console
/etc/xen/scripts/xgpu "$ACTION"
rc=$?
echo "uevent: /etc/xen/scripts/xgpu $ACTION ($dev) exited $rc" | tee /dev/console
