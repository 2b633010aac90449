#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Nested-Xen end-to-end test of xgpu: Xen 4.17 with a PV Dom0 and two PV
# DomUs under QEMU (TCG), all from Debian packages, no GPU (the daemon
# loads the fake CUDA driver of tests/fakecuda).  Run as root from the
# repository root:
#
#   O=build tests/xen/run.sh
#
# Prints "PASS step" or "FAIL step: why" per step and, last, exactly
# "N passed, M failed"; exits 0 only if every step passed.  Prints one
# "SKIP xen: why" line and exits 0 where the machine cannot run it.
# tests/xen/README.md lists the steps and the knobs.

set -u
set -o pipefail

ROOT=$(pwd)
O=${O:-build}
case $O in /*) ;; *) O=$ROOT/$O ;; esac
W=${XEN_WORK:-$O/xen}
CACHE=${XEN_CACHE:-/var/cache/xgpu-xen}
VERBOSE=${VERBOSE:-0}
SKIP_APT=${SKIP_APT:-0}
SKIP_MAKE=${SKIP_MAKE:-0}
TIMEOUT=${TIMEOUT:-1200}		# one boot, seconds of host wall clock
BUDGET=${BUDGET:-1500}		# the whole run, retry included
# (Dom0 holds a DomU's saved image in a tmpfs for save-restore: 896M)
QEMU_MEM=${QEMU_MEM:-1792}
DOM0_MEM=${DOM0_MEM:-896M}
DOMU_MEM=${DOMU_MEM:-320}
SMP=${SMP:-2}
CPU=${CPU:-max,-smap,-xsave}
# where the Dom0 image has the fake CUDA driver ($O/tests/fakecuda)
FAKECUDA=/usr/lib/xgpu-test/libcuda.so.1
# (hostile-blobs fills the image cap: a small one costs Dom0 little)
XGPUBACKD_OPTS=${XGPUBACKD_OPTS:---driver $FAKECUDA --images-mb 64}
XBENCH_ARGS=${XBENCH_ARGS:-200 5}
VCPU_S=${VCPU_S:-8}		# vcpu-coord: seconds per phase (0: skip the step)
XEN_SCHED=${XEN_SCHED:-}	# Xen's scheduler (sched=): "" (credit2) or credit
# Debug only: write the xenstore nodes and start the daemon from the test
# itself instead of `xgpu attach` + the hotplug script.  The hotplug step
# then fails on purpose (the toolstack path was not tested).
DEBUG_MANUAL_ATTACH=${DEBUG_MANUAL_ATTACH:-0}
RETRY=${RETRY:-1}
PLATFORM_S=${PLATFORM_S:-3}	# the platform self-check, seconds (0: off)
STRESS_ONLY=${STRESS_ONLY:-0}	# debug: stop after the platform check
# "static": the daemon ignores libxenstore.so.4 and polls xenstore (to
# compare with the watch mode; the steps then expect polling)
XGPUB_XENSTORE=${XGPUB_XENSTORE:-}
# The chain on a GPU machine (tests/xen/gpu-chain.sh drives these):
# "chain": Dom0 runs only the steps that bring Xen, the DomUs and the
# daemon up, then net-chain and teardown
XEN_STEPS=${XEN_STEPS:-all}
# programs (paths) the DomU runs in net-chain after netcopy and threads;
# each one's exit status and the digest of its output without TIME lines
# come back as XGPU-CHAIN-PROG lines of the serial log
GPU_PROGS=${GPU_PROGS:-}
BUILD_ONLY=${BUILD_ONLY:-0}	# 1: stop after the images are built
PREBUILT=${PREBUILT:-0}		# 1: boot the images in $XEN_WORK/build as they are
QEMU=${QEMU:-qemu-system-x86_64}	# the command (words) that runs QEMU
QEMU_DATA=${QEMU_DATA:-}	# QEMU's firmware folder (-L), if not its own
# the driver of the daemon on this host that Dom0 chains to (net-chain):
# default the fake of the tests; a GPU machine gives its real libcuda.so.1
CHAIN_DRIVER=${CHAIN_DRIVER:-}

KMOD_DIR=$ROOT/xen-frontend/kmod
KMOD_NAME=xen-gpufront
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
T_START=$(date +%s)

npass=0
nfail=0
pass() {
	echo "PASS $1"
	npass=$((npass + 1))
}
fail() {
	local n=$1
	shift
	echo "FAIL $n${1:+: $*}"
	nfail=$((nfail + 1))
}
finish() {
	echo "$npass passed, $nfail failed"
	[ "$nfail" -eq 0 ] && exit 0
	exit 1
}
skip() {
	echo "SKIP xen: $*"
	exit 0
}
note() {
	echo "xen: $*"
}
# the last lines of a build log, indented
tailof() {
	tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/    /'
}

[ -f tests/xen/run.sh ] || {
	echo "FAIL setup: run me from the repository root"
	exit 1
}

# ---- (a) dependencies --------------------------------------------------------

HOST_PKGS="qemu-system-x86 busybox-static cpio xz-utils dash gcc make \
libc6-dev libxen-dev dpkg-dev debhelper dh-dkms"
GUEST_PKGS="xen-hypervisor-4.17-amd64 xen-utils-4.17 xenstore-utils"
APT_UPDATED=0

apt_update() {
	[ "$APT_UPDATED" = 1 ] && return 0
	APT_UPDATED=1
	apt-get update -q >"$W/apt.log" 2>&1
}

# the kernel ABI that linux-image-amd64 points to (6.1.0-56-amd64)
kver_from_apt() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' |
		head -n 1
}

cand_version() {
	apt-cache policy "$1" 2>/dev/null |
		sed -n 's/^ *Candidate: \(.*\)$/\1/p' | head -n 1
}

missing_host_pkgs() {
	local p m=""
	for p in $HOST_PKGS "linux-headers-$KVER"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = \
			"install ok installed" ] || m="$m $p"
	done
	echo "$m"
}

# fill $CACHE/<key>/root from the guest packages (downloaded, never installed)
fetch_guest_pkgs() {
	local dir=$1 tmp p
	tmp=$dir.tmp.$$
	rm -rf "$tmp"
	mkdir -p "$tmp/debs" "$tmp/root" || return 1
	# apt-get download writes to the current directory; _apt cannot
	# write into a root-only folder, which only warns
	(cd "$tmp/debs" && apt-get download $GUEST_PKGS "linux-image-$KVER") \
		>>"$W/apt.log" 2>&1 ||
		{ apt_update &&
		  (cd "$tmp/debs" &&
		   apt-get download $GUEST_PKGS "linux-image-$KVER") \
			>>"$W/apt.log" 2>&1; } || return 1
	for p in "$tmp"/debs/*.deb; do
		dpkg-deb -x "$p" "$tmp/root" || return 1
	done
	echo "$KVER" >"$tmp/kver"
	rm -rf "$dir" && mv "$tmp" "$dir" && touch "$dir/complete"
}

deps() {
	local m key xv
	if [ "$SKIP_APT" != 1 ] && [ "$(id -u)" = 0 ] &&
		command -v apt-get >/dev/null; then
		KVER=$(kver_from_apt)
		if [ -z "$KVER" ]; then
			apt_update || true
			KVER=$(kver_from_apt)
		fi
		[ -n "$KVER" ] || { DEPS_WHY="apt knows no linux-image-amd64 (see $W/apt.log)"; return 1; }
		m=$(missing_host_pkgs)
		if [ -n "$m" ]; then
			note "installing$m"
			apt_update
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
				--no-install-recommends $m >>"$W/apt.log" 2>&1 ||
				{ DEPS_WHY="apt-get install$m failed (see $W/apt.log)"; return 1; }
		fi
		xv=$(cand_version xen-utils-4.17)
		[ -n "$xv" ] || { DEPS_WHY="apt knows no xen-utils-4.17"; return 1; }
		key=$(printf '%s_xen-%s' "$KVER" "$xv" | tr -c 'A-Za-z0-9._\n-' '_')
		XROOT=$CACHE/$key
		if [ ! -f "$XROOT/complete" ]; then
			note "downloading the guest packages into $XROOT"
			fetch_guest_pkgs "$XROOT" ||
				{ DEPS_WHY="apt-get download failed (see $W/apt.log)"; return 1; }
		fi
	else
		# no apt (or not root, or SKIP_APT=1): the newest complete cache
		XROOT=$(ls -dt "$CACHE"/*/complete 2>/dev/null | head -n 1)
		XROOT=${XROOT%/complete}
		if [ -z "$XROOT" ]; then
			[ "$(id -u)" = 0 ] || skip "not root and no package cache in $CACHE"
			[ "$SKIP_APT" = 1 ] && skip "SKIP_APT=1 and no package cache in $CACHE"
			skip "no apt-get and no package cache in $CACHE"
		fi
		KVER=$(cat "$XROOT/kver")
		m=$(missing_host_pkgs)
		[ -z "$m" ] || skip "cannot install$m (not root or SKIP_APT=1)"
	fi
	KDIR=/usr/src/linux-headers-$KVER
	XROOT=$XROOT/root
	[ -f "$XROOT/boot/xen-4.17-amd64.gz" ] ||
		{ DEPS_WHY="$XROOT has no boot/xen-4.17-amd64.gz"; return 1; }
	[ -f "$XROOT/boot/vmlinuz-$KVER" ] ||
		{ DEPS_WHY="$XROOT has no boot/vmlinuz-$KVER"; return 1; }
	[ -d "$KDIR" ] || { DEPS_WHY="$KDIR is missing"; return 1; }
	return 0
}

