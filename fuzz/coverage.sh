#!/usr/bin/env bash
# coverage.sh: source-based coverage of the library (src/ only) reached by the fuzz corpora.
#
#   fuzz/coverage.sh [target...]          (default: every target of `cargo fuzz list`)
#
# Per target: `cargo +nightly fuzz coverage -a <target> corpus/<target> [$FUZZ_WORK/<target>]`
# (replays every input once through an -Cinstrument-coverage build), then `llvm-cov report`
# over src/. Then the union: the targets' profiles merged (llvm-profdata merge), reported with
# every target binary as an object. Everything lands in $COV_OUT (ignored by git).
#
# Environment:
#   FUZZ_WORK=dir    also replay dir/<target> (a campaign's working corpus) when it exists
#   COV_LEVELS=...   kernel levels to replay at, e.g. "native scalar" (default "native": the
#                    inherited RPCSCAN_FORCE, else the best the CPU has); with more than one
#                    level there is also a union over all levels
#   COV_JOBS=n       `cargo fuzz coverage -j` (default: cargo-fuzz's, the number of CPUs)
#   COV_NICE=n       nice level of every command (default 10)
#   COV_OUT=dir      reports and profiles (default fuzz/coverage/report)
#   COV_TOOLCHAIN=t  (default nightly)
#   COV_REPORT_ONLY=1  skip the replay: report the profiles of an earlier `cargo fuzz coverage`
#                    (fuzz/coverage/<target>/coverage.profdata) as one level
set -euo pipefail

FUZZ=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$FUZZ/.." && pwd)
TC=${COV_TOOLCHAIN:-nightly}
NICE=(nice -n "${COV_NICE:-10}")
OUT=${COV_OUT:-$FUZZ/coverage/report}
TRIPLE=$(rustc +"$TC" -vV | sed -n 's/^host: //p')
LLVM=$(rustc +"$TC" --print sysroot)/lib/rustlib/$TRIPLE/bin
# cargo-fuzz's coverage build: <cwd>/target/<triple>/coverage/<triple>/release/<target>.
BIN_DIR=$FUZZ/target/$TRIPLE/coverage/$TRIPLE/release
# Only the library: the positional src/ filter, and the regex as a second fence.
IGNORE='/\.cargo/registry/|/\.rustup/|^/rustc/|/(fuzz|oracle|cli)/(src|fuzz_targets)/'
DEMANGLE=()
command -v c++filt >/dev/null && DEMANGLE=(-Xdemangler=c++filt)

cd "$FUZZ"
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +"$TC" fuzz list); fi
read -r -a levels <<<"${COV_LEVELS:-native}"
jobs=()
[ -n "${COV_JOBS:-}" ] && jobs=(-j "$COV_JOBS")
mkdir -p "$OUT"

# The level src/simd picks for a given RPCSCAN_FORCE (mirrors simd::level::detect and simd::x86::has_*).
effective_level() {
  local best=scalar flags
  flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  if [[ $flags == *" avx2 "* && $flags == *" pclmulqdq "* ]]; then
    best=avx2
    [[ $flags == *" avx512bw "* ]] && best=avx512
  fi
  case "$1" in
    scalar) echo scalar ;;
    avx2) [ "$best" = avx512 ] && echo avx2 || echo "$best" ;;
    *) echo "$best" ;;
  esac
}

src_digest() { (cd "$ROOT" && find src -type f -name '*.rs' | sort | xargs sha1sum | sha1sum | cut -c1-12); }

# "name  regions x% (missed/total)  functions ...  lines ..." from a report's TOTAL line.
total_line() {
  awk -v name="$1" '$1 == "TOTAL" {
    printf "%-13s regions %7s (%d/%d)   functions %7s (%d/%d)   lines %7s (%d/%d)\n",
      name, $4, $2 - $3, $2, $7, $5 - $6, $5, $10, $8 - $9, $8 }' "$2"
}

# Compact per-file table: lines, regions and functions covered.
file_table() {
  awk 'NR > 2 && $1 != "TOTAL" && $1 !~ /^-/ && NF >= 10 {
    printf "  %-26s lines %7s (%4d/%4d)   regions %7s   functions %7s\n", $1, $10, $8 - $9, $8, $4, $7 }' "$1" |
    sort
}

report() { # report <profdata> <out.txt> <binary>...
  local prof=$1 txt=$2 first=$3
  shift 3
  local objs=()
  for b in "$@"; do objs+=(-object "$b"); done
  "${NICE[@]}" "$LLVM/llvm-cov" report "$first" "${objs[@]}" -instr-profile="$prof" \
    -show-branch-summary=false -ignore-filename-regex="$IGNORE" "$ROOT/src" >"$txt" 2>"$txt.err"
  # Across binaries, functions never run in one of them (zero records dropped by -sparse) can
  # miss a profile record; `llvm-cov report -dump` names them (so far: `arbitrary`'s, hash 0).
  [ -s "$txt.err" ] && sed 's/^/  llvm-cov: /' "$txt.err"
  return 0
}

