#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Tests of the Debian packages (make deb-test):
#
#   O=build tests/deb/run.sh
#
# Builds them (make deb: $O/deb), runs lintian on them, unpacks each with
# dpkg-deb into a throwaway folder and checks its files, conffiles,
# relations and maintainer scripts (the unit's ExecStart, the ld.so.conf.d
# entry, the DKMS tree and its version; the DKMS tree is also built against
# a kernel's headers when some are installed), and, as root, really
# installs and purges the guest package on this machine (it only adds
# /etc/ld.so.conf.d/xgpu.conf and a directory of its own), checking that
# ldconfig lists its libcuda.so.1 and then no longer does.
#
# Needs what make deb needs (README.md) and lintian.  Prints "PASS step",
# "FAIL step: why" or "SKIP step: why" per step and, last, exactly
# "N passed, M failed"; exits non-zero if any step failed.

set -u

O=${O:-build}
cd "$(dirname "$0")/../.." || exit 1
DEB=$O/deb
VERSION=$(cat VERSION)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
LIBDIR=/usr/lib/$MA/xgpu
TMP=$(mktemp -d "${TMPDIR:-/tmp}/xgpu-deb.XXXXXX") || exit 1
npass=0
nfail=0
guest_installed_by_us=0

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

skip() {
	echo "SKIP $1: $2"
}

