#!/bin/sh
# Record the worker fuzz target's seed corpus from real requests: the
# integration programs run against the daemon and the fake driver with
# XGPU_FUZZ_RECORD set (each worker writes its requests in the fuzz
# input format, xen-backend/worker/xgpub_record.h), then libFuzzer's merge
# keeps, of what was recorded, the inputs that add coverage to
# tests/fuzz/corpus/worker.
#
#   O=build tests/fuzz/record.sh      (builds what it needs first)
set -u
O=${O:-build}
case $O in /*) ;; *) O=$PWD/$O ;; esac
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
make -s O="$O" all integration-bins || exit 1
make -s O="$O/fuzz" CC="${FUZZ_CC:-clang}" FUZZ=1 SANITIZE= fuzz-build || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xgpu-rec.XXXXXX") || exit 1
mkdir -p "$tmp/rec"
sock=$tmp/xgpu.sock
XGPU_FUZZ_RECORD=$tmp/rec "$O/bin/xen-gpubackd" --local "$sock" \
	--control none --foreground --pinned-mb 48 --jit-cache none \
	--driver "$O/tests/fakecuda/libcuda.so.1" >"$tmp/backend.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do
	[ -S "$sock" ] && break
	sleep 0.1
done
for p in basic ctxmisc arrays graphnodes greenctx legacylaunch devprintf \
	hostreg shareable ipc forked threads; do
	XGPU_SOCKET=$sock XGPU_DATA_MB=1 timeout 60 "$O/tests/$p" \
		>"$tmp/$p.out" 2>&1
	echo "record: $p: exit $? ($(ls "$tmp/rec" | wc -l) files so far)"
done
kill -TERM "$dpid"
wait "$dpid" 2>/dev/null

mkdir -p tests/fuzz/corpus/worker
"$O/fuzz/fuzz/fuzz_worker" -merge=1 -max_len=65536 -timeout=20 \
	tests/fuzz/corpus/worker "$tmp/rec" >"$tmp/merge.log" 2>&1 ||
	{ tail -n 20 "$tmp/merge.log"; exit 1; }
grep -E 'MERGE-OUTER: [0-9]+ new files' "$tmp/merge.log"
echo "record: tests/fuzz/corpus/worker: $(ls tests/fuzz/corpus/worker | wc -l) files, $(du -sk tests/fuzz/corpus/worker | cut -f1) KiB"
rm -rf "$tmp"