mkdir -p "$W" || skip "cannot create $W"
if [ "$PREBUILT" != 1 ] && ! command -v apt-get >/dev/null && [ ! -d "$CACHE" ]; then
	skip "no apt-get and no package cache in $CACHE"
fi
DEPS_WHY=
T0=$(date +%s)
if [ "$PREBUILT" = 1 ]; then
	:
elif deps; then
	pass "deps ($(($(date +%s) - T0)) s; kernel $KVER, cache ${XROOT%/root})"
else
	fail deps "$DEPS_WHY"
	finish
fi

# ---- (b) build ----------------------------------------------------------------

B=$W/build
IMG=$W/img
BUILD_LOG=$W/build.log
: >"$BUILD_LOG"

# copy FILE (and its ldd closure) into image root DIR at DEST (default: its
# own path); the guest library is never taken from the closure
put_bin() {
	local root=$1 src=$2 dest=${3:-$2}
	mkdir -p "$root$(dirname "$dest")"
	cp -L "$src" "$root$dest" || return 1
	put_libs "$root" "$src"
}

# the ldd closure of FILE into image root DIR (not FILE itself: a file of
# a package that dpkg installs in the image)
put_libs() {
	local root=$1 src=$2 lib
	for lib in $(ldd "$src" 2>/dev/null |
		sed -n -e 's/.*=> \(\/[^ ]*\) (0x.*/\1/p' \
			-e 's/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p'); do
		case $lib in */libcuda.so*) continue ;; esac
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib" || return 1
	done
	if ldd "$src" 2>/dev/null | grep -v libcuda | grep -q 'not found'; then
		echo "put_bin: $src: $(ldd "$src" | grep 'not found')" >&2
		return 1
	fi
}

