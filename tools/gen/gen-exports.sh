#!/bin/sh
# gen-exports.sh - derive the guest library's exported surface from a CUDA
# toolkit.
#
# Writes, under xen-frontend/lib/:
#   libcuda.map              version script: exactly the names exported by
#                            the toolkit's stubs/libcuda.so, nothing else
#   xgpulib_stubs.c          a weak CUDA_ERROR_NOT_SUPPORTED body for each of
#                            them, plus hidden bodies for the graphics-interop
#                            entry points that cuGetProcAddress must know
#   xgpulib_gpa_table.inc    the cuGetProcAddress table: one row per ABI
#
# Programs link or dlsym the versioned names (cuMemAlloc_v2), while cudart
# asks cuGetProcAddress_v2 for (base name, cudaVersion, flags).  The
# PFN_<name>_v<NNNN>[_ptds|_ptsz] typedefs of the *Typedefs.h headers list
# every ABI.  The real driver numbers them: a name's oldest ABI is the plain
# symbol, the next one <name>_v2, then _v3...; a per-thread-stream ABI at
# version V is the symbol of the ABI in force at V plus _ptds or _ptsz.
#
# Usage: tools/gen/gen-exports.sh   (CUDA_HOME defaults to /usr/local/cuda,
# XGPU_GEN_OUT to xen-frontend/lib).  POSIX sh, awk, sort and nm only; the
# outputs are committed so that building needs no toolkit scripts.

set -eu

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${XGPU_GEN_OUT:-$top/xen-frontend/lib}
stub_so=$CUDA_HOME/lib64/stubs/libcuda.so
inc=$CUDA_HOME/include

# Typedef headers whose functions the stub library exports ...
main_hdrs="$inc/cudaTypedefs.h $inc/cudaProfilerTypedefs.h"
# ... and the graphics-interop ones it does not export, although the real
# driver answers cuGetProcAddress for them (cudart asks for all of them).
gfx_hdrs="$inc/cudaGLTypedefs.h $inc/cudaEGLTypedefs.h $inc/cudaVDPAUTypedefs.h"

# ABIs the typedef headers do not describe.  Format: base version ptds symbol.
# cuGraphInstantiate: CUDA 12.0 turned it into cuGraphInstantiateWithFlags
# (cuda.h: #define cuGraphInstantiate cuGraphInstantiateWithFlags), but
# CUDA 13 dropped PFN_cuGraphInstantiate_v12000, so the rule alone would hand
# a 12.x/13.x caller the 5-argument CUDA 11 cuGraphInstantiate_v2.
extra_abis='
cuGraphInstantiate 12000 0 cuGraphInstantiateWithFlags
'

# Names the stub library exports but no typedef header mentions; none in
# CUDA 13.0, kept for later toolkits.  They get a row with version 0, which
# any cudaVersion matches.

for f in "$stub_so" $main_hdrs $gfx_hdrs "$inc/cuda.h"; do
	[ -r "$f" ] || { echo "gen-exports: cannot read $f" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

LC_ALL=C
export LC_ALL

nm -D --defined-only "$stub_so" |
	awk 'NF == 3 && $2 ~ /^[TWi]$/ { print $3 }' | sort -u >"$tmp/exports"
nexp=$(wc -l <"$tmp/exports" | tr -d ' ')

cuda_version=$(awk '$1 == "#define" && $2 == "CUDA_VERSION" {
	print $3; exit }' "$inc/cuda.h")

# PFN typedefs -> "base version ptds-suffix origin", one per ABI.
# cuWGL* exist on Windows only.
pfns() {
	origin=$1
	shift
	awk -v origin="$origin" '
	/typedef/ && /\*PFN_/ {
		s = $0
		while (match(s, /\*PFN_[A-Za-z0-9_]+\)/)) {
			n = substr(s, RSTART + 5, RLENGTH - 6)
			s = substr(s, RSTART + RLENGTH)
			sfx = "-"
			if (n ~ /_pt(ds|sz)$/) {
				sfx = substr(n, length(n) - 3)
				n = substr(n, 1, length(n) - 5)
			}
			if (!match(n, /_v[0-9]+$/)) {
				print "gen-exports: unversioned typedef PFN_" n \
					>"/dev/stderr"
				bad = 1
				continue
			}
			base = substr(n, 1, RSTART - 1)
			ver = substr(n, RSTART + 2) + 0
			if (base ~ /^cuWGL/)
				continue
			print base, ver, sfx, origin
		}
	}
	END { exit bad }' "$@"
}
# the header lists split on blanks on purpose (no blanks in CUDA_HOME)
# shellcheck disable=SC2086
pfns main $main_hdrs >"$tmp/pfn.main"
# shellcheck disable=SC2086
pfns gfx $gfx_hdrs >"$tmp/pfn.gfx"
cat "$tmp/pfn.main" "$tmp/pfn.gfx" | sort -u -k1,1 -k2,2n -k3,3 >"$tmp/pfn"