cleanup() {
	if [ "$guest_installed_by_us" = 1 ]; then
		dpkg -P xgpu-guest >/dev/null 2>&1
	fi
	if [ "$nfail" -gt 0 ]; then
		echo "---- logs and unpacked packages kept in $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# the regular files and links of an unpacked package, less its
# /usr/share/doc, one a line, sorted
files_of() {
	(cd "$1" && find . \( -type f -o -type l \) ! -path './usr/share/doc/*' |
		sed 's|^\.||' | sort)
}

# ---- build ------------------------------------------------------------------

backend=$DEB/xgpu-backend_${VERSION}_amd64.deb
guest=$DEB/xgpu-guest_${VERSION}_amd64.deb
dkms=$DEB/xen-gpufront-dkms_${VERSION}_all.deb
changes=$DEB/xgpu_${VERSION}_amd64.changes

if make -s deb O="$O" >"$TMP/build.log" 2>&1 &&
	[ -f "$backend" ] && [ -f "$guest" ] && [ -f "$dkms" ] &&
	[ -f "$changes" ]; then
	pass build
else
	fail build "make deb failed or left no packages (version $VERSION)"
	tail -n 15 "$TMP/build.log" | sed 's/^/    /'
	echo "$npass passed, $nfail failed"
	exit 1
fi

for p in backend guest dkms; do
	eval "f=\$$p"
	mkdir -p "$TMP/$p/root" "$TMP/$p/ctl"
	dpkg-deb -x "$f" "$TMP/$p/root" && dpkg-deb -e "$f" "$TMP/$p/ctl" ||
		fail "unpack-$p" "dpkg-deb could not unpack $f"
done
B=$TMP/backend/root
G=$TMP/guest/root
D=$TMP/dkms/root

# ---- version: one, everywhere ------------------------------------------------

bad=
for f in "$backend" "$guest" "$dkms"; do
	v=$(dpkg-deb -f "$f" Version)
	[ "$v" = "$VERSION" ] || bad="$bad $(basename "$f"):$v"
done
dv=$(sed -n 's/^PACKAGE_VERSION="*\([^"]*\)"*$/\1/p' \
	"$D/usr/src/xen-gpufront-$VERSION/dkms.conf" 2>/dev/null)
[ "$dv" = "$VERSION" ] || bad="$bad dkms.conf:${dv:-none}"
if [ -z "$bad" ]; then
	pass version
else
	fail version "VERSION is $VERSION, but:$bad"
fi

# ---- lintian -------------------------------------------------------------

if ! command -v lintian >/dev/null; then
	fail lintian "lintian is not installed (apt-get install lintian)"
elif lintian --fail-on error,warning "$changes" >"$TMP/lintian.log" 2>&1; then
	pass lintian
else
	fail lintian "$(grep -c '^[EW]:' "$TMP/lintian.log") errors/warnings"
	grep '^[EW]:' "$TMP/lintian.log" | head -n 20 | sed 's/^/    /'
fi

# every override comes with a comment saying why
bad=
for f in debian/*lintian-overrides debian/source/lintian-overrides; do
	[ -f "$f" ] || continue
	bad=$bad$(awk -v f="$f" '
		/^#/ { c = 1; next }
		/^[ \t]*$/ { c = 0; next }
		{ if (!c) printf " %s:%d", f, NR }' "$f")
done
if [ -z "$bad" ]; then
	pass lintian-overrides-explained
else
	fail lintian-overrides-explained "override without a comment at$bad"
fi

# ---- xgpu-backend -------------------------------------------------------------

cat >"$TMP/backend.want" <<EOF
/etc/default/xen-gpubackd
/etc/xen/scripts/xgpu
/etc/xen/xgpu.conf
/lib/systemd/system/xen-gpubackd.service
/lib/udev/rules.d/65-xgpu.rules
/usr/sbin/xen-gpubackd
/usr/sbin/xgpu
/usr/share/bash-completion/completions/xgpu
/usr/share/man/man1/xgpu.1.gz
/usr/share/man/man5/xgpu.conf.5.gz
/usr/share/man/man8/xen-gpubackd.8.gz
EOF
files_of "$B" >"$TMP/backend.have"
if diff -u "$TMP/backend.want" "$TMP/backend.have" >"$TMP/backend.diff"; then
	pass backend-files
else
	fail backend-files "files differ from the list"
	sed 's/^/    /' "$TMP/backend.diff"
fi

if grep -qx /etc/default/xen-gpubackd "$TMP/backend/ctl/conffiles" 2>/dev/null &&
	grep -qx /etc/xen/scripts/xgpu "$TMP/backend/ctl/conffiles" &&
	grep -qx /etc/xen/xgpu.conf "$TMP/backend/ctl/conffiles"; then
	pass backend-conffiles
else
	fail backend-conffiles "conffiles: $(tr '\n' ' ' <"$TMP/backend/ctl/conffiles" 2>/dev/null)"
fi

# the unit and the hotplug script name the daemon where the package put it
unit=$B/lib/systemd/system/xen-gpubackd.service
exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit" 2>/dev/null)
hp=$(sed -n 's/^XGPUBACKD=//p' "$B/etc/xen/scripts/xgpu" 2>/dev/null)
if [ "$exe" = /usr/sbin/xen-gpubackd ] && [ "$hp" = /usr/sbin/xen-gpubackd ] &&
	[ -x "$B$exe" ] &&
	grep -q '^EnvironmentFile=-/etc/default/xen-gpubackd$' "$unit"; then
	pass backend-unit
else
	fail backend-unit "ExecStart ${exe:-none}, hotplug script's daemon ${hp:-none}"
fi

# the udev rule runs the script the package ships
rule=$(sed -n 's/.*RUN+="\([^ "]*\).*/\1/p' "$B/lib/udev/rules.d/65-xgpu.rules" 2>/dev/null)
if [ "$rule" = /etc/xen/scripts/xgpu ] && [ -x "$B$rule" ]; then
	pass backend-udev
else
	fail backend-udev "the rule runs ${rule:-nothing}"
fi

# Xen's libraries are linked in (libxenstore.so.4 is only dlopened): the
# binaries need libc and OpenSSL's (the daemon's TLS) alone; the hotplug
# script needs xenstore-utils
needed=$(for f in "$B/usr/sbin/xen-gpubackd" "$B/usr/sbin/xgpu"; do
	objdump -p "$f" | sed -n 's/^ *NEEDED *//p'; done | LC_ALL=C sort -u |
	tr '\n' ' ')
dep=$(dpkg-deb -f "$backend" Depends)
if [ "$needed" = "libc.so.6 libcrypto.so.3 libssl.so.3 " ] &&
	printf '%s\n' "$dep" | grep -q '\bxenstore-utils\b' &&
	printf '%s\n' "$dep" | grep -q '\blibssl3\b' &&
	printf '%s\n' "$dep" | grep -q 'libc6'; then
	pass backend-depends
else
	fail backend-depends "NEEDED: $needed; Depends: $dep"
fi

if grep -q "deb-systemd-helper enable 'xen-gpubackd.service'" \
		"$TMP/backend/ctl/postinst" 2>/dev/null &&
	grep -q "xen-gpubackd.service" "$TMP/backend/ctl/postrm" 2>/dev/null &&
	grep -q "rm -rf /var/cache/xgpu" "$TMP/backend/ctl/postrm"; then
	pass backend-maintscripts
else
	fail backend-maintscripts "postinst/postrm do not handle the unit, or purge leaves /var/cache/xgpu"
fi

# ---- xgpu-guest ---------------------------------------------------------------

cat >"$TMP/guest.want" <<EOF
/etc/ld.so.conf.d/xgpu.conf
$LIBDIR/libcuda.so
$LIBDIR/libcuda.so.1
$LIBDIR/libnvidia-ml.so
$LIBDIR/libnvidia-ml.so.1
/usr/share/lintian/overrides/xgpu-guest
EOF
files_of "$G" >"$TMP/guest.have"
if diff -u "$TMP/guest.want" "$TMP/guest.have" >"$TMP/guest.diff" &&
	[ "$(readlink "$G$LIBDIR/libcuda.so")" = libcuda.so.1 ] &&
	objdump -p "$G$LIBDIR/libcuda.so.1" | grep -q 'SONAME *libcuda.so.1$' &&
	[ "$(readlink "$G$LIBDIR/libnvidia-ml.so")" = libnvidia-ml.so.1 ] &&
	objdump -p "$G$LIBDIR/libnvidia-ml.so.1" |
		grep -q 'SONAME *libnvidia-ml.so.1$'; then
	pass guest-files
else
	fail guest-files "files differ from the list, or the library's SONAME"
	sed 's/^/    /' "$TMP/guest.diff"
fi

# no path that NVIDIA's driver packages use (they put libcuda.so* in the
# multiarch directory itself), no shlibs entry for libcuda
if ! grep -q "^/usr/lib/$MA/[^/]*$" "$TMP/guest.have" &&
	! grep -q '^/usr/lib/[^/]*$' "$TMP/guest.have" &&
	[ ! -e "$TMP/guest/ctl/shlibs" ]; then
	pass guest-no-driver-paths
else
	fail guest-no-driver-paths "a file in a directory of the driver's, or a shlibs file"
fi

conf=$G/etc/ld.so.conf.d/xgpu.conf
if [ "$(grep -v '^#' "$conf" 2>/dev/null | grep -v '^[[:space:]]*$')" = "$LIBDIR" ] &&
	grep -qi '^#.*turn it off' "$conf" &&
	grep -qx /etc/ld.so.conf.d/xgpu.conf "$TMP/guest/ctl/conffiles" 2>/dev/null; then
	pass guest-ldconf
else
	fail guest-ldconf "xgpu.conf: $(grep -v '^#' "$conf" 2>/dev/null | tr '\n' ' ')"
fi

# ldconfig runs after installation and removal (libc-bin's trigger)
if grep -qx 'activate-noawait ldconfig' "$TMP/guest/ctl/triggers" 2>/dev/null; then
	pass guest-ldconfig-trigger
else
	fail guest-ldconfig-trigger "no ldconfig trigger"
fi

# ---- xen-gpufront-dkms --------------------------------------------------------

S=/usr/src/xen-gpufront-$VERSION
cat >"$TMP/dkms.want" <<EOF
$S/Kbuild
$S/Makefile
$S/README.md
$S/dkms.conf
$S/include/xgpu_uapi.h
$S/xgpufront.h
$S/xgpufront_bus.c
$S/xgpufront_chan.c
$S/xgpufront_fops.c
$S/xgpufront_xs.c
EOF
files_of "$D" >"$TMP/dkms.have"
if diff -u "$TMP/dkms.want" "$TMP/dkms.have" >"$TMP/dkms.diff" &&
	grep -qx 'PACKAGE_NAME=xen-gpufront' "$D$S/dkms.conf"; then
	pass dkms-files
else
	fail dkms-files "files differ from the list, or dkms.conf's name"
	sed 's/^/    /' "$TMP/dkms.diff"
fi

if dpkg-deb -f "$dkms" Depends | grep -q '\bdkms\b' &&
	grep -q 'DKMS_NAME=xen-gpufront' "$TMP/dkms/ctl/postinst" 2>/dev/null &&
	grep -q "DKMS_VERSION=$VERSION" "$TMP/dkms/ctl/postinst" &&
	grep -q 'dkms remove' "$TMP/dkms/ctl/prerm" 2>/dev/null; then
	pass dkms-maintscripts
else
	fail dkms-maintscripts "Depends or postinst/prerm do not call dkms for xen-gpufront $VERSION"
fi

# the packaged tree builds on its own, as DKMS will build it: with dkms
# (add and build in trees of this test's, nothing installed), or, without
# dkms, with make as dkms.conf says (in DKMS's environment: none of this
# make's O= or jobserver)
kdir=
for k in /lib/modules/"$(uname -r)"/build /usr/src/linux-headers-*-amd64; do
	[ -f "$k/Makefile" ] && { kdir=$k; break; }
done
case $kdir in
/lib/modules/*) kver=${kdir#/lib/modules/}; kver=${kver%/build} ;;
*) kver=${kdir#/usr/src/linux-headers-} ;;
esac
if [ -z "$kdir" ]; then
	skip dkms-build "no kernel headers installed"
elif command -v dkms >/dev/null; then
	dt=(--sourcetree "$D/usr/src" --dkmstree "$TMP/dkms/tree")
	mkdir -p "$TMP/dkms/tree"
	if (unset O MAKEFLAGS MAKELEVEL MFLAGS
		dkms add -m xen-gpufront -v "$VERSION" "${dt[@]}" &&
		dkms build -m xen-gpufront -v "$VERSION" -k "$kver" \
			--kernelsourcedir "$kdir" "${dt[@]}") \
			>"$TMP/kmod.log" 2>&1 &&
		[ -n "$(find "$TMP/dkms/tree" -name 'xen-gpufront.ko*')" ]; then
		pass dkms-build
	else
		fail dkms-build "dkms add/build for $kver failed"
		tail -n 10 "$TMP/kmod.log" | sed 's/^/    /'
	fi
elif env -u O -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make -C "$D$S" KDIR="$kdir" -j2 >"$TMP/kmod.log" 2>&1 &&
	[ -f "$D$S/xen-gpufront.ko" ]; then
	pass dkms-build
	echo "    (dkms is not installed: built with make KDIR=$kdir)"
else
	fail dkms-build "make KDIR=$kdir in the packaged tree failed"
	grep -m 10 -E 'rror|warning' "$TMP/kmod.log" | sed 's/^/    /'
fi

# ---- the three resolve against the archive (apt-get -s: nothing changes) ---

if ! apt-cache policy xenstore-utils 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	skip relations-resolve "apt has no package lists (apt-get update)"
elif apt-get -s -q install "$(readlink -f "$backend")" \
		"$(readlink -f "$guest")" "$(readlink -f "$dkms")" \
		>"$TMP/apt.log" 2>&1; then
	pass relations-resolve
else
	fail relations-resolve "apt-get -s install of the three failed"
	grep -E '^E:|Depends:' "$TMP/apt.log" | head -n 10 | sed 's/^/    /'
fi

# ---- install and purge xgpu-guest on this machine -----------------------------

lists_xgpu() {
	ldconfig -p | grep -q "libcuda.so.1 (.*) => $LIBDIR/libcuda.so.1\$"
}

if [ "$(id -u)" != 0 ]; then
	skip guest-install "not root"
elif dpkg-query -W -f '${Status}' xgpu-guest 2>/dev/null | grep -q installed; then
	skip guest-install "xgpu-guest is installed here already; left alone"
else
	if dpkg -i "$guest" >"$TMP/dpkg-i.log" 2>&1; then
		guest_installed_by_us=1
		pass guest-install
	else
		fail guest-install "dpkg -i failed"
		tail -n 5 "$TMP/dpkg-i.log" | sed 's/^/    /'
	fi
	if [ "$guest_installed_by_us" = 1 ]; then
		if lists_xgpu; then
			pass guest-ldconfig
		else
			fail guest-ldconfig "ldconfig -p does not list $LIBDIR/libcuda.so.1"
		fi
		# a program that loads libcuda.so.1 by name, without
		# LD_LIBRARY_PATH, gets xgpu's
		got=$(env -u LD_LIBRARY_PATH /usr/bin/python3 -c '
import ctypes
ctypes.CDLL("libcuda.so.1")
for l in open("/proc/self/maps"):
    if "libcuda.so.1" in l:
        print(l.split()[-1]); break' 2>&1)
		if [ "$got" = "$LIBDIR/libcuda.so.1" ]; then
			pass guest-dlopen
		else
			fail guest-dlopen "dlopen(libcuda.so.1) gave: $got"
		fi
		# the system's own directories come first: a native driver's
		# libcuda.so.1 in /usr/lib/$MA would still win
		order=$(printf '%s\n' /etc/ld.so.conf.d/*.conf |
			grep -n -e "/$MA.conf\$" -e '/xgpu.conf$' | cut -d: -f2 |
			xargs -n1 basename | tr '\n' ' ')
		if [ "$order" = "$MA.conf xgpu.conf " ]; then
			pass guest-after-system-dirs
		else
			fail guest-after-system-dirs "ld.so.conf.d order: $order"
		fi
		if dpkg -r xgpu-guest >"$TMP/dpkg-r.log" 2>&1 && ! lists_xgpu &&
			[ ! -e "$LIBDIR/libcuda.so.1" ]; then
			pass guest-remove
		else
			fail guest-remove "after dpkg -r, ldconfig -p still lists it or the library is there"
		fi
		if dpkg -P xgpu-guest >"$TMP/dpkg-P.log" 2>&1 &&
			[ ! -e /etc/ld.so.conf.d/xgpu.conf ] && [ ! -e "$LIBDIR" ] &&
			! dpkg-query -W xgpu-guest >/dev/null 2>&1; then
			guest_installed_by_us=0
			pass guest-purge
		else
			fail guest-purge "after dpkg -P, xgpu.conf, $LIBDIR or the package is left"
		fi
	fi
fi

echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ]
