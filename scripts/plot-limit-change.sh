#!/bin/sh
# Renders the README's picture: the write limit against the observed write rate across a live
# ControllerModifyVolume, from what DashboardCheck left in a UML run's out directory (the limit
# gauge and written-bytes counter scraped every 250 ms, and fio's own bandwidth log). Not part of
# CI; needs gnuplot (Debian: gnuplot-nox).
#   scripts/plot-limit-change.sh test-e2e/target/uml-runs/node-v2-*/out deploy/images/limit-change.png
set -eu
out_dir=$1
png=$2
series=$out_dir/dashboard-series.tsv
fio_log=$out_dir/dashboard-fio_bw.1.log
read -r called replied < "$out_dir/dashboard-change.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# t (s from the first scrape), limit (MiB/s), rate of the counter over the last second (MiB/s)
awk -F'\t' '!/^#/ { n++; t[n] = $1; limit[n] = $2; bytes[n] = $3 }
  END {
    for (i = 1; i <= n; i++) {
      j = i; while (j > 1 && t[i] - t[j - 1] <= 1000) j--;
      rate = (i > j) ? (bytes[i] - bytes[j]) / ((t[i] - t[j]) / 1000) / 1048576 : "NaN";
      printf "%.3f\t%.3f\t%s\n", (t[i] - t[1]) / 1000, limit[i] / 1048576, rate
    }
  }' "$series" > "$work/scrapes.dat"
first=$(awk -F'\t' '!/^#/ { print $1; exit }' "$series")
# fio: epoch ms, KiB/s averaged over 1 s
awk -F', *' -v first="$first" '{ printf "%.3f\t%.3f\n", ($1 - first) / 1000, $2 / 1024 }' "$fio_log" > "$work/fio.dat"
called_s=$(awk -v c="$called" -v f="$first" 'BEGIN { printf "%.3f", (c - f) / 1000 }')
replied_s=$(awk -v c="$replied" -v f="$first" 'BEGIN { printf "%.3f", (c - f) / 1000 }')

gnuplot <<PLOT
set terminal pngcairo size 900,420 font "DejaVu Sans,11"
set output "$png"
set title "writeBPS raised from 4Mi to 8Mi by ControllerModifyVolume while fio writes (UML guest, cgroup v2)"
set xlabel "seconds"
set ylabel "MiB/s"
set yrange [0:10]
set key bottom right
set grid
set termoption noenhanced
set object 1 rectangle from $called_s, graph 0 to $replied_s, graph 1 fillcolor rgb "#dddddd" fillstyle solid noborder behind
set label "ControllerModifyVolume: call to reply" at $replied_s, graph 0.95 offset 0.5,0
plot "$work/scrapes.dat" using 1:2 with steps linewidth 2 linecolor rgb "#d62728" title "limit (lvmqos_volume_io_limit_bytes_per_second)", \
     "$work/scrapes.dat" using 1:3 with lines linewidth 2 linecolor rgb "#1f77b4" title "observed (rate of lvmqos_volume_io_bytes_total, 1 s)", \
     "$work/fio.dat" using 1:2 with points pointtype 7 pointsize 0.6 linecolor rgb "#2ca02c" title "fio's own log (1 s means)"
PLOT
echo "wrote $png"
