#!/bin/sh
# SPDX-License-Identifier: MIT
#
# coverage.sh LIB: the coverage table of the guest library, from the build.
#
# Every name LIB exports, marked
#   forwarded   its code reaches a call to the worker (xgpulib_call_*,
#               _post_*, _submit_*: the generated stubs of
#               shared-ring/xgpu_calls.def); it may also answer some
#               cases itself
#   guest       answered in the guest library alone (device properties,
#               error strings, version aliases of guest-only calls, ...)
#   refused     a weak stub: CUDA_ERROR_NOT_SUPPORTED, with the reason
# found from the library's own machine code (objdump's direct calls and
# jumps, and the addresses of stubs taken; the call graph is followed
# through the library), and printed as
# a Markdown table on stdout.  `make coverage` writes docs/COVERAGE.md.
set -eu
LIB=${1:?usage: coverage.sh build/lib/libcuda.so.1}

nm -D --defined-only "$LIB" | awk '$2 == "T" || $2 == "W" {print $3, $2}' |
	sort >"${TMPDIR:-/tmp}/xgpu-cov-exports.$$"
objdump -d --no-show-raw-insn "$LIB" |
	awk '
	/^[0-9a-f]+ <[^>]+>:$/ {
		f = $2; gsub(/[<>:]/, "", f); sub(/@plt$/, "", f)
		next
	}
	# a stub whose address is taken (handed to a shared helper) counts
	# as called
	f != "" && ($0 ~ /\tcall/ || $0 ~ /\tjmp/ ||
		    $0 ~ /\tlea.*<xgpulib_(call|post|submit)_/) &&
	    $0 ~ /<[^>]+>/ {
		t = $0; sub(/.*</, "", t); sub(/>.*/, "", t)
		sub(/\+0x[0-9a-f]+$/, "", t); sub(/@plt$/, "", t)
		sub(/@@?[A-Za-z0-9_.]+$/, "", t)
		if (t != f)
			print f, t
	}' | sort -u >"${TMPDIR:-/tmp}/xgpu-cov-edges.$$"

awk -v EXPORTS="${TMPDIR:-/tmp}/xgpu-cov-exports.$$" '
function reason(n,    b, sfx) {
	# an old ABI whose newer form is served: cuMemAlloc -> cuMemAlloc_v2
	b = n; sfx = ""
	if (b ~ /_(ptsz|ptds)$/) {
		sfx = substr(b, length(b) - 4)
		b = substr(b, 1, length(b) - 5)
	}
	if ((b "_v2" sfx) in kind && kind[b "_v2" sfx] == "T")
		return "an old ABI of `" b "_v2" sfx "`, which is served (programs of today ask for that)"
	if (n ~ /^cu(GL|EGL|VDPAU|Graphics|D3D|WGL)/)
		return "graphics interop: the worker has no display or graphics API"
	if (n ~ /^cuIpc/)
		return "IPC between processes: not yet (same-guest sharing planned)"
	if (n ~ /^cuMem(Pool)?(Export|Import)/ || n ~ /Shareable/ ||
	    n == "cuMemGetHandleForAddressRange")
		return "a guest'"'"'s memory never leaves its guest"
	if (n ~ /^cuExternal|^cuImportExternal|^cuDestroyExternal|^cuSignalExternal|^cuWaitExternal/)
		return "external memory and semaphores cross the guest boundary"
	if (n ~ /^cuMulticast/)
		return "multicast objects span GPUs: one GPU per worker (the real driver refuses them too where the device has no multicast: the H100 and H200 tested, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED 0, CUDA_ERROR_NOT_SUPPORTED)"
	if (n ~ /^cuCheckpoint/)
		return "process checkpoint: the GPU state of a process lives in its worker (cuCheckpointProcessGetState of the program itself is served)"
	if (n ~ /^cu(TexRef|SurfRef|ModuleGetTexRef|ModuleGetSurfRef|ParamSetTexRef)/)
		return "legacy texture and surface references: not yet"
	if (n == "cuDeviceGetNvSciSyncAttributes")
		return "NvSciSync (NVIDIA DRIVE and Tegra): an attribute list of the guest'"'"'s NvSciSync library cannot be filled in the worker"
	if (n ~ /^cuLink/)
		return "JIT linking of several images: not yet"
	if (n ~ /^cuGraph.*ExternalSemaphores/)
		return "external semaphores cross the guest boundary"
	if (n ~ /^cuGraph/)
		return "this graph call or node kind: not yet"
	if (n ~ /^cu(Ctx|Device)(Enable|Disable|Can)Peer|^cuMemcpyPeer|Peer/)
		return "peer access: one GPU per worker"
	if (n ~ /^cu(Tensor|Occupancy)/)
		return "not yet"
	if (n ~ /^cuProfiler/)
		return "the profiler of the worker: not exposed"
	if (n ~ /^cuMemRangeGetAttribute/)
		return "managed range attributes: not yet"
	return "not yet"
}
BEGIN {
	while ((getline l < EXPORTS) > 0) {
		split(l, a, " ")
		kind[a[1]] = a[2]
		names[++n] = a[1]
	}
}
{ adj[$1] = adj[$1] " " $2 }
END {
	print "| name | status | note |"
	print "|---|---|---|"
	for (i = 1; i <= n; i++) {
		nm = names[i]
		if (kind[nm] == "W") {
			print "| `" nm "` | refused | " reason(nm) " |"
			nref++
			continue
		}
		# breadth first through the library, stopping at the wire
		delete seen; delete q
		qh = 1; qt = 1; q[1] = nm; seen[nm] = 1; fwd = 0; old32 = 0
		while (qh <= qt && !fwd) {
			cur = q[qh++]
			m = split(adj[cur], t, " ")
			for (j = 1; j <= m; j++) {
				if (t[j] == "xgpulib_old_abi_32bit")
					old32 = 1
				if (t[j] ~ /^xgpulib_(call|post|submit)_[A-Z]/) {
					fwd = 1
					break
				}
				if (!(t[j] in seen)) {
					seen[t[j]] = 1
					q[++qt] = t[j]
				}
			}
		}
		if (fwd) {
			print "| `" nm "` | forwarded | |"
			nfwd++
		} else {
			print "| `" nm "` | guest | " (old32 ? "the memory ABI of " \
			      "32-bit pointers and sizes (before CUDA 3.2): " \
			      "CUDA_ERROR_INVALID_CONTEXT, as the real driver " \
			      "answers in a context of the current API" : "") " |"
			ngst++
		}
	}
	printf "\n%d names: %d forwarded, %d answered in the guest, %d refused.\n",
	       n, nfwd, ngst, nref
}' "${TMPDIR:-/tmp}/xgpu-cov-edges.$$"
rm -f "${TMPDIR:-/tmp}/xgpu-cov-exports.$$" "${TMPDIR:-/tmp}/xgpu-cov-edges.$$"