# Apply the numbering rule.  Output: base version ptds(0/1) symbol origin.
awk '
{
	b = $1; v = $2
	if ($3 == "-") {
		np[b]++
		pv[b, np[b]] = v
	} else {
		nt[b]++
		tv[b, nt[b]] = v
		ts[b, nt[b]] = $3
	}
	org[b] = $4
	if (!(b in seen)) {
		seen[b] = 1
		order[++nb] = b
	}
}
END {
	for (i = 1; i <= nb; i++) {
		b = order[i]
		# input is sorted by version, so plain ABI k is the k-th oldest
		for (k = 1; k <= np[b]; k++)
			print b, pv[b, k], 0, (k == 1 ? b : b "_v" k), org[b]
		for (k = 1; k <= nt[b]; k++) {
			v = tv[b, k]
			sym = b
			for (j = 1; j <= np[b]; j++)
				if (pv[b, j] <= v)
					sym = (j == 1 ? b : b "_v" j)
			print b, v, 1, sym "_" ts[b, k], org[b]
		}
	}
}' "$tmp/pfn" >"$tmp/rows.rule"

# Hand-made ABIs, then version-0 rows for exported names nobody described.
printf '%s\n' "$extra_abis" | awk 'NF == 4 { print $0, "main" }' \
	>"$tmp/rows.extra"
cat "$tmp/rows.rule" "$tmp/rows.extra" >"$tmp/rows.known"
awk 'NR == FNR { have[$4] = 1; next }
	!($1 in have) { print $1, 0, 0, $1, "nopfn" }' \
	"$tmp/rows.known" "$tmp/exports" >"$tmp/rows.nopfn"
if [ -s "$tmp/rows.nopfn" ]; then
	echo "gen-exports: exported without a PFN typedef (version 0 rows):" >&2
	awk '{ print "  " $1 }' "$tmp/rows.nopfn" >&2
fi
cat "$tmp/rows.known" "$tmp/rows.nopfn" |
	sort -k1,1 -k2,2n -k3,3n >"$tmp/rows"

# Every symbol a non-graphics row names must be exported by the stub.
awk 'NR == FNR { ex[$1] = 1; next }
	$5 != "gfx" && !($4 in ex) { print; bad = 1 }
	END { exit bad }' "$tmp/exports" "$tmp/rows" >"$tmp/missing" || {
	echo "gen-exports: derived symbols missing from $stub_so:" >&2
	sed 's/^/  /' "$tmp/missing" >&2
	echo "gen-exports: add an exception to extra_abis and rerun" >&2
	exit 1
}
# A graphics symbol the stub does export would get two bodies.
awk 'NR == FNR { ex[$1] = 1; next }
	$5 == "gfx" && ($4 in ex) { print; bad = 1 }
	END { exit bad }' "$tmp/exports" "$tmp/rows" >"$tmp/clash" || {
	echo "gen-exports: graphics symbols now exported by the stub:" >&2
	sed 's/^/  /' "$tmp/clash" >&2
	exit 1
}
# Two rows for one (name, version, ptds) would make the lookup ambiguous.
awk '{ k = $1 " " $2 " " $3; if (k in seen) { print; bad = 1 } seen[k] = 1 }
	END { exit bad }' "$tmp/rows" >"$tmp/dups" || {
	echo "gen-exports: duplicate ABIs:" >&2
	sed 's/^/  /' "$tmp/dups" >&2
	exit 1
}

