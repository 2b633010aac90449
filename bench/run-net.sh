#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The network transport on the GPU machine, over loopback: copy bandwidth
# (bench/bw) and round trips (bench/rtt) natively, through xgpu's local
# transport and through its network transport (TLS 1.3, pre-shared key),
# all in this one run; then the same through a chain (a second daemon
# whose driver is xgpu's own library, reaching the first over TLS).
#
#   bench/run-net.sh --xgpu-lib DIR --backend PATH --bin DIR [--out DIR]
#                    [--rounds N] [--lanes N]
#
# --lanes: the daemon's --net-lanes (default 8): TLS connections beside
# each channel's own that carry its large copies in parallel.
#
# Targets, judged (a line ends in "ok" or "MISS"): 1 GiB pageable copies
# over the network >= 10 GB/s each way; synchronous 64-byte round trips
# and an idle synchronize over the network within 20 us of native (p50).
# Exit status: 0 every target met, 3 some missed, 2 bad usage or set-up.
set -u
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
LIB= BACKEND= BIN= OUT=/tmp/xgpu-net ROUNDS=3 LANES=8
bench_options "--xgpu-lib=LIB --backend=BACKEND --bin=BIN --out=OUT \
	--rounds=ROUNDS --lanes=LANES" "$@"
mkdir -p "$OUT"
bench_abs LIB BACKEND BIN
bench_need_gpu net
T=$(mktemp -d /tmp/xgpu-net.XXXXXX)
echo "bench $(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$T/psk"
chmod 600 "$T/psk"
PORT=$((20000 + RANDOM % 40000))
URL=tcp://127.0.0.1:$PORT
pageable=$("$BACKEND" --help 2>/dev/null | grep -o -m1 -- --allow-pageable-access)
# shellcheck disable=SC2086 # empty or one word
"$BACKEND" --local "$T/s.sock" --listen "tcp:127.0.0.1:$PORT" \
	--tls-psk "$T/psk" --control "$T/c.sock" --foreground --driver "$DRV" \
	--net-lanes "$LANES" $pageable >"$OUT/backend.log" 2>&1 &
D1=$!
# shellcheck disable=SC2086
XGPU_SOCKET=$URL XGPU_TLS_PSK=$T/psk "$BACKEND" --remote-driver \
	--local "$T/chain.sock" --control "$T/c2.sock" --foreground \
	--driver "$LIB/libcuda.so.1" $pageable >"$OUT/chain.log" 2>&1 &
D2=$!
trap 'kill $D1 $D2 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do
	[ -S "$T/s.sock" ] && [ -S "$T/chain.sock" ] && break
	sleep 0.1
done
[ -S "$T/chain.sock" ] || { echo "ERROR set-up: $(tail -3 "$OUT/backend.log" "$OUT/chain.log")"; exit 2; }

# run WAY PROG SECONDS: one run of PROG natively or through xgpu
run() {
	case $1 in
	native) timeout "$3" "$BIN/$2" ;;
	local) XGPU_SOCKET=$T/s.sock LD_LIBRARY_PATH=$LIB \
		timeout "$3" "$BIN/$2" ;;
	net) XGPU_SOCKET=$URL XGPU_TLS_PSK=$T/psk LD_LIBRARY_PATH=$LIB \
		timeout "$3" "$BIN/$2" ;;
	chain) XGPU_SOCKET=$T/chain.sock LD_LIBRARY_PATH=$LIB \
		timeout "$3" "$BIN/$2" ;;
	esac
}
WAYS="native local net chain"
for r in $(seq "$ROUNDS"); do
	for w in $WAYS; do
		run "$w" bw 300 >"$OUT/bw.$w.$r" 2>&1
		run "$w" rtt 120 >"$OUT/rtt.$w.$r" 2>&1
	done
done
# median over the rounds of a figure: med WAY FILEKIND AWK-SELECT
med() {
	for r in $(seq "$ROUNDS"); do
		awk "$3" "$OUT/$2.$1.$r"
	done | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "nan"}'
}
verdict() { [ "$1" = 1 ] && echo " ok" || echo " MISS"; }
: >"$OUT/net-summary.txt"
say() { echo "$*" | tee -a "$OUT/net-summary.txt"; }
say "copies, GB/s (median of $ROUNDS; $LANES lanes): native / local / net / chain"
for kind in "h2d pageable" "d2h pageable" "h2d pinned" "d2h pinned"; do
	for b in 4194304 67108864 1073741824; do
		set -- $kind
		sel="\$1==\"BW\" && \$2==\"$1\" && \$3==\"$2\" && \$4==$b {print \$5}"
		n=$(med native bw "$sel"); l=$(med local bw "$sel")
		t=$(med net bw "$sel"); c=$(med chain bw "$sel")
		line="$kind $b B: $n / $l / $t / $c (net/native $(awk -v a="$t" -v b="$n" 'BEGIN{printf "%.2f", b ? a/b : 0}'))"
		if [ "$2" = pageable ] && [ "$b" = 1073741824 ]; then
			line="$line (target net >= 10)$(verdict "$(awk -v t="$t" 'BEGIN{print (t >= 10) ? 1 : 0}')")"
		fi
		say "$line"
	done
done
say "round trips, p50 us (median of $ROUNDS): native / local / net / chain"
for name in h2d_64B d2h_64B sync_idle; do
	sel="\$1==\"RTT\" && \$2==\"$name\" {print \$4}"
	n=$(med native rtt "$sel"); l=$(med local rtt "$sel")
	t=$(med net rtt "$sel"); c=$(med chain rtt "$sel")
	say "$name: $n / $l / $t / $c (net - native $(awk -v a="$t" -v b="$n" 'BEGIN{printf "%+.1f", a-b}') us, target <= +20)$(verdict "$(awk -v a="$t" -v b="$n" 'BEGIN{print (a - b <= 20) ? 1 : 0}')")"
done
MISSED=$(grep -c ' MISS$' "$OUT/net-summary.txt")
say "targets missed: $MISSED"
[ "$MISSED" -eq 0 ] || exit 3
