#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build the Debian packages (debian/) from the working tree:
#
#   scripts/build-deb.sh OUTDIR        (make deb: OUTDIR is $(O)/deb)
#
# The tree's files (tracked and untracked, not the ignored ones, so no build
# output) are copied to OUTDIR/xgpu-VERSION and dpkg-buildpackage builds
# the binary packages there; the .deb files, .buildinfo and .changes land
# in OUTDIR, the copy is removed after a good build.  Build dependencies
# that are not installed are named, with the apt-get line, before anything
# is built.  DEB_BUILD_OPTIONS is honoured (default parallel=2).

set -eu

out=${1:?usage: scripts/build-deb.sh OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

say() { echo "make deb: $*" >&2; }

if ! command -v dpkg-buildpackage >/dev/null ||
   ! command -v dpkg-checkbuilddeps >/dev/null; then
	say "dpkg-buildpackage not found: apt-get install dpkg-dev debhelper dh-dkms libxen-dev"
	exit 1
fi
# debian/control's Build-Depends (debhelper-compat is debhelper's,
# dh-sequence-dkms dh-dkms')
if ! unmet=$(dpkg-checkbuilddeps 2>&1); then
	pkgs=$(printf '%s\n' "$unmet" |
		sed -n 's/.*Unmet build dependencies: //p' |
		sed -e 's/([^)]*)//g' -e 's/debhelper-compat/debhelper/' \
		    -e 's/dh-sequence-dkms/dh-dkms/' | xargs)
	if [ -z "$pkgs" ]; then
		printf '%s\n' "$unmet" >&2
		exit 1
	fi
	say "missing packages: $pkgs"
	say "install them with: apt-get install $pkgs"
	exit 1
fi

version=$(cat VERSION)
# (debian/rules refuses the same, once the copy is made)
changelog=$(dpkg-parsechangelog -S Version)
if [ "${changelog%-*}" != "$version" ]; then
	say "debian/changelog is at $changelog but VERSION says $version:" \
	    "add a changelog entry for $version"
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/xgpu-$version
rm -rf "$stage"
rm -f "$out"/*.deb "$out"/*.ddeb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$stage"

# the output folder when it lies inside the tree and git does not ignore it
case $out/ in
"$top"/*) skip=${out#"$top"/}/ ;;
*) skip= ;;
esac

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# files of the working tree as they are now: tracked (less those
	# deleted) and untracked, not ignored
	git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do
		[ -n "$skip" ] && [ "${f#"$skip"}" != "$f" ] && continue
		if [ -e "$f" ] || [ -L "$f" ]; then
			printf '%s\0' "$f"
		fi
	done | tar -cf - --null --no-recursion -T - | tar -C "$stage" -xf -
else
	# a tree without git (an unpacked tarball): all but build folders
	tar -cf - --exclude=./build --exclude='./build-*' --exclude=./.git \
		${skip:+--exclude="./${skip%/}"} . | tar -C "$stage" -xf -
fi

export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=2}
# the package's own build starts clean: no make variables of ours (O=
# would point its `make clean` at our output folder, which holds it)
if ! (cd "$stage" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u O \
	dpkg-buildpackage -b -us -uc); then
	say "failed; the build tree is kept in $stage"
	exit 1
fi
rm -rf "$stage"
echo "make deb: packages in $out:"
ls -1 "$out"/*.deb