# cuda.h's renaming #defines say which symbol the newest ABI of a name is;
# the table must agree (this is how cuGraphInstantiate was found).  Except
# cuStreamGetCtx: cuda.h keeps the 2-argument function under that name and
# declares the 3-argument one as cuStreamGetCtx_v2, yet
# PFN_cuStreamGetCtx_v12050 is the 3-argument one, so a 12.5+ lookup of
# "cuStreamGetCtx" gets cuStreamGetCtx_v2 like the typedef says.
cudah_aliases='cuStreamGetCtx'
awk -v aliases="$cudah_aliases" '
BEGIN {
	n = split(aliases, a, " ")
	for (i = 1; i <= n; i++)
		alias[a[i]] = 1
}
NR == FNR {
	if ($3 == 0 && (!($1 in pver) || $2 >= pver[$1])) {
		pver[$1] = $2; psym[$1] = $4
	}
	if ($3 == 1 && (!($1 in tver) || $2 >= tver[$1])) {
		tver[$1] = $2; tsym[$1] = $4
	}
	next
}
$1 == "#define" && $2 == "CUDA_VERSION" { exit }
$1 == "#define" && $2 ~ /^cu/ && NF >= 3 {
	name = $2; t = $3
	sfx = ""
	if (t ~ /^__CUDA_API_PT(DS|SZ)\(/) {
		sfx = (t ~ /PTDS/) ? "_ptds" : "_ptsz"
		sub(/^__CUDA_API_PT(DS|SZ)\(/, "", t)
		sub(/\)$/, "", t)
	}
	if (!(name in psym) || (name in alias))
		next    # not a base name (cuStreamGetCtx_v2), or known alias
	if (psym[name] != t) {
		print name ": cuda.h says " t ", table says " psym[name]
		bad = 1
	}
	if (sfx != "" && tsym[name] != t sfx) {
		print name ": cuda.h says " t sfx ", table says " tsym[name]
		bad = 1
	}
}
END { exit bad }' "$tmp/rows" "$inc/cuda.h" >"$tmp/disagree" || {
	echo "gen-exports: table disagrees with cuda.h:" >&2
	sed 's/^/  /' "$tmp/disagree" >&2
	exit 1
}

# ---- libcuda.map -----------------------------------------------------------
{
	echo "/* Generated by tools/gen/gen-exports.sh from CUDA $cuda_version"
	echo " * stubs/libcuda.so ($nexp names); do not edit. */"
	echo "{"
	echo "global:"
	sed 's/^\(.*\)$/	\1;/' "$tmp/exports"
	echo "local:"
	echo "	*;"
	echo "};"
} >"$tmp/libcuda.map"

