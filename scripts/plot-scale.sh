#!/bin/sh
# Renders the scale picture of docs/benchmarks.md: how publish, unpublish, a metrics scrape,
# CreateVolume and DeleteVolume (beside a bare lvcreate and lvremove fork with the driver's options)
# and a restart grow with the number of volumes published on one node, from the scale.dat that
# ScaleBenchmark leaves in test-e2e/target/bench. Not part of CI; needs gnuplot (Debian: gnuplot-nox).
#   scripts/plot-scale.sh test-e2e/target/bench/scale.dat deploy/images/scale.png
set -eu
dat=$1
png=$2
gnuplot <<PLOT
set terminal pngcairo size 1000,460 font "DejaVu Sans,11"
set output "$png"
set title "Cost per call against volumes published on the node (UML guest, cgroup v2, thin volumes)"
set xlabel "volumes published on the node"
set ylabel "ms (log scale)"
set logscale xy
set xtics (10, 100, 500)
set xrange [7:700]
set key outside right
set grid
set termoption noenhanced
plot "$dat" using 1:2 with linespoints linewidth 2 pointtype 7 title "NodePublishVolume p50", \
     "$dat" using 1:3 with linespoints linewidth 2 pointtype 5 title "NodeUnpublishVolume p50", \
     "$dat" using 1:4 with linespoints linewidth 2 pointtype 9 title "metrics scrape p50", \
     "$dat" using 1:6 with linespoints linewidth 2 pointtype 11 linecolor rgb "#d55e00" title "CreateVolume p50", \
     "$dat" using 1:7 with linespoints linewidth 2 dashtype 2 pointtype 10 linecolor rgb "#d55e00" title "bare lvcreate fork p50", \
     "$dat" using 1:8 with linespoints linewidth 2 pointtype 15 linecolor rgb "#0072b2" title "DeleteVolume p50", \
     "$dat" using 1:9 with linespoints linewidth 2 dashtype 2 pointtype 14 linecolor rgb "#0072b2" title "bare lvremove fork p50", \
     "$dat" using 1:5 with linespoints linewidth 2 pointtype 13 title "restart to ready Probe"
PLOT
echo "wrote $png"
