#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The user xen-gpubackd's workers run as (--worker-user, default xgpu):
# made if missing, as a system user with no home and no login shell, and
# added to the groups that own the NVIDIA device nodes (other than root)
# where those are restricted to a group.  Run by `make install` (as root,
# DESTDIR empty); debian/xgpu-backend.postinst does the same.  Never
# fails: without useradd/adduser the daemon runs its workers as root and
# says so in its log.
#
#   scripts/worker-user.sh [USER]

U=${1:-xgpu}

if ! getent passwd "$U" >/dev/null 2>&1; then
	if command -v useradd >/dev/null 2>&1; then
		useradd --system --user-group --no-create-home \
			--home-dir /nonexistent --shell /usr/sbin/nologin "$U" ||
			echo "worker-user: useradd $U failed" >&2
	elif command -v adduser >/dev/null 2>&1; then
		adduser --system --group --no-create-home \
			--home /nonexistent --quiet "$U" ||
			echo "worker-user: adduser $U failed" >&2
	else
		echo "worker-user: no useradd or adduser: make a user $U" \
			"(or the daemon's workers run as root)" >&2
	fi
fi
if getent passwd "$U" >/dev/null 2>&1; then
	for node in /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia[0-9]*; do
		[ -c "$node" ] || continue
		g=$(stat -c %G "$node" 2>/dev/null)
		case $g in root | UNKNOWN | "") continue ;; esac
		id -nG "$U" | tr ' ' '\n' | grep -qx "$g" && continue
		usermod -a -G "$g" "$U" 2>/dev/null ||
			echo "worker-user: add $U to group $g (owner of $node)" >&2
	done
fi
exit 0