# Which x86 kernels ran: the functions (closures aside) of the x86 files of src/simd and of
# the per-level walks of src/dispatch, with their line coverage.
kernels() { # kernels <profdata> <binary>...
  local prof=$1 first=$2
  shift 2
  local objs=()
  for b in "$@"; do objs+=(-object "$b"); done
  "${NICE[@]}" "$LLVM/llvm-cov" report -show-functions "${DEMANGLE[@]}" "$first" "${objs[@]}" \
    -instr-profile="$prof" -show-branch-summary=false "$ROOT"/src/simd/{x86,avx2,avx512,avx512_utf8}.rs \
    "$ROOT"/src/dispatch/{avx2,avx512}.rs 2>/dev/null |
    awk '$1 ~ /(simd|dispatch)::(x86|avx2|avx512|avx512_utf8)::/ && $1 !~ /closure/ { sub(/.*rpcscan::/, "", $1); n = $1 " " $NF
      if ($NF == "0.00%") miss = miss " " n; else ran = ran " " n }
      END { print "  x86 kernels run:    " ran; print "  x86 kernels unrun: " miss }'
}

echo "rpcscan fuzz coverage: $(git -C "$ROOT" rev-parse --short HEAD) (src digest $(src_digest)$(
  [ -n "$(git -C "$ROOT" status --porcelain src)" ] && echo ", src/ has uncommitted changes")), $(date -u '+%F %T') UTC"
echo "toolchain: $(rustc +"$TC" --version); $(cargo +"$TC" fuzz --version)"
echo "targets: ${targets[*]}; levels: ${levels[*]}; corpora: corpus/<target>${FUZZ_WORK:+ + $FUZZ_WORK/<target>}"
digest0=$(src_digest)
t_all=$(date +%s)
# A campaign may still be adding to (and reducing) the working corpora: replay a snapshot
# (hard links), the same one at every level.
snap=$OUT/.work
rm -rf "$snap"
if [ -n "${FUZZ_WORK:-}" ]; then
  mkdir -p "$snap"
  for t in "${targets[@]}"; do
    [ -d "$FUZZ_WORK/$t" ] || continue
    mkdir -p "$snap/$t"
    find "$FUZZ_WORK/$t" -maxdepth 1 -type f -exec cp -l -t "$snap/$t" {} + 2>/dev/null ||
      find "$FUZZ_WORK/$t" -maxdepth 1 -type f -exec cp -t "$snap/$t" {} +
  done
fi
unions=()
for lv in "${levels[@]}"; do
  if [ "$lv" = native ]; then force=${RPCSCAN_FORCE:-}; else force=$lv; fi
  name=$(effective_level "$force")
  [ -n "${COV_REPORT_ONLY:-}" ] && name=earlier-run levels=(earlier-run)
  dir=$OUT/$name
  rm -rf "$dir" && mkdir -p "$dir"
  echo
  echo "== kernel level $name (RPCSCAN_FORCE=${force:-unset}) =="
  bins=()
  profs=()
  for t in "${targets[@]}"; do
    corpora=("corpus/$t")
    [ -d "$snap/$t" ] && corpora+=("$snap/$t")
    files=$(find "${corpora[@]}" -maxdepth 1 -type f | wc -l)
    t0=$(date +%s)
    if [ -n "${COV_REPORT_ONLY:-}" ]; then
      [ -f "coverage/$t/coverage.profdata" ] || { echo "$t: no coverage/$t/coverage.profdata"; continue; }
    elif ! rm -rf "coverage/$t" || # cargo-fuzz merges whatever raw profiles it finds there
      ! RPCSCAN_FORCE=$force "${NICE[@]}" cargo +"$TC" fuzz coverage -a "${jobs[@]}" "$t" "${corpora[@]}" \
      >"$dir/$t.log" 2>&1; then
      echo "$t: cargo fuzz coverage FAILED after $(($(date +%s) - t0)) s (see $dir/$t.log)"
      continue
    fi
    cp "coverage/$t/coverage.profdata" "$dir/$t.profdata"
    report "$dir/$t.profdata" "$dir/$t.txt" "$BIN_DIR/$t"
    bins+=("$BIN_DIR/$t")
    profs+=("$dir/$t.profdata")
    total_line "$t" "$dir/$t.txt" | sed "s/\$/   [$files inputs, $(($(date +%s) - t0)) s]/"
  done
  [ ${#profs[@]} -gt 0 ] || continue
  "${NICE[@]}" "$LLVM/llvm-profdata" merge -sparse "${profs[@]}" -o "$dir/union.profdata"
  report "$dir/union.profdata" "$dir/union.txt" "${bins[@]}"
  total_line "union" "$dir/union.txt"
  file_table "$dir/union.txt"
  kernels "$dir/union.profdata" "${bins[@]}"
  unions+=("$dir/union.profdata")
  union_bins=("${bins[@]}")
done

if [ ${#unions[@]} -gt 1 ]; then
  echo
  echo "== union over levels: ${levels[*]} =="
  "${NICE[@]}" "$LLVM/llvm-profdata" merge -sparse "${unions[@]}" -o "$OUT/all.profdata"
  report "$OUT/all.profdata" "$OUT/all.txt" "${union_bins[@]}"
  total_line "all levels" "$OUT/all.txt"
  file_table "$OUT/all.txt"
  kernels "$OUT/all.profdata" "${union_bins[@]}"
fi

rm -rf "$snap"
echo
echo "wall time $(($(date +%s) - t_all)) s; full tables in $OUT/<level>/{<target>,union}.txt"
[ "$(src_digest)" = "$digest0" ] || echo "WARNING: src/ changed during the run; binaries may differ across targets"
