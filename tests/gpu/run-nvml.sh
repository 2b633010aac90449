#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NVML in a guest on the real GPU: nvidia-smi, PyTorch and pynvml with
# xgpu's libnvidia-ml.so.1 and libcuda.so.1 (LD_LIBRARY_PATH) against a
# backend started here with --quota-mb QUOTA on the host's driver, while a
# process of this user holds HOLD MiB through xgpu.  Checks:
#   - nvidia-smi (the default table), -L, -q and --query-gpu /
#     --query-compute-apps exit 0 and print no "ERR!";
#   - the name and UUID are those native nvidia-smi shows for GPU 0;
#   - memory.total is the quota, memory.used what the holder holds plus
#     its context's charge (--ctx-charge-kb, CTX_MB MiB: natively too a
#     process's context takes device memory that nvidia-smi counts),
#     utilization.gpu a number from 0 to 100;
#   - the holder is among the compute apps, by its pid;
#   - torch.cuda.device_count() is 1 (skipped without PyTorch), and
#     pynvml (skipped where it cannot be imported) sees the same.
# Prints PASS/FAIL/SKIP lines and "N passed, M failed"; exit 0 when all
# passed.  On a machine without an NVIDIA GPU: one SKIP line, exit 0.
#
#   tests/gpu/run-nvml.sh [--xgpu-lib DIR] [--backend PATH] [--out DIR]
#                         [--quota-mb N] [--hold-mb N]
#   (defaults: build/lib, build/bin/xen-gpubackd, a new /tmp folder,
#   4096, 512)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$ROOT/build/lib BACKEND=$ROOT/build/bin/xen-gpubackd OUT=
QUOTA=4096 HOLD=512 CTX_MB=524
while [ $# -gt 0 ]; do
	case $1 in
	--xgpu-lib) LIB=$2; shift ;;
	--backend) BACKEND=$2; shift ;;
	--out) OUT=$2; shift ;;
	--quota-mb) QUOTA=$2; shift ;;
	--hold-mb) HOLD=$2; shift ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
USED=$((HOLD + CTX_MB))
if ! timeout 30 nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP nvml: no NVIDIA GPU on this machine"
	exit 0
