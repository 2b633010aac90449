#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The nested-Xen chain on a GPU machine: a CUDA program in a Xen DomU
# reaches the machine's real GPU through xgpu.  The machine with the GPU
# has no Xen and no QEMU, and the development machine has no GPU, so the
# images and QEMU are packed on the development machine and booted on the
# GPU machine:
#
#   tests/xen/gpu-chain.sh pack DIR [PROG...]    (development machine, root)
#   tests/xen/gpu-chain.sh run DIR OUT           (GPU machine, root)
#
# pack builds the nested-Xen images of tests/xen/run.sh with XEN_STEPS=chain
# (Dom0 brings Xen, two PV DomUs and xgpu's daemon up, then only net-chain
# and teardown) and the GPU test programs PROG... (default $DEFAULT_PROGS,
# from $O/gpu: make -C tests/gpu O=$PWD/$O/gpu) in the DomU image, and
# writes to DIR: the images (xz), QEMU with the libraries and firmware it
# loads, and the programs.  DIR must fit what the GPU machine is sent.
#
# run, on the GPU machine: runs each program natively, starts a daemon on
# the machine's own driver at 127.0.0.1:PORT (the key in the Dom0 image),
# boots Xen under QEMU (TCG) with the packed QEMU, where Dom0's daemon
# loads xgpu's own libcuda.so.1 as its driver (--remote-driver) and reaches
# that daemon over TLS on QEMU's user network; the DomU runs each program:
#
#   DomU program -> xen-gpufront -> ring -> Dom0 worker -> xgpu's
#   libcuda.so.1 -> TLS (QEMU user net) -> the GPU machine's worker -> GPU
#
# A program passes when both runs end with "PASS <prog>", exit 0 and give
# the same output without TIME lines (its digest: the DomU reports it
# through xenstore, Dom0 prints it to the serial log); its PASS line has
# the seconds it took in the DomU and natively, and their ratio (the
# DomU's CPUs are emulated: a correctness test, the ratio is reported).  run.sh's own
# steps are checked too.  Prints "PASS x" / "FAIL x: why" lines, then
# "N passed, M failed"; exit 0 only when nothing failed.  Without an
# NVIDIA GPU, run prints one SKIP line and exits 0.  OUT gets the native
# outputs, run.sh's log, the serial log and the GPU host daemon's log.
#
# Knobs: O (build folder, default build), TIMEOUT (QEMU's limit in run,
# seconds, default 480; the default programs take about 330 s in QEMU on
# an H200 machine).

set -u
set -o pipefail

ROOT=$(pwd)
O=${O:-build}
case $O in /*) ;; *) O=$ROOT/$O ;; esac
W=$O/xen-gpu
# programs of tests/gpu that need no library beyond the C++ runtime (the
# DomU image holds them and their ldd closure; cuBLAS, cuFFT and NVRTC
# are hundreds of MB) and that the network transport serves (it refuses
# managed memory, host functions, pinned memory the GPU maps and
# notifications: README "Over the network"; graphs, graphnodes, hostfn,
# managed, managedvar, hostreg, ctxmisc, shareable, driverext, broad,
# cappage and drvapi use them).  Under TCG most take 2-10 s in the DomU,
# arrays and the broad2 family 50-90 s: broad2_ptds and broad2_cdp (both
# equal to native in the DomU on an H200, 2026-11-28) are left out of the
# default so that a run fits a 10-minute command
DEFAULT_PROGS="vecadd matmul streams memset_dtod globals texture thrust_sort \
forked mempool graphupd vmm tmap surface printf_dev gpaver arrays \
legacylaunch greenctx capmark broad2 oldabi"

usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
	exit 2
}

[ -f tests/xen/run.sh ] || {
	echo "FAIL setup: run me from the repository root"
	exit 1
}

# QEMU, its libraries, its loader and the firmware a PC boot of
# Xen with an e1000 reads, into DIR/qemu
pack_qemu() {
	local q d=$1/qemu lib f
	q=$(command -v qemu-system-x86_64) || return 1
	mkdir -p "$d/lib" "$d/share" || return 1
	cp -L "$q" "$d/qemu-system-x86_64" || return 1
	for lib in $(ldd "$q" | sed -n -e 's/.*=> \(\/[^ ]*\) (0x.*/\1/p'); do
		cp -L "$lib" "$d/lib/" || return 1
	done
	cp -L /lib64/ld-linux-x86-64.so.2 "$d/" || return 1
	# (TCG is a module of Debian's QEMU: QEMU_MODULE_DIR in run)
	mkdir -p "$d/modules" &&
		cp /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so "$d/modules/" ||
		return 1
	for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/kvmvapic.bin \
		/usr/share/qemu/linuxboot_dma.bin /usr/share/qemu/multiboot_dma.bin \
		/usr/lib/ipxe/qemu/efi-e1000.rom; do
		cp -L "$f" "$d/share/" || return 1
	done
}

