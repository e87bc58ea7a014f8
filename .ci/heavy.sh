#!/usr/bin/env bash
# The heavy members: rpcscan-datafusion (datafusion/) and rpcscan-ballista (ballista/).
# They are their own workspace (rooted at datafusion/, like fuzz/), so the root workspace's
# `cargo test --workspace` never builds a query engine. This script formats, lints, builds
# and tests them, with one cargo process at a time.
#
# A cold build of DataFusion + Ballista is long on a 2-core machine, so the target directory
# lives outside the clone and survives between runs:
#   RPCSCAN_HEAVY_TARGET  target dir   (default: $HOME/.cache/rpcscan/heavy-target)
#   RPCSCAN_HEAVY_JOBS    cargo -j     (default: 2)
#   RPCSCAN_HEAVY_CLIPPY  0 skips clippy (it compiles every dependency a second time, in
#                         check mode: worth it warm, costly cold)
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${RPCSCAN_HEAVY_TARGET:-$HOME/.cache/rpcscan/heavy-target}"
jobs="${RPCSCAN_HEAVY_JOBS:-2}"
manifest=datafusion/Cargo.toml
mkdir -p "$CARGO_TARGET_DIR"

step() { printf '\n=== heavy: %s\n' "$*"; }
t0=$(date +%s)
if [ -d "$CARGO_TARGET_DIR/debug/deps" ] && ls "$CARGO_TARGET_DIR/debug/deps" | grep -q '^libdatafusion-'; then
  echo "heavy: warm target dir $CARGO_TARGET_DIR"
else
  echo "heavy: cold target dir $CARGO_TARGET_DIR (first build: DataFusion + Ballista from scratch)"
fi

step "cargo fmt --check"
cargo fmt --manifest-path "$manifest" --all -- --check

if [ "${RPCSCAN_HEAVY_CLIPPY:-1}" != 0 ]; then
  step "cargo clippy"
  cargo clippy --manifest-path "$manifest" --workspace --all-targets --locked -j "$jobs" -- -D warnings
fi

step "build (the whole heavy workspace at once: one feature set, DataFusion built once)"
cargo build --manifest-path "$manifest" --workspace --all-targets --locked -j "$jobs"
t1=$(date +%s)

step "tests (SQL, property, lines format, registry, loopback cluster)"
cargo test --manifest-path "$manifest" --workspace --locked -j "$jobs"
t2=$(date +%s)

echo
echo "heavy: build $((t1 - t0))s, tests $((t2 - t1))s, total $((t2 - t0))s"
