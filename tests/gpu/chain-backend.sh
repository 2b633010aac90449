#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A backend for the GPU harness (--backend) that is a chain of two
# daemons: the one the harness asked for, whose driver is xgpu's own
# libcuda.so.1 (--remote-driver), and behind it a GPU host's daemon on the
# host driver, reached over TLS on loopback.  So every GPU test program
# runs guest library -> worker -> guest library -> TLS -> worker -> GPU.
#
#   XGPU_CHAIN_DAEMON=path/to/xen-gpubackd XGPU_CHAIN_LIB=DIR \
#     tests/gpu/run-gpu-tests.sh --backend tests/gpu/chain-backend.sh ...
#
# The GPU host's daemon logs to $XGPU_CHAIN_LOG (default: beside the
# first daemon's log on stderr).
set -u
D=${XGPU_CHAIN_DAEMON:?set XGPU_CHAIN_DAEMON to xen-gpubackd}
LIB=${XGPU_CHAIN_LIB:?set XGPU_CHAIN_LIB to the folder of xgpu\'s libcuda.so.1}
case " $* " in *" --help "*) exec "$D" --help ;; esac
T=$(mktemp -d /tmp/xgpu-chain.XXXXXX)
echo "chain $(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$T/psk"
chmod 600 "$T/psk"
# the GPU host's daemon: the harness's options but its socket, control
# socket and driver; the first daemon: all but the driver
args=() first=() drv=
while [ $# -gt 0 ]; do
	case $1 in
	--local|--control) first+=("$1" "$2"); shift 2 ;;
	--driver) drv=$2; shift 2 ;;
	*) args+=("$1"); first+=("$1"); shift ;;
	esac
done
PORT=$((20000 + RANDOM % 40000))
"$D" --listen "tcp:127.0.0.1:$PORT" --tls-psk "$T/psk" \
	--control "$T/gpu.sock" --driver "$drv" "${args[@]}" \
	>"${XGPU_CHAIN_LOG:-/dev/stderr}" 2>&1 &
GPUD=$!
for _ in $(seq 50); do [ -S "$T/gpu.sock" ] && break; sleep 0.1; done
# the first daemon, as asked, with xgpu's library as its driver
XGPU_SOCKET=tcp://127.0.0.1:$PORT XGPU_TLS_PSK=$T/psk "$D" --remote-driver \
	"${first[@]}" --driver "$LIB/libcuda.so.1" &
FRONT=$!
trap 'kill $FRONT $GPUD 2>/dev/null; wait; rm -rf "$T"; exit 0' TERM INT
wait $FRONT
kill $GPUD 2>/dev/null
wait
rm -rf "$T"