pack() {
	local dir=$1 p progs=() f
	shift
	[ $# -gt 0 ] || set -- $DEFAULT_PROGS
	for p in "$@"; do
		f=$p
		[ -x "$f" ] || f=$O/gpu/$p
		[ -x "$f" ] || { echo "FAIL pack: no program $p (make -C tests/gpu O=$O/gpu)"; exit 1; }
		progs+=("$f")
	done
	XEN_WORK=$W XEN_STEPS=chain GPU_PROGS="${progs[*]}" BUILD_ONLY=1 \
		O="$O" tests/xen/run.sh || exit 1
	rm -rf "$dir" && mkdir -p "$dir/progs" || exit 1
	for f in xen vmlinux dom0.cpio; do
		xz -T0 -6 -c "$W/build/$f" >"$dir/$f.xz" || exit 1
	done
	cp -p "$W/build/chain.psk" "$W/build/chain.port" "$dir/" || exit 1
	cp "${progs[@]}" "$dir/progs/" || exit 1
	pack_qemu "$dir" || { echo "FAIL pack: QEMU (qemu-system-x86)"; exit 1; }
	# (the programs share their static CUDA runtime: 15 MB -> 1 MB)
	for f in qemu progs; do
		tar -C "$dir" -cf - "$f" | xz -T0 -9 >"$dir/$f.tar.xz" &&
			rm -rf "${dir:?}/$f" || exit 1
	done
	echo "PASS pack ($(du -sm "$dir" | cut -f1) MiB in $dir: ${#progs[@]} programs)"
}

# ---- run ----------------------------------------------------------------------

npass=0
nfail=0
ok() { echo "PASS $*"; npass=$((npass + 1)); }
bad() { echo "FAIL $*"; nfail=$((nfail + 1)); }

# unxz FILE: its contents on stdout (python's lzma where xz is missing)
unxz() {
	if command -v xz >/dev/null; then
		xz -dc "$1"
	else
		python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"
	fi
}

# the digest of a program's output without TIME lines (as the DomU makes it)
digest() { grep -v '^TIME' "$1" | md5sum | cut -d' ' -f1; }

run() {
	local dir=$1 out=$2 p n rc drv line d_rc d_sum d_s d_last want t0 nat_s
	[ -f "$dir/qemu.tar.xz" ] || { echo "FAIL setup: $dir is no pack (tests/xen/gpu-chain.sh pack)"; exit 1; }
	if ! timeout 30 nvidia-smi -L >/dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
		echo "SKIP gpu-chain: no NVIDIA GPU on this machine"
		exit 0
	fi
	mkdir -p "$out" "$W/build" || exit 1
	for f in xen vmlinux dom0.cpio; do
		unxz "$dir/$f.xz" >"$W/build/$f" || { bad "setup: unpacking $f"; exit 1; }
	done
	rm -rf "$W/qemu" "$W/progs"
	for f in qemu progs; do
		unxz "$dir/$f.tar.xz" | tar -C "$W" -xf - ||
			{ bad "setup: unpacking $f"; exit 1; }
	done
	cp -p "$dir/chain.psk" "$dir/chain.port" "$W/build/" || exit 1
	chmod 600 "$W/build/chain.psk"
	drv=$(ldconfig -p | sed -n 's/.*libcuda\.so\.1 (libc6,x86-64) => //p' | head -n 1)
	[ -n "$drv" ] || { bad "setup: no libcuda.so.1 in ldconfig -p"; exit 1; }
	# native runs, on this machine's driver
	for p in "$W"/progs/*; do
		n=${p##*/}
		t0=$(date +%s%N)
		timeout 120 "$p" >"$out/native-$n.out" 2>&1
		echo $? >"$out/native-$n.rc"
		echo $(( ($(date +%s%N) - t0) / 1000000 )) >"$out/native-$n.ms"
	done
	# the nested run: Xen, Dom0, the DomUs under QEMU; Dom0's daemon
	# chained to a daemon on $drv
	local q=$W/qemu
	QEMU_MODULE_DIR=$q/modules PREBUILT=1 XEN_WORK=$W XEN_STEPS=chain O="$O" \
		QEMU="$q/ld-linux-x86-64.so.2 --library-path $q/lib $q/qemu-system-x86_64" \
		QEMU_DATA=$q/share CHAIN_DRIVER=$drv TIMEOUT=${TIMEOUT:-480} \
		tests/xen/run.sh >"$out/run.log" 2>&1
	rc=$?
	cp "$W/serial.log" "$out/serial.log" 2>/dev/null
	cp "$W/chain-host.log" "$out/chain-host.log" 2>/dev/null
	# run.sh's steps, as its own lines
	grep -E '^(PASS|FAIL|SKIP) ' "$out/run.log" | sed 's/^/xen: /'
	[ "$rc" = 0 ] && ok "nested run (tests/xen/run.sh XEN_STEPS=chain: $(tail -n 1 "$out/run.log"))" ||
		bad "nested run: tests/xen/run.sh exit $rc: $(tail -n 1 "$out/run.log")"
	# each program: native and through the chain
	for p in "$W"/progs/*; do
		n=${p##*/}
		want="PASS $n"
		line=$(grep -a -m1 "XGPU-CHAIN-PROG $n " "$W/serial.log" |
			sed "s/.*XGPU-CHAIN-PROG $n //")
		read -r d_rc d_sum d_s d_last <<<"$line"
		nat_s=$(awk -v m="$(cat "$out/native-$n.ms")" 'BEGIN { printf "%.2f", m / 1000 }')
		if [ "$(cat "$out/native-$n.rc")" != 0 ] ||
			[ "$(tail -n 1 "$out/native-$n.out")" != "$want" ]; then
			bad "$n: the native run failed (exit $(cat "$out/native-$n.rc"): $(tail -n 1 "$out/native-$n.out"))"
		elif [ -z "$line" ]; then
			bad "$n: no result from the DomU in the serial log"
		elif [ "$d_rc" != 0 ] || [ "$d_last" != "$want" ]; then
			bad "$n: in the DomU: exit $d_rc, last line '$d_last'"
		elif [ "$d_sum" != "$(digest "$out/native-$n.out")" ]; then
			bad "$n: the DomU's output differs from the native run's (serial.log has the DomU's lines, $out/native-$n.out the native ones)"
		else
			ok "$n (DomU through the chain = native; ${d_s} s in the DomU, $nat_s s native: $(awk -v a="$d_s" -v b="$nat_s" 'BEGIN { if (b > 0) printf "%.0f", a / b; else print "-" }')x, emulated CPUs)"
		fi
	done
	echo "$npass passed, $nfail failed"
	[ "$nfail" = 0 ]
}

case ${1:-} in
pack) [ $# -ge 2 ] || usage; shift; pack "$@" ;;
run) [ $# -eq 3 ] || usage; run "$2" "$3"; exit $? ;;
*) usage ;;
esac
