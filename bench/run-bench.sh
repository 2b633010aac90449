#!/bin/bash
# Run the benchmarks natively and through xgpu, and tabulate them.
#
# usage: bench/run-bench.sh [--xgpu-lib DIR] [--backend PATH] [--out DIR]
#                           [--bin DIR] [BENCH...]
#
#   --xgpu-lib DIR  folder holding xgpu's libcuda.so.1
#                   (default: $XGPU_LIB_DIR, else <repo>/build/lib)
#   --backend PATH  the backend daemon; started here as
#                   PATH --local SOCK --foreground --driver REALLIB
#                   (default: $XGPU_BACKEND, else <repo>/build/bin/xen-gpubackd)
#   --out DIR       raw outputs, logs and bench-summary.txt (the table)
#                   (default: a new /tmp folder)
#   --bin DIR       the built benchmarks (default: <repo>/build/bench;
#                   built with make -C bench when missing)
#   BENCH...        run only these of: bw rtt launch streams torch_steps
#                   (default: all)
#
# Each benchmark runs natively (LD_LIBRARY_PATH untouched), then through
# xgpu (XGPU_SOCKET and LD_LIBRARY_PATH set), each under timeout 300;
# XGPU_BENCH_ROUNDS (default 1, torch_steps 3) alternates native and xgpu
# runs that many times and keeps the median of each figure, so that a
# drift of the machine (clock, another tenant) reaches both sides.
#
# launch and streams run in turns instead (bench/pair.c): a native and an
# xgpu process side by side, each giving a sample in turn (A B, B A, ...),
# XGPU_BENCH_TURNS samples each (default 20), in XGPU_BENCH_PAIRS pairs of
# processes (default 3); their comparison is the median of the turns'
# ratios, each sample against its neighbour in time.  On the H200 host
# the rate of a launch loop moved 10-30% between processes and from one
# second to the next, which medians of three separate runs did not see
# through (the same native program's median ranged 3.4-4.6 us per launch
# in one command).  XGPU_BENCH_TURNS=0 runs them in rounds like the others.
# The
# table shows native, xgpu and their comparison, and marks the targets:
#   pinned copies of 4 KiB       xgpu >= 90% of native
#   pinned copies >= 64 KiB      xgpu >= 95% of native
#   pageable copies >= 4 MiB     xgpu >= 100% of native
#   round trips, p50             xgpu <= native + 5 us
#   async launch                 throughput (native_us / xgpu_us) >= 98%
#   many streams, copy overlap   xgpu wall time <= 1.05 x native
#   PyTorch training steps/s     xgpu >= 98% of native (MLP: launch-bound;
#                                transformer block: compute-bound)
# Exit status: 0 all ran and all targets met; 3 all ran, some target missed;
# 1 a run failed; 2 bad usage or set-up.
#
# On a machine without an NVIDIA GPU it prints one SKIP line and exits 0.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bench
ALL="bw rtt launch streams torch_steps"
# shellcheck source-path=SCRIPTDIR source=../tests/gpu/harness.sh
. "$ROOT/tests/gpu/harness.sh"

die() {
	echo "ERROR $*"
	exit 2
}

# A set-up that fails is bad usage or set-up: exit 2.
setup_failed() {
	die "$2"
}

harness_init bench xgpu-bench "$@"
BENCHES=$NAMES

# ---- set-up: programs, libraries, backend ----

harness_setup benchmark "the benchmarks" bench
if ! harness_start_backend; then
	tail -n 20 "$OUT/backend.log" | sed 's/^/    /'
	die "backend: no socket $SOCK (see $OUT/backend.log)"
fi

# ---- runs ----