fi
case $LIB in /*) ;; *) LIB=$PWD/$LIB ;; esac
case $BACKEND in /*) ;; *) BACKEND=$PWD/$BACKEND ;; esac
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/xgpu-nvml.XXXXXX)
mkdir -p "$OUT"
npass=0 nfail=0
pass() { echo "PASS $*"; npass=$((npass + 1)); }
fail() { echo "FAIL $*"; nfail=$((nfail + 1)); }
finish() {
	echo "outputs in $OUT"
	echo "$npass passed, $nfail failed"
	[ "$nfail" -eq 0 ]
	exit $?
}
for f in "$LIB/libcuda.so.1" "$LIB/libnvidia-ml.so.1" "$BACKEND"; do
	[ -e "$f" ] || { fail "setup: $f is missing (make all)"; finish; }
done

# the host driver's libcuda.so.1, never xgpu's
DRV=
for d in $(ldconfig -p | awk '$1 == "libcuda.so.1" { print $NF }') \
	/usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1; do
	[ -e "$d" ] || continue
	[ "$(readlink -f "$d")" = "$(readlink -f "$LIB/libcuda.so.1")" ] &&
		continue
	DRV=$d
	break
done
[ -n "$DRV" ] || { fail "setup: no host libcuda.so.1"; finish; }

# what native nvidia-smi says of GPU 0 (the backend's default --gpu)
native=$(nvidia-smi -i 0 --query-gpu=name,uuid --format=csv,noheader)
NAME=${native%%, *}
UUID=${native##*, }
echo "native GPU 0: $NAME ($UUID)"

T=$(mktemp -d /tmp/xgpu-nvml-sock.XXXXXX)
SOCK=$T/xgpu.sock
# These scripts test other things than the pageable-memory refusal: on a
# host whose driver lets kernels reach pageable host memory (open kernel
# modules with HMM, or ATS) the daemon refuses to start without
# --allow-pageable-access, so it is passed whenever the daemon knows it.
PAGEABLE_OPT=$("$BACKEND" --help 2>/dev/null | grep -o -m1 -- --allow-pageable-access)
# shellcheck disable=SC2086 # empty or one word
"$BACKEND" --local "$SOCK" --control none --foreground --driver "$DRV" \
	--quota-mb "$QUOTA" --ctx-charge-kb $((CTX_MB * 1024)) $PAGEABLE_OPT \
	>"$OUT/backend.log" 2>&1 &
BPID=$!
HPID=
# shellcheck disable=SC2317 # runs from the EXIT trap
cleanup() {
	[ -n "$HPID" ] && kill "$HPID" 2>/dev/null
	kill "$BPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
for _ in $(seq 100); do
	[ -S "$SOCK" ] && break
	sleep 0.1
done
[ -S "$SOCK" ] || { fail "backend: no socket after 10 s"; finish; }

G() { XGPU_SOCKET=$SOCK LD_LIBRARY_PATH=$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }

# a process of this user holding HOLD MiB through xgpu's libcuda (not
# through G: $! must be python's own pid)
XGPU_SOCKET=$SOCK LD_LIBRARY_PATH=$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	python3 -c '
import ctypes, sys, time
cu = ctypes.CDLL("libcuda.so.1")
dev, ctx, p = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
assert cu.cuInit(0) == 0
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(int(sys.argv[1]) << 20)) == 0
print("held", flush=True)
time.sleep(120)
' "$HOLD" >"$OUT/holder.out" 2>&1 &
HPID=$!
for _ in $(seq 100); do
	grep -q held "$OUT/holder.out" && break
	sleep 0.1
done
grep -q held "$OUT/holder.out" ||
	{ fail "holder: $(tail -n 3 "$OUT/holder.out")"; finish; }

# smi NAME ARGS...: run nvidia-smi through xgpu; its output in OUT/NAME
smi() {
	local name=$1 rc
	shift
	G timeout 60 nvidia-smi "$@" >"$OUT/$name.out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "nvidia-smi $*: exit $rc"
		tail -n 5 "$OUT/$name.out" | sed 's/^/    /'
		return 1
	fi
	if grep -q 'ERR!' "$OUT/$name.out"; then
		fail "nvidia-smi $*: ERR! in its output"
		grep -m 5 'ERR!' "$OUT/$name.out" | sed 's/^/    /'
		return 1
	fi
	return 0
}

if smi table; then
	if grep -qF "${NAME:0:20}" "$OUT/table.out" &&
		grep -q "${QUOTA}MiB" "$OUT/table.out"; then
		pass "nvidia-smi (name, ${QUOTA}MiB in the table)"
	else
		fail "nvidia-smi: the name or ${QUOTA}MiB is missing"
		sed 's/^/    /' "$OUT/table.out" | head -n 30
	fi
fi
cat "$OUT/table.out"

if smi list -L; then
	if grep -qF "GPU 0: $NAME (UUID: $UUID)" "$OUT/list.out"; then
		pass "nvidia-smi -L"
	else
		fail "nvidia-smi -L: $(head -n 2 "$OUT/list.out")"
	fi
fi

if smi query --query-gpu=name,uuid,memory.total,memory.used,utilization.gpu \
	--format=csv,noheader,nounits; then
	IFS=, read -r qn qu qt qused qutil <"$OUT/query.out"
	qu=${qu# } qt=${qt# } qused=${qused# } qutil=${qutil# }
	why=
	[ "$qn" = "$NAME" ] || why="name '$qn' is not '$NAME'"
	[ -z "$why" ] && [ "$qu" != "$UUID" ] && why="uuid '$qu' is not '$UUID'"
	[ -z "$why" ] && [ "$qt" != "$QUOTA" ] &&
		why="memory.total $qt MiB, quota $QUOTA"
	[ -z "$why" ] && [ "$qused" != "$USED" ] &&
		why="memory.used $qused MiB, held $HOLD + context $CTX_MB"
	[ -z "$why" ] && ! { [ "$qutil" -ge 0 ] && [ "$qutil" -le 100 ]; } \
		2>/dev/null && why="utilization.gpu '$qutil'"
	if [ -z "$why" ]; then
		pass "nvidia-smi --query-gpu ($(cat "$OUT/query.out"))"
	else
		fail "nvidia-smi --query-gpu: $why"
	fi
fi

if smi apps --query-compute-apps=pid,process_name,used_memory \
	--format=csv,noheader,nounits; then
	if grep -q "^$HPID, .*, $USED\$" "$OUT/apps.out"; then
		pass "nvidia-smi --query-compute-apps (pid $HPID, $USED MiB)"
	else
		fail "nvidia-smi --query-compute-apps: no '$HPID, ..., $USED'"
		sed 's/^/    /' "$OUT/apps.out" | head -n 5
	fi
fi

if smi q -q; then
	pass "nvidia-smi -q ($(grep -c 'N/A' "$OUT/q.out") N/A fields)"
fi

if python3 -c 'import torch' 2>/dev/null; then
	n=$(G timeout 120 python3 -c \
		'import torch; print(torch.cuda.device_count())' 2>"$OUT/torch.err")
	if [ "$n" = 1 ]; then
		pass "torch.cuda.device_count() = 1"
	else
		fail "torch.cuda.device_count(): '$n'"
		tail -n 5 "$OUT/torch.err" | sed 's/^/    /'
	fi
else
	echo "SKIP torch: no PyTorch for python3 here"
fi

if python3 -c 'import pynvml' 2>/dev/null; then
	if G timeout 60 python3 - "$NAME" "$QUOTA" "$USED" "$HPID" \
		>"$OUT/pynvml.out" 2>&1 <<'EOF'
import sys
import pynvml as n
name, quota, hold, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n.nvmlInit()
assert n.nvmlDeviceGetCount() == 1, n.nvmlDeviceGetCount()
h = n.nvmlDeviceGetHandleByIndex(0)
got = n.nvmlDeviceGetName(h)
got = got.decode() if isinstance(got, bytes) else got
assert got == name, got
m = n.nvmlDeviceGetMemoryInfo(h)
assert m.total >> 20 == quota and m.used >> 20 == hold, (m.total, m.used)
u = n.nvmlDeviceGetUtilizationRates(h)
assert 0 <= u.gpu <= 100, u.gpu
ps = n.nvmlDeviceGetComputeRunningProcesses(h)
assert any(p.pid == pid for p in ps), [p.pid for p in ps]
try:
    n.nvmlDeviceGetTemperature(h, 0)
    raise AssertionError("a temperature")
except n.NVMLError_NotSupported:
    pass
n.nvmlShutdown()
print("pynvml ok:", got, m.total >> 20, m.used >> 20, u.gpu, len(ps))
EOF
	then
		pass "pynvml ($(tail -n 1 "$OUT/pynvml.out"))"
	else
		fail "pynvml"
		tail -n 5 "$OUT/pynvml.out" | sed 's/^/    /'
	fi
else
	echo "SKIP pynvml: not importable here"
fi

kill -0 "$BPID" 2>/dev/null || fail "backend: exited during the tests"
finish
