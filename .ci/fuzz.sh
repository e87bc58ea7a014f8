#!/usr/bin/env bash
# Fuzzing in CI (issue 5): builds every cargo-fuzz target and runs each for a fixed short
# budget from its committed seed corpus, with the dictionary. Any crash, panic, leak,
# timeout or out-of-memory fails the script; the reproducer is left in
# fuzz/artifacts/<target>/ (replay: cargo +nightly fuzz run <target> <file>).
#
#   FUZZ_SECONDS=20   budget per run (libFuzzer -max_total_time)
#   FUZZ_TARGETS="…"  run only these targets (default: all of `cargo fuzz list`)
#   FUZZ_LEVELS="avx2 scalar"  kernel levels (RPCSCAN_FORCE) the `differential` target
#                     also runs at, after every target ran at the CPU's best level
#
# The committed corpus is read, never written: new inputs go to a scratch directory.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

budget=${FUZZ_SECONDS:-20}
step() { printf '\n=== fuzz: %s\n' "$*"; }
started=$SECONDS

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz.sh: FAILED: the nightly toolchain is missing; cargo-fuzz needs it." >&2
  echo "fuzz.sh: install it with: rustup toolchain install nightly --profile minimal" >&2
  exit 1
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  step "installing cargo-fuzz from crates.io"
  cargo install cargo-fuzz --locked
fi
rustup run nightly rustc --version
cargo fuzz --version

# -a: debug assertions and overflow checks on, in the library too.
step "build (all targets, AddressSanitizer, debug assertions)"
cargo +nightly fuzz build -a

targets=${FUZZ_TARGETS:-$(cargo +nightly fuzz list)}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() { # run TARGET LEVEL: one libFuzzer process; LEVEL is "" for the CPU's best
  local target=$1 level=$2
  step "run $target for ${budget}s${level:+ at RPCSCAN_FORCE=$level}"
  mkdir -p "$scratch/$target"
  local seeds=()
  if [ -d "corpus/$target" ]; then seeds=("corpus/$target"); else echo "warning: no seed corpus for $target"; fi
  local log="$scratch/$target.log"
  if ! env ${level:+RPCSCAN_FORCE=$level} cargo +nightly fuzz run -a "$target" "$scratch/$target" "${seeds[@]}" -- \
      -max_total_time="$budget" -dict=json.dict -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz.sh: FAILED: target $target${level:+ (RPCSCAN_FORCE=$level)} crashed; reproducer in fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)' "$log" || true
}

for target in $targets; do
  run "$target" ""
done
for level in ${FUZZ_LEVELS-avx2 scalar}; do
  case " $targets " in *" differential "*) run differential "$level" ;; esac
done

echo
echo "fuzz.sh: all targets ran ${budget}s without a crash ($((SECONDS - started))s in all)"
