#!/bin/bash
# scripts/pair-cpu.sh LOG ROUNDS BINARY...: CPU seconds (user + sys) of `stats` and `pair` on LOG,
# per round and binary in turn, and their ratio (stats / pair: pair's speed against stats').
f=$1; n=$2; shift 2
cpu() { { /usr/bin/time -f "%U %S" "$@" >/dev/null; } 2>&1 | tail -1 | awk '{print $1+$2}'; }
for r in $(seq $n); do
  line="load $(cut -d' ' -f1 /proc/loadavg)"
  for b in "$@"; do
    s=$(cpu $b stats $f); p=$(cpu $b pair $f)
    line="$line | $(basename $b) stats $s pair $p ($(awk -v s="$s" -v p="$p" 'BEGIN{printf "%.3f", s/p}')x)"
  done
  echo "$line"
done
