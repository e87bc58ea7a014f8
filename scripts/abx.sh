#!/bin/bash
# scripts/abx.sh SHAPE PAIRS LEVEL A B: `ratios` binaries A and B run interleaved (`RPCSCAN_FORCE=LEVEL ./A SHAPE 25`),
# rpcscan strict and envelope MiB/s; prints the medians and the median of the per-pair ratios B / A.
shape=$1; n=$2; lvl=$3; A=$4; B=$5
for i in $(seq $n); do
  for b in $A $B; do
    out=$(RPCSCAN_FORCE=$lvl ./$b $shape 25 2>&1)
    s=$(echo "$out" | awk '/rpcscan strict  /{print $3}'); e=$(echo "$out" | awk '/rpcscan envelope  /{print $3}')
    echo "$b $s $e"
  done
done | python3 -c "
import sys, statistics as st
rows=[l.split() for l in sys.stdin]
a=[r for r in rows if r[0]=='$A']; b=[r for r in rows if r[0]=='$B']
rs=[float(y[1])/float(x[1]) for x,y in zip(a,b)]; re_=[float(y[2])/float(x[2]) for x,y in zip(a,b)]
print('$shape ${lvl:-auto}: strict %.0f -> %.0f (%.3f, %.3f-%.3f) envelope %.0f -> %.0f (%.3f)' % (st.median(float(x[1]) for x in a), st.median(float(y[1]) for y in b), st.median(rs), min(rs), max(rs), st.median(float(x[2]) for x in a), st.median(float(y[2]) for y in b), st.median(re_)))
"