# ---- xgpulib_stubs.c -------------------------------------------------------
ngfx=$(awk '$5 == "gfx"' "$tmp/rows" | awk '{ print $4 }' | sort -u | wc -l |
	tr -d ' ')
{
	cat <<EOF
/* SPDX-License-Identifier: MIT */
/*
 * Generated by tools/gen/gen-exports.sh from CUDA $cuda_version; do not edit.
 *
 * A weak body for each of the $nexp names of stubs/libcuda.so, so that the
 * library exports all of them from the start.  A strong definition anywhere
 * else in the library (with the real cuda.h prototype and default
 * visibility) replaces one at link time.  This file must not include cuda.h:
 * these int NAME(void) definitions would clash with its prototypes.
 *
 * The $ngfx graphics-interop entry points (GL, EGL, VDPAU) are not exported
 * by the stub library but cudart asks cuGetProcAddress for them; they get
 * hidden bodies here under an xgpulib_gfx_ prefix.
 */

/*
 * CUDA_ERROR_NOT_SUPPORTED, said once per name under XGPU_DEBUG
 * (xgpulib_env.c): the usual reason a CUDA program fails on xgpu.
 */
int xgpulib_unsupported(const char *name, int *once);

#define XGPULIB_STUB(name)						\\
	__attribute__((weak, visibility("default"))) int name(void);	\\
	__attribute__((weak, visibility("default"))) int name(void)	\\
	{								\\
		static int once;					\\
		return xgpulib_unsupported(#name, &once);		\\
	}

#define XGPULIB_GFX_STUB(name)						\\
	int xgpulib_gfx_##name(void);					\\
	int xgpulib_gfx_##name(void)					\\
	{								\\
		static int once;					\\
		return xgpulib_unsupported(#name, &once);		\\
	}

EOF
	sed 's/^\(.*\)$/XGPULIB_STUB(\1)/' "$tmp/exports"
	echo
	awk '$5 == "gfx" { print $4 }' "$tmp/rows" | sort -u |
		sed 's/^\(.*\)$/XGPULIB_GFX_STUB(\1)/'
} >"$tmp/xgpulib_stubs.c"

# ---- xgpulib_gpa_table.inc -------------------------------------------------
nrows=$(wc -l <"$tmp/rows" | tr -d ' ')
nnames=$(awk '{ print $1 }' "$tmp/rows" | sort -u | wc -l | tr -d ' ')
{
	cat <<EOF
/* SPDX-License-Identifier: MIT */
/*
 * Generated by tools/gen/gen-exports.sh from CUDA $cuda_version; do not edit.
 *
 * The cuGetProcAddress table: $nrows ABIs of $nnames driver functions.
 * No include guard: include it once per section you want, with the
 * section's macro defined:
 *
 *   XGPULIB_GPA_SYM(sym)                 once per distinct symbol, e.g.
 *       #define XGPULIB_GPA_SYM(sym) extern int sym(void);
 *   XGPULIB_GPA_ROW(name, ver, ptds, sym)
 *       once per ABI, sorted by name (strcmp order), then version, then
 *       ptds; ptds is 1 for a per-thread-default-stream (_ptds/_ptsz) ABI;
 *       ver 0 matches any requested version.
 *
 * Graphics-interop symbols (cuGL*, cuEGL*, cuVDPAU*, ...) are not exported
 * and appear as xgpulib_gfx_<symbol>.
 */

#ifdef XGPULIB_GPA_SYM
EOF
	awk '{ print ($5 == "gfx" ? "xgpulib_gfx_" : "") $4 }' "$tmp/rows" |
		sort -u | sed 's/^\(.*\)$/XGPULIB_GPA_SYM(\1)/'
	echo "#endif /* XGPULIB_GPA_SYM */"
	echo
	echo "#ifdef XGPULIB_GPA_ROW"
	awk '{ printf "XGPULIB_GPA_ROW(\"%s\", %d, %d, %s%s)\n", $1, $2, $3,
		($5 == "gfx" ? "xgpulib_gfx_" : ""), $4 }' "$tmp/rows"
	echo "#endif /* XGPULIB_GPA_ROW */"
} >"$tmp/xgpulib_gpa_table.inc"

mkdir -p "$out"
for f in libcuda.map xgpulib_stubs.c xgpulib_gpa_table.inc; do
	cp "$tmp/$f" "$out/$f.new"
	mv "$out/$f.new" "$out/$f"
done

echo "gen-exports: CUDA $cuda_version: $nexp exports, $nrows ABIs of" \
	"$nnames names ($ngfx graphics-interop symbols kept hidden)"