# median_rounds FILE: the figure lines of FILE, each figure the median over
# the rounds of the lines that share the other fields (RTT lines carry two
# figures, p50 and p99, the others their last field); order kept.
median_rounds() {
	awk '
	function med(k, f,    m, a, c, t, s) {
		m = n[k]
		for (a = 1; a <= m; a++) s[a] = v[k, f, a]
		for (a = 2; a <= m; a++)
			for (c = a; c > 1 && s[c - 1] > s[c]; c--) {
				t = s[c]; s[c] = s[c - 1]; s[c - 1] = t
			}
		return m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
	}
	$1 !~ /^(BW|RTT|LAUNCH|STREAMS|TORCH)$/ || NF < 3 { next }
	{
		k = $1
		for (i = 2; i <= NF; i++)
			if (!(i == NF || ($1 == "RTT" && i == 4)))
				k = k SUBSEP $i
		if (!(k in n)) { order[++nk] = k; line[k] = $0 }
		n[k]++
		v[k, 1, n[k]] = $NF + 0
		if ($1 == "RTT") v[k, 2, n[k]] = $4 + 0
	}
	END {
		for (j = 1; j <= nk; j++) {
			k = order[j]
			split(line[k], f, " ")
			nf = length(f)
			f[nf] = med(k, 1)
			if (f[1] == "RTT") f[4] = med(k, 2)
			out = f[1]
			for (i = 2; i <= nf; i++) out = out " " f[i]
			print out
		}
	}' "$1"
}

# pair_run PROG TAG: PROG's native and xgpu runs in turns (bench/pair.c),
# its lines "A|B TURN FIGURE-LINE" in $OUT/TAG.out
pair_run() {
	local prog=$1 tag=$2 exe extra
	exe=$BIN/$(harness_prog "$prog")
	extra=$(harness_env "$prog")
	rm -f "$OUT/$tag".native.ld.* "$OUT/$tag".xgpu.ld.*
	# shellcheck disable=SC2086 # extra: VAR=value words
	timeout "$PROG_TIMEOUT" "$BIN/pair" "$TURNS" -- \
		env $extra LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$tag.native.ld" \
		"$exe" --turns -- \
		env $extra XGPU_SOCKET="$SOCK" LD_LIBRARY_PATH="$XGPU_LD_PATH" \
		LD_DEBUG=libs LD_DEBUG_OUTPUT="$OUT/$tag.xgpu.ld" \
		"$exe" --turns > "$OUT/$tag.out" 2> "$OUT/$tag.err"
}

# pair_figures FILE: from the turns of FILE ("PAIR A|B TURN FIGURE-LINE"),
# each figure's native median to native.all, its xgpu median to
# xgpu.all, and to paired.all "KEY... RATIO P25 P75 N": the median (and
# quartiles) of xgpu/native over the turns that gave both
pair_figures() {
	awk -v NAT="$OUT/native.all" -v XG="$OUT/xgpu.all" \
	    -v PAIRED="$OUT/paired.all" '
	function sortv(a, m,    i, j, t) {
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
	}
	function q(a, m, f) { return a[int((m - 1) * f + 0.5) + 1] }
	NF >= 6 && $4 ~ /^(LAUNCH|STREAMS)$/ {
		k = $4
		for (i = 5; i < NF; i++) k = k " " $i
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		v[$2, $1 SUBSEP $3, k] = $NF + 0
		ids[$1 SUBSEP $3] = 1
	}
	END {
		for (j = 1; j <= nk; j++) {
			k = order[j]
			na = nx = nr = 0
			delete a; delete x; delete r
			for (id in ids) {
				ha = (("A", id, k) in v); hx = (("B", id, k) in v)
				if (ha) a[++na] = v["A", id, k]
				if (hx) x[++nx] = v["B", id, k]
				if (ha && hx && v["A", id, k] > 0)
					r[++nr] = v["B", id, k] / v["A", id, k]
			}
			sortv(a, na); sortv(x, nx); sortv(r, nr)
			if (na) print k, q(a, na, 0.5) >> NAT
			if (nx) print k, q(x, nx, 0.5) >> XG
			if (nr) printf "%s %.4f %.4f %.4f %d\n", k, q(r, nr, 0.5),
				q(r, nr, 0.25), q(r, nr, 0.75), nr >> PAIRED
		}
	}' "$1"
}

