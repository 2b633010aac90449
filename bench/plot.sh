#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Draw the benchmarks' results as SVG with gnuplot, beside their tables.
#
#   bench/plot.sh OUTDIR
#
# OUTDIR is a folder run-bench.sh or run-sched.sh wrote (on the GPU machine;
# the plots can be drawn anywhere gnuplot is installed, from a copy):
#   native.all + xgpu.all (BW lines)  -> bandwidth.svg: GB/s against copy
#                                        size, native and xgpu, per
#                                        direction and kind of memory
#   shares.<phase>.tsv                -> shares.<phase>.svg: each guest's
#                                        share of the GPU over time
# Prints one line per SVG written; exits 1 without gnuplot, 0 otherwise.
set -u
OUT=${1:?usage: bench/plot.sh OUTDIR}
if ! command -v gnuplot >/dev/null; then
	echo "plot: no gnuplot (apt-get install gnuplot-nox); tables only"
	exit 1
fi
T=$(mktemp -d /tmp/xgpu-plot.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

# ---- bandwidth: "BW <dir> <kind> <bytes> <GB/s>" of each run ----
if [ -s "$OUT/native.all" ] && [ -s "$OUT/xgpu.all" ]; then
	plots=
	for mode in native xgpu; do
		awk -v d="$T" -v m="$mode" '$1 == "BW" && NF >= 5 {
			f = d "/" m "." $2 "." $3 ".dat"
			print $4, $5 > f
		}' "$OUT/$mode.all"
	done
	for f in "$T"/native.*.dat; do
		[ -e "$f" ] || continue
		k=${f#"$T"/native.}
		k=${k%.dat}
		sort -n -o "$f" "$f"
		plots="$plots${plots:+, }'$f' using 1:2 with linespoints title 'native ${k/./ }'"
		if [ -e "$T/xgpu.$k.dat" ]; then
			sort -n -o "$T/xgpu.$k.dat" "$T/xgpu.$k.dat"
			plots="$plots, '$T/xgpu.$k.dat' using 1:2 with linespoints dashtype 2 title 'xgpu ${k/./ }'"
		fi
	done
	if [ -n "$plots" ]; then
		gnuplot <<-EOF
			set terminal svg size 900,560 dynamic enhanced
			set output '$OUT/bandwidth.svg'
			set title 'Copy bandwidth, native and through xgpu'
			set xlabel 'copy size (bytes)'
			set ylabel 'GB/s'
			set logscale x 2
			set format x '2^{%L}'
			set key left top
			set grid
			plot $plots
		EOF
		echo "plot: $OUT/bandwidth.svg"
	fi
fi

# ---- shares over time: "<seconds> <guest> <percent>" per sample ----
for f in "$OUT"/shares.*.tsv; do
	[ -e "$f" ] || continue
	phase=${f##*/shares.}
	phase=${phase%.tsv}
	plots=
	for g in $(awk '{ print $2 }' "$f" | sort -u); do
		awk -v g="$g" '$2 == g { print $1, $3 }' "$f" > "$T/$g.dat"
		plots="$plots${plots:+, }'$T/$g.dat' using 1:2 with lines title '$g'"
	done
	[ -n "$plots" ] || continue
	gnuplot <<-EOF
		set terminal svg size 900,420 dynamic enhanced
		set output '$OUT/shares.$phase.svg'
		set title 'Share of the GPU per guest: $phase'
		set xlabel 'seconds'
		set ylabel 'percent of the GPU (last accounting period)'
		set yrange [0:100]
		set key outside right
		set grid
		plot $plots
	EOF
	echo "plot: $OUT/shares.$phase.svg"
done
exit 0
