#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Integration tests of the network transport, no GPU needed: the guest
# library connects to `xen-gpubackd --listen tcp:127.0.0.1:PORT` (TLS 1.3
# with pre-shared keys) on this host, the worker runs the fake driver.
#
#   O=build tests/integration/run-net.sh
#
# Prints "PASS name" or "FAIL name: why" per step and, last, exactly
# "N passed, M failed"; exits non-zero if any step failed.

set -u

O=${O:-build}
BACKEND=$O/bin/xen-gpubackd
CLI=$O/bin/xgpu
T=$O/tests
FAKECUDA=$O/tests/fakecuda/libcuda.so.1
case $FAKECUDA in /*) ;; *) FAKECUDA=$PWD/$FAKECUDA ;; esac

TMP=$(mktemp -d "${TMPDIR:-/tmp}/xgpu-net.XXXXXX") || exit 1
LOG=$TMP/backend.log
DPID=
npass=0
nfail=0

# pass, fail, show, summary, need, wait_until, stop_daemon; cleanup on exit
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

need "$BACKEND" "$CLI" "$FAKECUDA" "$T/netcopy" "$T/spin" "$T/arrays" \
	"$T/threads" "$T/devprintf" "$T/legacylaunch" "$T/capmark" "$T/silent" \
	"$T/greenctx" "$T/ipc" "$T/managed" "$T/managedvar" "$T/cappage" \
	"$T/graphnodes"

# keys: alice and bob are the daemon's; mallory has a key of her own
KEY_A=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
KEY_B=202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f
KEY_M=fefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefe
printf '# the daemon'"'"'s keys\nalice %s\nbob %s\n' "$KEY_A" "$KEY_B" \
	>"$TMP/server.psk"
echo "alice $KEY_A" >"$TMP/alice.psk"
echo "bob $KEY_B" >"$TMP/bob.psk"
echo "alice $KEY_M" >"$TMP/alice-wrong.psk"
echo "mallory $KEY_M" >"$TMP/mallory.psk"
chmod 600 "$TMP"/*.psk

DARGS=(--control "$TMP/c.sock" --foreground --driver "$FAKECUDA"
       --jit-cache none --cgroup none --worker-user root)

# ---- start-up checks ---------------------------------------------------------
out=$("$BACKEND" --listen tcp:127.0.0.1:1 "${DARGS[@]}" 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "no unauthenticated" <<<"$out"; then
	pass listen-needs-tls
else
	fail listen-needs-tls "exit $rc: $out"
fi
cp "$TMP/server.psk" "$TMP/open.psk"
chmod 644 "$TMP/open.psk"
out=$("$BACKEND" --listen tcp:127.0.0.1:1 --tls-psk "$TMP/open.psk" \
	"${DARGS[@]}" 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "open.psk" <<<"$out"; then
	pass key-file-mode-refused
else
	fail key-file-mode-refused "exit $rc: $out"
fi

# ---- the daemon, on a free port ------------------------------------------------
PORT=
for _ in $(seq 20); do
	p=$((20000 + RANDOM % 40000))
	: >"$LOG"
	"$BACKEND" --listen "tcp:127.0.0.1:$p" --tls-psk "$TMP/server.psk" \
		"${DARGS[@]}" >"$LOG" 2>&1 &
	DPID=$!
	if wait_until 30 "$DPID" grep -q "listening on tcp" "$LOG"; then
		PORT=$p
		break
	fi
	stop_daemon
done
if [ -z "$PORT" ]; then
	fail daemon "no free port (log: $(tail -2 "$LOG"))"
	summary
	exit 1
fi
URL=tcp://127.0.0.1:$PORT

# net PSKFILE PROG [ARGS...]: a client over the network
net() {
	local psk=$1
	shift
	XGPU_SOCKET=$URL XGPU_TLS_PSK=$psk timeout 60 "$@"
}

if net "$TMP/alice.psk" "$T/netcopy" net >"$TMP/netcopy.out" 2>&1; then
	pass netcopy
else
	fail netcopy "$(grep -m1 FAIL "$TMP/netcopy.out")"
fi

# the same over the channel's one connection (no lanes)
if XGPU_NET_LANES=0 net "$TMP/alice.psk" "$T/netcopy" net \
	>"$TMP/netcopy1.out" 2>&1; then
	pass netcopy-one-connection
else
	fail netcopy-one-connection "$(grep -m1 FAIL "$TMP/netcopy1.out")"
fi

# a lane whose token names no channel is refused by the daemon
before=$(grep -c "lane from" "$LOG")
exec 5<>"/dev/tcp/127.0.0.1/$PORT"
printf 'XGPULANE%032d' 0 >&5
sleep 0.5
exec 5>&-
if [ "$(grep -c "lane from 127.0.0.1.*refused: no channel" "$LOG")" -gt \
     "$before" ] && kill -0 "$DPID" 2>/dev/null; then
	pass lane-bad-token
else
	fail lane-bad-token "no refusal in the log"
fi

bad=
for p in arrays threads devprintf legacylaunch capmark greenctx driverext; do
	net "$TMP/alice.psk" "$T/$p" >"$TMP/$p.out" 2>&1 || bad="$bad $p"
done
if [ -z "$bad" ]; then
	pass programs-over-tls
else
	fail programs-over-tls "failed:$bad"
fi

# managed memory over the network: coherent, its blocks through the data
# area (one connection and with lanes; a host function's blocks with its
# slot's frames), with threads, copies and fork; __managed__ variables
for lanes in 0 4; do
	if XGPU_NET_LANES=$lanes net "$TMP/alice.psk" "$T/managed" \
		>"$TMP/managed-$lanes.out" 2>&1 &&
		grep -q 'coherent mode' "$TMP/managed-$lanes.out" &&
		grep -q 'PASS managed fork' "$TMP/managed-$lanes.out" &&
		grep -q 'PASS managed host function' "$TMP/managed-$lanes.out"; then
		pass "managed-net-lanes-$lanes ($(sed -n 's/^managed: reading //p' "$TMP/managed-$lanes.out"))"
	else
		fail "managed-net-lanes-$lanes" "$(grep -m1 -E 'FAIL|error' "$TMP/managed-$lanes.out")"
		show "$TMP/managed-$lanes.out"
	fi
done
if net "$TMP/alice.psk" "$T/managedvar" >"$TMP/managedvar.out" 2>&1 &&
	grep -q '^PASS managedvar library unload' "$TMP/managedvar.out" &&
	grep -q '^PASS managedvar$' "$TMP/managedvar.out"; then
	pass managedvar-net
else
	fail managedvar-net "$(grep -m1 -E 'FAIL|error' "$TMP/managedvar.out")"
	show "$TMP/managedvar.out"
fi

# copies of host memory in stream captures and graph memcpy nodes: their
# staging buffers are parts of the data area kept for good, whose bytes
# the graphs' host nodes carry (with DONE, or asked for through the slot)
if net "$TMP/alice.psk" "$T/cappage" net >"$TMP/cappage.out" 2>&1; then
	pass cappage-net
else
	fail cappage-net "$(grep -m1 FAIL "$TMP/cappage.out")"
	show "$TMP/cappage.out"
fi
if net "$TMP/alice.psk" "$T/graphnodes" >"$TMP/graphnodes.out" 2>&1; then
	pass graphnodes-net
else
	fail graphnodes-net "$(grep -m1 FAIL "$TMP/graphnodes.out")"
	show "$TMP/graphnodes.out"
fi

# the guest's key is its authenticated identity
net "$TMP/alice.psk" "$T/spin" 3000 >"$TMP/spin.out" 2>&1 &
sp=$!
for _ in $(seq 50); do
	grep -q launched "$TMP/spin.out" && break
	sleep 0.1
done
# (a connection is listed before its worker says whose it is: under the
# address sanitizer on two cores that took longer than the wait above)
for _ in $(seq 100); do
	list=$("$CLI" -s "$TMP/c.sock" list --json 2>&1)
	grep -q '"key": *"net:alice"' <<<"$list" && break
	sleep 0.1
done
if grep -q '"key": *"net:alice"' <<<"$list" &&
   grep -q '"kind": *"net"' <<<"$list"; then
	pass key-is-identity
else
	fail key-is-identity "list: $list"
fi

# IPC handles between two connections of one peer (its processes), and
# not to another peer's
if net "$TMP/alice.psk" "$T/ipc" >"$TMP/ipc.out" 2>&1; then
	pass ipc-same-peer
else
	fail ipc-same-peer "$(tail -n 1 "$TMP/ipc.out")"
fi
if net "$TMP/alice.psk" "$T/ipc" env XGPU_TLS_PSK "$TMP/bob.psk" \
	>"$TMP/ipc-other.out" 2>&1; then
	pass ipc-other-peer
else
	fail ipc-other-peer "$(tail -n 1 "$TMP/ipc-other.out")"
fi

# a client killed mid-call: its worker goes, the daemon stays
kill -KILL $sp 2>/dev/null
wait $sp 2>/dev/null
gone=
for _ in $(seq 40); do
	if grep -q "alice.*gone after" "$LOG"; then
		gone=1
		break
	fi
	sleep 0.1
done
if [ -n "$gone" ] && kill -0 "$DPID" 2>/dev/null; then
	pass killed-client
else
	fail killed-client "no 'gone' line within 4 s"
fi

# authentication: a wrong key, an unknown identity; refused before any
# call, one log line naming the address
for c in wrong:alice-wrong unknown:mallory; do
	name=${c%%:*}
	file=${c#*:}
	before=$(grep -c "refused" "$LOG")
	net "$TMP/$file.psk" "$T/netcopy" >"$TMP/auth-$name.out" 2>&1
	rc=$?
	sleep 0.3
	after=$(grep -c "refused" "$LOG")
	if [ $rc -ne 0 ] && grep -q "no GPU backend" "$TMP/auth-$name.out" &&
	   [ $((after - before)) -eq 1 ] &&
	   grep "refused" "$LOG" | tail -1 | grep -q "127.0.0.1"; then
		pass "auth-$name-key"
	else
		fail "auth-$name-key" "rc $rc, $((after - before)) log lines: $(head -2 "$TMP/auth-$name.out")"
	fi
done

# garbage and a stalled peer lose only their own connection
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
head -c 4096 /dev/urandom >&3
exec 3>&-
exec 4<>"/dev/tcp/127.0.0.1/$PORT"	# says nothing
t0=$(date +%s%N)
if net "$TMP/alice.psk" "$T/netcopy" >"$TMP/after-bad.out" 2>&1 &&
   kill -0 "$DPID" 2>/dev/null; then
	pass bad-peers-lose-alone
else
	fail bad-peers-lose-alone "$(grep -m1 FAIL "$TMP/after-bad.out")"
fi
# the stalled one is closed by the handshake's time limit (5 s)
for _ in $(seq 80); do
	[ $(( ($(date +%s%N) - t0) / 1000000 )) -gt 7000 ] && break
	sleep 0.1
done
if [ "$(grep -c "from 127.0.0.1.*refused" "$LOG")" -ge 4 ]; then
	pass stalled-peer-closed
else
	fail stalled-peer-closed "$(grep refused "$LOG" | tail -3)"
fi
exec 4>&-

# a peer that opens many connections and says nothing holds at most
# 24 of the 64 places of connections not yet known: others still connect
# at once, and the refusals are said in one line a second at most
"$T/silent" 127.0.0.2 127.0.0.1 "$PORT" 64 4 >"$TMP/silent.out" 2>&1 &
SPID=$!
for _ in $(seq 50); do
	grep -q connected "$TMP/silent.out" && break
	sleep 0.1
done
t0=$(date +%s%N)
net "$TMP/alice.psk" "$T/arrays" >"$TMP/beside-silent.out" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
refusals=$(grep -c "from 127.0.0.2:.*refused: 24 connections of this host" "$LOG")
if [ "$rc" = 0 ] && [ "$ms" -lt 3000 ] && [ "$refusals" -ge 1 ] &&
   [ "$refusals" -le 5 ] && grep -q "silent: 64 connected" "$TMP/silent.out"; then
	pass "silent-flood (a client beside 64 silent connections: $ms ms; $refusals refusal line(s))"
else
	fail silent-flood "client exit $rc after $ms ms; $refusals refusal lines; $(cat "$TMP/silent.out"); $(tail -n 2 "$TMP/beside-silent.out")"
fi
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null

# chaining: a second daemon whose driver is xgpu's own guest library,
# reaching the first over the network (as a Dom0 backend without a GPU
# uses a GPU host's): local client -> worker -> TLS -> worker -> driver
LIBDIR=$O/lib
case $LIBDIR in /*) ;; *) LIBDIR=$PWD/$LIBDIR ;; esac
XGPU_SOCKET=$URL XGPU_TLS_PSK=$TMP/alice.psk "$BACKEND" --remote-driver \
	--local "$TMP/chain.sock" --control "$TMP/c2.sock" --foreground \
	--driver "$LIBDIR/libcuda.so.1" --jit-cache none --cgroup none \
	--worker-user root >"$TMP/chain.log" 2>&1 &
CPID=$!
for _ in $(seq 50); do [ -S "$TMP/chain.sock" ] && break; sleep 0.1; done
bad=
XGPU_SOCKET=$TMP/chain.sock timeout 60 "$T/netcopy" >"$TMP/chain-netcopy.out" \
	2>&1 || bad="netcopy"
# (managed memory through the chain: coherent on both hops; managedvar's
# lazily found variables are fetched in no context of the program's)
for p in arrays threads legacylaunch managed managedvar managedvar \
	managedvar; do
	XGPU_SOCKET=$TMP/chain.sock timeout 60 "$T/$p" >"$TMP/chain-$p.out" \
		2>&1 || bad="$bad $p"
done
# synchronizes and blocking pinned copies through the chain: the first
# worker's driver is xgpu's library, whose GPU would write into the
# second worker's memory, never this program's: the first worker waits
# and answers (none answered by the GPU, none asked again after a spin)
for m in turns copies; do
	XGPU_SOCKET=$TMP/chain.sock XGPU_DEBUG=1 timeout 60 "$T/fence" $m 10 \
		>"$TMP/chain-fence-$m.out" 2>&1 || bad="$bad fence-$m"
	fence_counts "$TMP/chain-fence-$m.out" |
		awk 'NR == 1 { n = 1; ok = $1 == 0 && $3 == 0 }
		     END { exit !(n && ok) }' ||
		bad="$bad fence-$m-counts"
done
# device output crosses two workers and still comes in native order (the
# first worker's gate thread waits on events too: the output its replies
# announce is on stdout before the program's synchronize returns)
XGPU_SOCKET=$TMP/chain.sock timeout 60 "$T/devprintf" \
	>"$TMP/chain-devprintf.out" 2>"$TMP/chain-devprintf.err" ||
	bad="$bad devprintf"
printf '%s\n' "host 1" "host 2" "xgpu_fake_printf 1: line 1 of 2" \
	"xgpu_fake_printf 1: line 2 of 2" "host 3" "host 4" \
	"xgpu_fake_printf 2: line 1 of 1" "host 5" "host 6" \
	"xgpu_fake_printf 3: line 1 of 1" "host 7" "host 8" |
	cmp -s - "$TMP/chain-devprintf.out" || bad="$bad devprintf-order"
if [ -z "$bad" ] && grep -q "executor $LIBDIR/libcuda.so.1" "$TMP/chain.log"
then
	pass chain
else
	fail chain "failed: ${bad:-none}; $(tail -2 "$TMP/chain.log")"
fi
grep -h "FAIL" "$TMP"/chain-managedvar.out 2>/dev/null | head -3
kill -TERM $CPID 2>/dev/null
wait $CPID 2>/dev/null

stop_daemon
[ -n "${KEEP_LOG:-}" ] && cp "$LOG" "$KEEP_LOG"
summary
[ "$nfail" -eq 0 ]