TURNS=${XGPU_BENCH_TURNS:-20}
PAIRS=${XGPU_BENCH_PAIRS:-3}
RUN_FAILED=0
: > "$OUT/native.all"
: > "$OUT/xgpu.all"
: > "$OUT/paired.all"
for b in $BENCHES; do
	if { [ "$b" = launch ] || [ "$b" = streams ]; } &&
	   [ "$TURNS" -gt 0 ] && [ -x "$BIN/pair" ]; then
		: > "$OUT/$b.pairs"
		for r in $(seq 1 "$PAIRS"); do
			tag=$b.pair.$r
			echo "running $b (native and xgpu in $TURNS turns, pair $r of $PAIRS)"
			pair_run "$b" "$tag"
			rc=$?
			if [ "$rc" -ne 0 ]; then
				RUN_FAILED=$((RUN_FAILED + 1))
				echo "FAIL $b (in turns): exit status $rc"
				grep -h 'FAIL\|^pair:' "$OUT/$tag.out" \
					"$OUT/$tag.err" | head -n 5 | sed 's/^/    /'
			fi
			for mode in native xgpu; do
				wrong=$(harness_wrong_libcuda "$mode" "$tag.$mode")
				if [ -n "$wrong" ]; then
					RUN_FAILED=$((RUN_FAILED + 1))
					echo "FAIL $b ($mode): loaded the wrong libcuda: ${wrong//$'\n'/ }"
				fi
			done
			sed "s/^/$r /" "$OUT/$tag.out" >> "$OUT/$b.pairs"
		done
		pair_figures "$OUT/$b.pairs"
		continue
	fi
	if [ "$b" = torch_steps ] && ! python3 -c 'import torch' 2>/dev/null; then
		echo "SKIP torch_steps: no PyTorch for python3 here"
		continue
	fi
	rounds=${XGPU_BENCH_ROUNDS:-1}
	[ "$b" = torch_steps ] && rounds=${XGPU_BENCH_ROUNDS:-3}
	for mode in native xgpu; do
		: > "$OUT/$b.$mode.rounds"
	done
	for r in $(seq 1 "$rounds"); do
		for mode in native xgpu; do
			tag=$b.$mode
			[ "$rounds" -gt 1 ] && tag=$b.$mode.$r
			echo "running $b ($mode, round $r of $rounds)"
			harness_run "$mode" "$b" "$tag"
			rc=$?
			if [ "$rc" -ne 0 ]; then
				RUN_FAILED=$((RUN_FAILED + 1))
				echo "FAIL $b ($mode): exit status $rc"
				grep '^FAIL' "$OUT/$tag.out" | head -n 5 |
					sed 's/^/    /'
			fi
			wrong=$(harness_wrong_libcuda "$mode" "$tag")
			if [ -n "$wrong" ]; then
				RUN_FAILED=$((RUN_FAILED + 1))
				echo "FAIL $b ($mode): loaded the wrong libcuda: ${wrong//$'\n'/ }"
			fi
			cat "$OUT/$tag.out" >> "$OUT/$b.$mode.rounds"
		done
	done
	for mode in native xgpu; do
		median_rounds "$OUT/$b.$mode.rounds" >> "$OUT/$mode.all"
	done
done

if ! kill -0 "$BACKEND_PID" 2>/dev/null; then
	RUN_FAILED=$((RUN_FAILED + 1))
	echo "FAIL backend: exited during the benchmarks, see $OUT/backend.log"
fi

# ---- the table ----