# the skeleton of an image: usr-merged dirs, busybox applets, libgcc_s
# (glibc dlopens it for pthread_cancel, so ldd does not list it)
skeleton() {
	local root=$1 a gcc_s
	rm -rf "$root"
	mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64} \
		"$root"/{dev,proc,sys,tmp,run,etc,root,var}
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	ln -s usr/bin "$root/bin"
	ln -s usr/sbin "$root/sbin"
	cp /bin/busybox "$root/usr/bin/busybox" || return 1
	for a in $(/bin/busybox --list); do
		[ -e "$root/usr/bin/$a" ] || ln -s busybox "$root/usr/bin/$a"
	done
	gcc_s=$(gcc -print-file-name=libgcc_s.so.1)
	cp -L "$gcc_s" "$root/usr/lib/x86_64-linux-gnu/libgcc_s.so.1"
	put_bin "$root" /lib64/ld-linux-x86-64.so.2
}

# dpkg in image root DIR, to install xgpu's packages there as an
# administrator does (dpkg -i): Debian's dpkg and the programs it runs
# (dpkg-deb wants GNU tar; ldconfig, for the guest library's directory),
# an empty database, and the dynamic linker's configuration with its
# ld.so.conf.d (the guest package adds xgpu.conf there); the packages
# of OUT/deb go to /opt/xgpu/debs
put_dpkg() {
	local root=$1 f
	for f in /usr/bin/dpkg /usr/bin/dpkg-deb /usr/bin/dpkg-split \
		/usr/bin/dpkg-query /usr/bin/tar /usr/sbin/ldconfig; do
		# (busybox's applet of that name is a link: not through it)
		rm -f "$root$f"
		put_bin "$root" "$(readlink -f "$f")" "$f" || return 1
	done
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" \
		"$root/var/lib/dpkg/triggers" "$root/etc/ld.so.conf.d" \
		"$root/opt/xgpu/debs" "$root/var/log" || return 1
	: >"$root/var/lib/dpkg/status"
	: >"$root/var/lib/dpkg/available"
	echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"
}

