#!/bin/sh
# Install what xgpu builds and tests with, on Debian 12 (run as root, or
# with sudo available).  The CUDA toolkit headers (cuda.h 13.x) are expected
# under $CUDA_HOME (default /usr/local/cuda); see README.md.
set -e
# clang and its runtimes (libFuzzer, ASan, UBSan): make fuzz; dpkg-dev,
# debhelper, dh-dkms: make deb (the nested-Xen test installs the packages
# with dpkg); lintian and dkms: make deb-test; libssl-dev: the TLS 1.3
# transport (OpenSSL 3)
pkgs="build-essential pkg-config check libsubunit-dev libxen-dev libssl-dev
      gnuplot-nox clang libclang-rt-14-dev dpkg-dev debhelper dh-dkms lintian
      dkms"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing
fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CUDA_PKGS="cuda-driver-dev-13-0 cuda-cudart-dev-13-0"
headers_missing() {
	for h in cuda.h cudaProfiler.h cudaTypedefs.h cudaProfilerTypedefs.h; do
		[ -f "$CUDA_HOME/include/$h" ] || return 0
	done
	return 1
}
# the headers from NVIDIA's CUDA apt repository, where it is configured
# (apt knows the packages): they install under /usr/local/cuda-13.0, with
# /usr/local/cuda pointing there
if headers_missing && [ "$CUDA_HOME" = /usr/local/cuda ] &&
   apt-cache policy cuda-driver-dev-13-0 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	echo "install-deps: the CUDA headers from NVIDIA's apt repository: $CUDA_PKGS"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $CUDA_PKGS
fi
for h in cuda.h cudaProfiler.h cudaTypedefs.h cudaProfilerTypedefs.h; do
	if [ ! -f "$CUDA_HOME/include/$h" ]; then
		echo "install-deps: $CUDA_HOME/include/$h not found: install" \
		     "the CUDA 13 toolkit's headers ($CUDA_PKGS from" \
		     "NVIDIA's CUDA apt repository for Debian 12," \
		     "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/," \
		     "which this script uses once apt knows it), or set CUDA_HOME" >&2
		exit 1
	fi
done
v=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$CUDA_HOME/include/cuda.h")
if [ "${v:-0}" -lt 13000 ]; then
	echo "install-deps: $CUDA_HOME has CUDA_VERSION $v; xgpu needs 13000 or later" >&2
	exit 1
fi
echo "install-deps: ok (CUDA_VERSION $v at $CUDA_HOME)"