# Both files hold BW, RTT, LAUNCH and TORCH lines; rows follow the native order.
# A figure taken in turns is compared by the median of its turns' ratios
# (paired.all; its quartiles and count are listed under the table).
# The last line is "targets: N met, M missed".
awk -v PF="$OUT/paired.all" '
function row(what, n, x, cmp, target) {
	printf "%-30s %12s %12s %12s  %s\n", what, n, x, cmp, target
}
function num(v) { return v == "" ? "n/a" : v }
function mark(ok, text) {
	if (ok) { met++; return "ok   (" text ")" }
	missed++
	return "MISS (" text ")"
}
function keys(file_is_native,    k) {
	if ($1 == "BW" && NF >= 5) {
		k = "BW " $2 " " $3 " " $4
		set(file_is_native, k, $5)
	} else if ($1 == "RTT" && NF >= 6) {
		set(file_is_native, "RTT " $2 " p50", $4)
		set(file_is_native, "RTT " $2 " p99", $6)
	} else if ($1 == "TORCH" && NF >= 4) {
		set(file_is_native, "TORCH " $2 " " $3, $4)
	} else if ($1 == "LAUNCH" && NF >= 3) {
		set(file_is_native, "LAUNCH " $2, $3)
	} else if ($1 == "STREAMS" && NF >= 3) {
		set(file_is_native, "STREAMS " $2, $3)
	}
}
function set(file_is_native, k, v) {
	if (file_is_native) {
		if (!(k in nat))
			order[++n] = k
		nat[k] = v
	} else {
		if (!(k in nat) && !(k in xg))
			order[++n] = k
		xg[k] = v
	}
}
FILENAME == PF {
	if (NF >= 6) {
		pk = $1 " " $2
		pr[pk] = $3; plo[pk] = $4; phi[pk] = $5; pn[pk] = $6
		porder[++npk] = pk
	}
	next
}
FILENAME == NATF { keys(1); next }
{ keys(0) }
END {
	row("what", "native", "xgpu", "compare", "target")
	for (i = 1; i <= n; i++) {
		k = order[i]
		split(k, f, " ")
		nv = (k in nat) ? nat[k] : ""
		xv = (k in xg) ? xg[k] : ""
		have = nv != "" && xv != "" && nv + 0 > 0 && xv + 0 > 0
		# in turns: xv / nv is the median of the ratios of the turns
		paired = k in pr
		if (paired) {
			have = pr[k] + 0 > 0
			xv_nv = pr[k] + 0
		} else if (have)
			xv_nv = xv / nv
		if (f[1] == "BW") {
			bytes = f[4] + 0
			cmp = have ? sprintf("%.2f", xv / nv) : "n/a"
			target = "-"
			if (bytes >= 65536 && f[3] == "pinned")
				target = mark(have && xv / nv >= 0.95, ">= 0.95")
			else if (bytes == 4096 && f[3] == "pinned")
				target = mark(have && xv / nv >= 0.90, ">= 0.90")
			else if (bytes >= 4194304 && f[3] == "pageable")
				target = mark(have && xv / nv >= 1.00, ">= 1.00")
			row(k " GB/s", num(nv), num(xv), cmp, target)
		} else if (f[1] == "RTT") {
			cmp = have ? sprintf("%+.2f us", xv - nv) : "n/a"
			target = "-"
			if (f[3] == "p50")
				target = mark(have && xv - nv <= 5.0, "<= native + 5 us")
			row(k " us", num(nv), num(xv), cmp, target)
		} else if (f[1] == "STREAMS") {
			cmp = have ? sprintf("%.3f time", xv_nv) : "n/a"
			target = mark(have && xv_nv <= 1.05, "time <= 1.05")
			row(k, num(nv), num(xv), cmp, target)
		} else if (f[1] == "TORCH") {
			cmp = have ? sprintf("%.3f", xv / nv) : "n/a"
			target = mark(have && xv / nv >= 0.98, ">= 0.98")
			row(k, num(nv), num(xv), cmp, target)
		} else {
			if (f[2] == "async_us_per_launch") {
				cmp = have ? sprintf("%.3f thr", 1 / xv_nv) : "n/a"
				target = mark(have && 1 / xv_nv >= 0.98,
					      "throughput >= 0.98")
			} else if (paired) {
				cmp = have ? sprintf("%.3f time", xv_nv) : "n/a"
				target = "-"
			} else {
				cmp = have ? sprintf("%+.2f us", xv - nv) : "n/a"
				target = "-"
			}
			row(k, num(nv), num(xv), cmp, target)
		}
	}
	for (i = 1; i <= npk; i++) {
		if (i == 1)
			print "in turns (xgpu/native per turn, median [quartiles], turns):"
		k = porder[i]
		printf "  %-36s %.3f [%.3f-%.3f] %d\n", k, pr[k], plo[k],
			phi[k], pn[k]
	}
	printf "targets: %d met, %d missed\n", met, missed
}' NATF="$OUT/native.all" "$OUT/paired.all" "$OUT/native.all" \
	"$OUT/xgpu.all" > "$OUT/bench-summary.txt"

cat "$OUT/bench-summary.txt"
"$ROOT/bench/plot.sh" "$OUT"
echo "outputs in $OUT"
if [ "$RUN_FAILED" -gt 0 ]; then
	echo "$RUN_FAILED runs failed"
	exit 1
fi
if grep -q '^targets: [0-9]* met, [1-9]' "$OUT/bench-summary.txt"; then
	exit 3
fi
exit 0