mkcpio() {
	(cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$2"
}

# Debian's bzImage carries an xz stream; the ELF inside boots much faster
# under TCG (no decompression in emulated code).
extract_vmlinux() {
	local bz=$1 out=$2 off
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bz" | head -n 1 | cut -d: -f1)
	[ -n "$off" ] || return 1
	tail -c +$((off + 1)) "$bz" | xz -dc --single-stream >"$out" 2>/dev/null
	[ "$(head -c 4 "$out" | od -An -c | tr -d ' ')" = '177ELF' ]
}

build_all() {
	local f why
	mkdir -p "$B" "$IMG"

	if [ "$SKIP_MAKE" != 1 ]; then
		make -s O="$O" all "$O/tests/basic" "$O/tests/spin" \
			"$O/tests/threads" "$O/tests/managed" "$O/tests/spinloop" \
			"$O/tests/lostidle" "$O/tests/fakecuda/libcuda.so.1" \
			>>"$BUILD_LOG" 2>&1 ||
			{ BUILD_WHY="make failed"; return 1; }
	fi
	# the packages the images install (make deb; debian/)
	if [ "$SKIP_MAKE" != 1 ] || ! ls "$O"/deb/xgpu-guest_*.deb >/dev/null 2>&1; then
		scripts/build-deb.sh "$O/deb" >>"$BUILD_LOG" 2>&1 ||
			{ BUILD_WHY="make deb failed (scripts/build-deb.sh $O/deb)"; return 1; }
	fi
	DEB_BACKEND=$(ls "$O"/deb/xgpu-backend_*_amd64.deb 2>/dev/null | head -n 1)
	DEB_GUEST=$(ls "$O"/deb/xgpu-guest_*_amd64.deb 2>/dev/null | head -n 1)
	[ -n "$DEB_BACKEND" ] && [ -n "$DEB_GUEST" ] ||
		{ BUILD_WHY="no xgpu-backend/xgpu-guest .deb in $O/deb"; return 1; }
	rm -rf "$B/debx" && mkdir -p "$B/debx" &&
		dpkg-deb -x "$DEB_BACKEND" "$B/debx" &&
		dpkg-deb -x "$DEB_GUEST" "$B/debx" ||
		{ BUILD_WHY="dpkg-deb -x of the packages failed"; return 1; }
	for f in "$O/bin/xen-gpubackd" "$O/lib/libcuda.so.1" "$O/tests/basic" \
		"$O/tests/spin" "$O/tests/threads" "$O/tests/managed" \
		"$O/tests/spinloop" "$O/tests/lostidle" \
		"$O/tests/fakecuda/libcuda.so.1"; do
		[ -x "$f" ] || { BUILD_WHY="$f is missing"; return 1; }
	done

	# kernel module, against the headers of the guest kernel
	HAVE_KMOD=0
	if [ -f "$KMOD_DIR/Makefile" ]; then
		# built into $O/kmod, never the source tree: a stale module
		# there must not stand in for this one
		rm -f "$O/kmod/$KMOD_NAME.ko"
		if make -C "$KMOD_DIR" KDIR="$KDIR" O="$O/kmod" \
			>>"$BUILD_LOG" 2>&1 &&
			[ -f "$O/kmod/$KMOD_NAME.ko" ]; then
			HAVE_KMOD=1
		else
			BUILD_WHY="the module did not build (make -C $KMOD_DIR KDIR=$KDIR O=$O/kmod)"
			return 1
		fi
	else
		note "no $KMOD_DIR/Makefile yet: the DomUs boot without the module"
	fi

	# test programs of tests/xen
	local CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror"
	gcc $CF -Ixen-frontend/include -Ishared-ring -o "$B/hostile-ring" \
		tests/xen/hostile-ring.c >>"$BUILD_LOG" 2>&1 ||
		{ BUILD_WHY="tests/xen/hostile-ring.c did not build"; return 1; }
	gcc $CF -o "$B/memstress" tests/xen/memstress.c -lpthread \
		>>"$BUILD_LOG" 2>&1 ||
		{ BUILD_WHY="tests/xen/memstress.c did not build"; return 1; }
	gcc $CF -I"$CUDA_HOME/include" -o "$B/xbench" tests/xen/xbench.c \
		-L"$O/lib" -l:libcuda.so.1 -lpthread \
		>>"$BUILD_LOG" 2>&1 ||
		{ BUILD_WHY="tests/xen/xbench.c did not build"; return 1; }
	gcc $CF -I"$CUDA_HOME/include" -o "$B/vcpubench" tests/xen/vcpubench.c \
		-L"$O/lib" -l:libcuda.so.1 \
		>>"$BUILD_LOG" 2>&1 ||
		{ BUILD_WHY="tests/xen/vcpubench.c did not build"; return 1; }

	# Xen (multiboot needs the plain ELF) and the kernel (ELF vmlinux)
	if [ ! -s "$B/xen" ] || [ "$XROOT/boot/xen-4.17-amd64.gz" -nt "$B/xen" ]; then
		zcat "$XROOT/boot/xen-4.17-amd64.gz" >"$B/xen" ||
			{ BUILD_WHY="gunzip xen"; return 1; }
	fi
	if [ ! -s "$B/vmlinux" ] || [ "$XROOT/boot/vmlinuz-$KVER" -nt "$B/vmlinux" ]; then
		extract_vmlinux "$XROOT/boot/vmlinuz-$KVER" "$B/vmlinux" ||
			{ BUILD_WHY="no ELF vmlinux in vmlinuz-$KVER"; return 1; }
	fi

	# ---- DomU image (one for both DomUs: the role is on the command line)
	local U=$IMG/domu
	skeleton "$U" || { BUILD_WHY="domU skeleton"; return 1; }
	install -m 0755 tests/xen/domU-init.sh "$U/init"
	[ "$HAVE_KMOD" = 1 ] && cp "$O/kmod/$KMOD_NAME.ko" "$U/$KMOD_NAME.ko"
	# the guest library comes in its package (installed by /init)
	put_dpkg "$U" && cp "$DEB_GUEST" "$U/opt/xgpu/debs/" &&
	for f in "$B"/debx/usr/lib/*/xgpu/lib*.so.1; do
		put_libs "$U" "$f" || return 1
	done &&
	for f in basic spin threads managed spinloop lostidle netcopy idle; do
		put_bin "$U" "$O/tests/$f" "/usr/bin/$f" || return 1
	done &&
	put_bin "$U" "$B/hostile-ring" /usr/bin/hostile-ring &&
	put_bin "$U" "$B/xbench" /usr/bin/xbench &&
	put_bin "$U" "$B/vcpubench" /usr/bin/vcpubench &&
	put_bin "$U" "$B/memstress" /usr/bin/memstress &&
	put_bin "$U" "$XROOT/usr/bin/xenstore" /usr/bin/xenstore ||
		{ BUILD_WHY="domU image: copying binaries failed"; return 1; }
	for f in $GPU_PROGS; do
		put_bin "$U" "$f" "/usr/lib/xgpu-test/gpu/${f##*/}" ||
			{ BUILD_WHY="domU image: GPU_PROGS: $f"; return 1; }
	done
	for f in read write rm ls list chmod exists watch; do
		ln -sf xenstore "$U/usr/bin/xenstore-$f"
	done
	mkcpio "$U" "$B/domu.cpio" || { BUILD_WHY="domU cpio"; return 1; }

	# ---- Dom0 image
	local D=$IMG/dom0 X=/usr/lib/xen-4.17/bin
	skeleton "$D" || { BUILD_WHY="dom0 skeleton"; return 1; }
	# /init; the parts it sources go to /opt/xgpu (below)
	install -m 0755 tests/xen/dom0-init.sh "$D/init"
	put_bin "$D" /bin/dash /usr/bin/dash || { BUILD_WHY="dash"; return 1; }
	ln -sf dash "$D/usr/bin/sh"
	for f in xl xenstored xenconsoled xenconsole xen-init-dom0 \
		libxl-save-helper; do
		put_bin "$D" "$XROOT$X/$f" "$X/$f" ||
			{ BUILD_WHY="dom0 image: $X/$f"; return 1; }
	done
	put_bin "$D" "$XROOT/usr/bin/xenstore" /usr/bin/xenstore ||
		{ BUILD_WHY="dom0 image: xenstore"; return 1; }
	for f in read write rm ls list chmod exists watch; do
		ln -sf xenstore "$D/usr/bin/xenstore-$f"
	done
	mkdir -p "$D/lib/modules/xen"
	for f in xen-evtchn xen-privcmd xen-gntdev xen-gntalloc; do
		cp "$XROOT/lib/modules/$KVER/kernel/drivers/xen/$f.ko" \
			"$D/lib/modules/xen/" || { BUILD_WHY="module $f"; return 1; }
	done
	cp "$XROOT/lib/modules/$KVER/kernel/drivers/xen/xenfs/xenfs.ko" \
		"$D/lib/modules/xen/" || { BUILD_WHY="module xenfs"; return 1; }
	# net-chain: a network card for Dom0 (QEMU's e1000 on its user
	# network) and the key of the daemon this host runs (CHAIN_PORT)
	mkdir -p "$D/lib/modules/net" "$D/etc/xgpu"
	cp "$XROOT/lib/modules/$KVER/kernel/drivers/net/ethernet/intel/e1000/e1000.ko" \
		"$D/lib/modules/net/" || { BUILD_WHY="module e1000"; return 1; }
	echo "dom0 $(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$B/chain.psk"
	echo $((20000 + RANDOM % 40000)) >"$B/chain.port"
	CHAIN_PORT=$(cat "$B/chain.port")
	chmod 600 "$B/chain.psk"
	install -m 0600 "$B/chain.psk" "$D/etc/xgpu/chain.psk"
	# xgpu's own pieces: its packages, installed by the packages step
	# (dpkg -i), with the libraries their programs need
	put_dpkg "$D" && cp "$DEB_BACKEND" "$DEB_GUEST" "$D/opt/xgpu/debs/" ||
		{ BUILD_WHY="dom0 image: dpkg and the packages"; return 1; }
	for f in "$B"/debx/usr/sbin/* "$B"/debx/usr/lib/*/xgpu/lib*.so.1; do
		[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
		put_libs "$D" "$f" ||
			{ BUILD_WHY="dom0 image: the libraries of $f"; return 1; }
	done
	# the daemon's CUDA driver: the fake of the tests (no GPU here)
	put_bin "$D" "$O/tests/fakecuda/libcuda.so.1" "$FAKECUDA" ||
		{ BUILD_WHY="dom0 image: the fake CUDA driver"; return 1; }
	# the daemon dlopens libxenstore.so.4 (xenstore watches need its
	# reader thread); xl's closure has it too, but do not count on that
	f=$(ldconfig -p 2>/dev/null | sed -n 's/.*libxenstore\.so\.4 (libc6,x86-64) => //p' | head -n 1)
	[ -n "$f" ] || f=/usr/lib/x86_64-linux-gnu/libxenstore.so.4
	put_bin "$D" "$f" /usr/lib/x86_64-linux-gnu/libxenstore.so.4 ||
		{ BUILD_WHY="dom0 image: libxenstore.so.4 ($f)"; return 1; }
	# ...and must not export the static copies' symbols, or that
	# library's own calls would bind to them
	if nm -D --defined-only "$O/bin/xen-gpubackd" |
		grep -qE ' (xs_|xentoolcore|xentoollog|xengnttab|xenevtchn)'; then
		BUILD_WHY="xen-gpubackd exports Xen library symbols (nm -D)"
		return 1
	fi
	mkdir -p "$D/opt/xgpu"
	install -m 0755 tests/xen/uevent-helper.sh "$D/opt/xgpu/uevent-helper"
	# the parts /init sources: its helpers and its steps
	for f in tests/xen/dom0-*.sh; do
		[ "$f" = tests/xen/dom0-init.sh ] && continue
		install -m 0644 "$f" "$D/opt/xgpu/${f##*/}" ||
			{ BUILD_WHY="dom0 image: $f"; return 1; }
	done
	put_bin "$D" "$B/xbench" /usr/bin/xbench &&
	put_bin "$D" "$B/memstress" /usr/bin/memstress ||
		{ BUILD_WHY="dom0 image: guest library / xbench"; return 1; }
	# debug: extra programs for DEBUG_CMD (with their libraries)
	for f in ${DEBUG_FILES:-}; do
		put_bin "$D" "$f" "/usr/bin/${f##*/}" ||
			{ BUILD_WHY="DEBUG_FILES: $f"; return 1; }
	done
	mkdir -p "$D/boot"
	cp "$B/vmlinux" "$D/boot/vmlinux" && cp "$B/domu.cpio" "$D/boot/domu.cpio" ||
		{ BUILD_WHY="dom0 image: domU kernel"; return 1; }
	cat >"$D/etc/xgpu-test.conf" <<-EOF
		DOMU_MEM=$DOMU_MEM
		XGPUBACKD_OPTS='$XGPUBACKD_OPTS'
		FAKECUDA=$FAKECUDA
		XBENCH_ARGS='$XBENCH_ARGS'
		VCPU_S=$VCPU_S
		XEN_SCHED=$XEN_SCHED
		DEBUG_MANUAL_ATTACH=$DEBUG_MANUAL_ATTACH
		HAVE_KMOD=$HAVE_KMOD
		DEADLINE=$((TIMEOUT - 40))
		PLATFORM_S=$PLATFORM_S
		STRESS_ONLY=$STRESS_ONLY
		DEBUG_CMD='${DEBUG_CMD:-}'
		CHAIN_ADDR=10.0.2.2:$CHAIN_PORT
		XGPUB_XENSTORE='$XGPUB_XENSTORE'
		STEPS=$XEN_STEPS
		GPU_PROGS='$(for f in $GPU_PROGS; do printf '%s ' "${f##*/}"; done)'
	EOF
	mkcpio "$D" "$B/dom0.cpio" || { BUILD_WHY="dom0 cpio"; return 1; }
	return 0
}

BUILD_WHY=
T0=$(date +%s)
if [ "$PREBUILT" = 1 ]; then
	for f in xen vmlinux dom0.cpio chain.psk chain.port; do
		[ -s "$B/$f" ] || { fail build "PREBUILT=1 but $B/$f is missing"; finish; }
	done
	note "prebuilt images in $B"
elif build_all; then
	pass "build ($(($(date +%s) - T0)) s; dom0.cpio $(($(stat -c %s "$B/dom0.cpio") >> 20)) MiB, domu.cpio $(($(stat -c %s "$B/domu.cpio") >> 20)) MiB)"
else
	fail build "$BUILD_WHY (log: $BUILD_LOG)"
	tailof "$BUILD_LOG"
	finish
fi
[ "$BUILD_ONLY" = 1 ] && finish

# ---- (c) boot -------------------------------------------------------------------

LOG=$W/serial.log

# the serial stream with host seconds since qemu start in front of each line
stamp() {
	local t0=${EPOCHREALTIME/./} line now
	while IFS= read -r line || [ -n "$line" ]; do
		now=${EPOCHREALTIME/./}
		now=$(((now - t0) / 1000))
		line=${line//$'\r'/}
		printf '%4d.%03d %s\n' $((now / 1000)) $((now % 1000)) "$line"
	done
}

# the steps as Dom0 reports them, while the run goes on (one short line
# each; the verdict at the end lists them again, with why)
progress() {
	grep -a --line-buffered -E 'XGPU-TEST-BEGIN|XGPU-STEP (PASS|FAIL|SKIP)' |
		sed -u -e 's/^ *\([0-9.]*\) .*XGPU-TEST-BEGIN.*/xen: [\1 s] Dom0 \/init started/' \
			-e 's/^ *\([0-9.]*\) XGPU-STEP \(PASS\|FAIL\|SKIP\) \([^ :]*\).*/xen: [\1 s] \3: \2/'
}

boot() {
	local limit=$1
	note "booting (qemu TCG, timeout ${limit}s, log $LOG)"
	: >"$LOG"
	# shellcheck disable=SC2206
	local cmd=(timeout --kill-after=10 "$limit" $QEMU
		${QEMU_DATA:+-L "$QEMU_DATA"} -accel tcg -cpu "$CPU" -smp "$SMP" -m "$QEMU_MEM"
		-machine pc -nodefaults -display none -monitor none
		-netdev user,id=n0 -device e1000,netdev=n0
		-serial stdio -no-reboot
		-kernel "$B/xen"
		-append "console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all dom0_mem=$DOM0_MEM,max:$DOM0_MEM bootscrub=0${XEN_SCHED:+ sched=$XEN_SCHED}"
		-initrd "$B/vmlinux console=hvc0 earlyprintk=xen,$B/dom0.cpio")
	echo "# ${cmd[*]}" >"$LOG"
	if [ "$VERBOSE" = 1 ]; then
		"${cmd[@]}" </dev/null 2>&1 | stamp | tee -a "$LOG"
	else
		"${cmd[@]}" </dev/null 2>&1 | stamp | tee -a "$LOG" | progress
	fi
	QEMU_RC=${PIPESTATUS[0]}
}

# a crash of Xen or Dom0 before the test began (the only case retried)
early_crash() {
	grep -q 'XGPU-TEST-BEGIN' "$LOG" && return 1
	grep -qE 'Kernel panic|Hardware Dom0 crashed|Panic on CPU|Attempted to kill init|FATAL PAGE FAULT|Reboot in five seconds' "$LOG"
}

# net-chain: the GPU host's daemon, here on the fake driver, listening
# where QEMU's user network takes Dom0's 10.0.2.2:CHAIN_PORT
CHAIN_PID=
if [ -f "$B/chain.psk" ] && [ -f "$B/chain.port" ]; then
	fake=${CHAIN_DRIVER:-$O/tests/fakecuda/libcuda.so.1}
	case $fake in /*) ;; *) fake=$PWD/$fake ;; esac
	"$O/bin/xen-gpubackd" --listen "tcp:127.0.0.1:$(cat "$B/chain.port")" \
		--tls-psk "$B/chain.psk" --control "$W/chain-ctl.sock" \
		--foreground --driver "$fake" \
		--jit-cache none --cgroup none --worker-user root \
		>"$W/chain-host.log" 2>&1 &
	CHAIN_PID=$!
fi
T0=$(date +%s)
boot "$TIMEOUT"
[ -n "$CHAIN_PID" ] && kill "$CHAIN_PID" 2>/dev/null
BOOT_S=$(($(date +%s) - T0))
if [ "$RETRY" = 1 ] && early_crash; then
	why=$(grep -m1 -E 'Kernel panic|Hardware Dom0 crashed|Panic on CPU|Attempted to kill init|FATAL PAGE FAULT' "$LOG" | cut -c1-160)
	cp "$LOG" "$W/serial-crashed.log"
	left=$((BUDGET - ($(date +%s) - T_START)))
	[ "$left" -lt "$TIMEOUT" ] && limit=$left || limit=$TIMEOUT
	echo "RETRY boot: Xen/Dom0 crashed before the test began ($why); log kept in $W/serial-crashed.log; booting once more (timeout ${limit}s)"
	T0=$(date +%s)
	boot "$limit"
	BOOT_S=$(($(date +%s) - T0))
fi

# ---- (d) verdict ------------------------------------------------------------------

set +e +o pipefail

if grep -q 'XGPU-TEST-BEGIN' "$LOG"; then
	pass "boot (Xen + Dom0 /init at $(grep -m1 'XGPU-TEST-BEGIN' "$LOG" | awk '{print $1}') s)"
else
	why="Dom0 /init never started"
	grep -qE 'Kernel panic|Hardware Dom0 crashed|Panic on CPU' "$LOG" &&
		why="$why: $(grep -m1 -E 'Kernel panic|Hardware Dom0 crashed|Panic on CPU' "$LOG" | cut -c10-150)"
	[ "$QEMU_RC" = 124 ] && why="$why (qemu timed out after ${TIMEOUT}s)"
	fail boot "$why"
fi

STEPS="dom0-xen packages domu-boot platform hotplug domu1-basic domu2-basic vcpu-coord \
hostile-xenstore hostile-ring hostile-handles hostile-grants hostile-geometry hostile-blobs \
hostile-xsflood hostile-flood hostile-neighbour save-checkpoint save-restore restore-attach migrate-local \
list destroy-busy measure backend-restart unbind-busy net-chain grant-budget same-domain teardown"
[ "$XEN_STEPS" = chain ] &&
	STEPS="dom0-xen packages domu-boot hotplug net-chain teardown"
for s in $STEPS; do
	line=$(grep -m1 -E "XGPU-STEP (PASS|FAIL|SKIP) $s(:| |$)" "$LOG")
	if [ -z "$line" ]; then
		if grep -q 'XGPU-TEST-BEGIN' "$LOG"; then
			fail "$s" "no marker in the log (Dom0 stopped before it)"
		else
			fail "$s" "not reached (boot failed)"
		fi
		continue
	fi
	rest=${line#*XGPU-STEP }
	case $rest in
	PASS*) pass "${rest#PASS }" ;;
	FAIL*) rest=${rest#FAIL }; fail "${rest%%:*}" "${rest#*: }" ;;
	# cannot run on this machine, with why: neither passed nor failed
	SKIP*) echo "SKIP ${rest#SKIP }" ;;
	esac
done

# net-chain, the host's half: its daemon served Dom0's worker(s) over TLS
if grep -q "XGPU-STEP PASS net-chain" "$LOG"; then
	n=$(grep -c "(dom0 at 127.0.0.1:[0-9]*): connected (net transport" \
		"$W/chain-host.log" 2>/dev/null)
	c=$(grep -o "(dom0 at [0-9.:]*): gone after [0-9]* calls" \
		"$W/chain-host.log" 2>/dev/null |
		awk '{ s += $(NF - 1) } END { print s + 0 }')
	if [ "${n:-0}" -ge 1 ] && [ "${c:-0}" -ge 1 ]; then
		pass "net-chain-host (this host's daemon served $n channel(s) of Dom0's workers over TLS, $c calls)"
	else
		fail net-chain-host "this host's daemon logged no channel of dom0 ($W/chain-host.log)"
	fi
fi

# the measurements: both lines and their ratios (TCG: ratios only mean much)
xl=$(grep -m1 'XBENCH-RESULT xen ' "$LOG" | sed 's/.*XBENCH-RESULT xen //')
ll=$(grep -m1 'XBENCH-RESULT local ' "$LOG" | sed 's/.*XBENCH-RESULT local //')
if [ -n "$xl" ] && [ -n "$ll" ]; then
	echo "measure (emulated CPU; compare ratios, not absolute numbers):"
	printf '    %-22s %12s %12s %10s\n' metric "domU2 (xen)" "dom0 (local)" "xen/local"
	for kv in $xl; do
		k=${kv%%=*}
		v=${kv#*=}
		lv=$(printf '%s\n' $ll | sed -n "s/^$k=//p")
		r=$(awk -v a="$v" -v b="$lv" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
		printf '    %-22s %12s %12s %10s\n' "$k" "$v" "$lv" "$r"
	done
fi

# vcpu-coord: domu2's GPU turns beside a CPU hog on the same physical CPU
if grep -q 'XGPU-VCPU alone ' "$LOG"; then
	echo "vcpu-coord (domu2: 20 ms CPU + 5 ms kernel + sync per turn; domu1 hogs the same physical CPU):"
	ar=$(grep -m1 'XGPU-VCPU alone ' "$LOG" | sed -n 's/.* rate=\([0-9.]*\).*/\1/p')
	printf '    %-8s %6s %6s %7s %8s %8s %8s %9s\n' phase gpu-w vcpu-w boosts turns/s "vs alone" cpu_ms wait_ms
	for p in alone off weights boost both; do
		l=$(grep -m1 "XGPU-VCPU $p " "$LOG") || continue
		v() { printf '%s\n' $l | sed -n "s/^$1=//p"; }
		r=$(v rate)
		printf '    %-8s %6s %6s %7s %8s %8s %8s %9s\n' "$p" "$(v gpu_weight)" \
			"$(v vcpu_weight)" "$(v boosts)" "$r" \
			"$(awk -v a="$r" -v b="$ar" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')" \
			"$(v cpu_ms)" "$(v wait_ms)"
	done
fi

if grep -q 'XGPU-RESULT' "$LOG"; then
	:
elif [ "$QEMU_RC" = 124 ] || [ "$QEMU_RC" = 137 ]; then
	fail poweroff "qemu was killed after ${TIMEOUT}s (Dom0 never powered off)"
else
	fail poweroff "Dom0 never printed its RESULT line (qemu exit $QEMU_RC)"
fi

note "qemu ran ${BOOT_S}s; whole run $(($(date +%s) - T_START))s; serial log: $LOG"
if [ "$nfail" -gt 0 ]; then
	echo "---- last 40 lines of $LOG"
	tail -n 40 "$LOG"
fi
finish
