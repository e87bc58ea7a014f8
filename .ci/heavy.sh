#!/usr/bin/env bash
# The heavy members: rpcscan-datafusion (datafusion/) and rpcscan-ballista (ballista/).
# They are their own workspace (rooted at datafusion/, like fuzz/), so the root workspace's
# `cargo test --workspace` never builds a query engine. This script formats, lints, builds
# and tests them (including the loopback cluster), with one cargo process at a time, then runs
# a cluster whose hosts are network namespaces (ballista/netns.sh; skipped loudly without root).
# `.ci/run` calls it last.
#
# A cold build of DataFusion + Ballista + datafusion-cli is long on a 2-core machine: 565 s
# measured (2026-12-01, the dev profile with line tables only, see datafusion/Cargo.toml;
# with full debug info it was ~21 min before datafusion-cli joined); clippy adds several
# minutes more, because it compiles every dependency a second time in check mode. So the
# target directory lives outside the clone and survives between runs. A warm run with
# nothing changed takes ~45 s, mostly the netns cluster (a change under src/ also recompiles
# rpcscan and relinks the heavy crates' binaries and tests). To keep a cold `.ci/run` well
# inside its 90 minutes, clippy is skipped when the build cache is cold (said loudly below): that run still
# formats, builds and runs every test, and the next run (warm) lints. Nothing about the build
# is changed for the cold case (same profile and features), so a cold run fills exactly the
# cache warm runs use.
#
#   RPCSCAN_HEAVY_TARGET  target dir   (default: $HOME/.cache/rpcscan/heavy-target)
#   RPCSCAN_HEAVY_JOBS    cargo -j     (default: 2)
#   RPCSCAN_HEAVY_CLIPPY  auto (default: lint only when the build cache is warm),
#                         1 (always lint, cold too), 0 (never)
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${RPCSCAN_HEAVY_TARGET:-$HOME/.cache/rpcscan/heavy-target}"
jobs="${RPCSCAN_HEAVY_JOBS:-2}"
clippy="${RPCSCAN_HEAVY_CLIPPY:-auto}"
manifest=datafusion/Cargo.toml
mkdir -p "$CARGO_TARGET_DIR"
export CARGO_INCREMENTAL=0

step() { printf '\n=== heavy: %s (%ss so far)\n' "$*" "$((SECONDS - t0))"; }
t0=$SECONDS
# Warm means a compiled DataFusion library (an .rlib: clippy's check mode leaves only .rmeta).
if compgen -G "$CARGO_TARGET_DIR/debug/deps/libdatafusion-*.rlib" >/dev/null; then
  warm=1
  echo "heavy: warm target dir $CARGO_TARGET_DIR"
else
  warm=0
  echo "heavy: COLD target dir $CARGO_TARGET_DIR (first build: DataFusion + Ballista from scratch, ~10 min on 2 cores)"
fi

step "cargo fmt --check"
cargo fmt --manifest-path "$manifest" --all -- --check

case "$clippy" in
  1) run_clippy=1 ;;
  0) run_clippy=0 ;;
  auto) run_clippy=$warm ;;
  *) echo "heavy: RPCSCAN_HEAVY_CLIPPY must be auto, 1 or 0, not '$clippy'" >&2; exit 2 ;;
esac
if [ "$run_clippy" = 1 ]; then
  step "cargo clippy"
  cargo clippy --manifest-path "$manifest" --workspace --all-targets --locked -j "$jobs" -- -D warnings
else
  cat <<EOF

############################################################################################
## heavy: CLIPPY SKIPPED for the heavy workspace (RPCSCAN_HEAVY_CLIPPY=$clippy, cache warm=$warm).
## A cold cache costs ~10 min to build; linting would add several minutes of check-mode builds.
## The next run on this machine (warm cache) lints; RPCSCAN_HEAVY_CLIPPY=1 forces it now.
############################################################################################
EOF
fi
t1=$SECONDS

step "build (the whole heavy workspace at once: one feature set, DataFusion built once)"
cargo build --manifest-path "$manifest" --workspace --all-targets --locked -j "$jobs"
t2=$SECONDS

step "tests (SQL, property, lines format, registry, loopback cluster)"
cargo test --manifest-path "$manifest" --workspace --locked -j "$jobs"
t3=$SECONDS

step "cargo package: rpcscan-datafusion is ready to publish (metadata, readme, include list)"
# Without verification: verifying would rebuild DataFusion with the crate's own feature set
# (minutes on 2 cores); the build and tests above already compile it. The library it needs,
# `rpcscan`, is not on crates.io yet: the patch resolves it from this checkout, as
# `cargo package --workspace` does in the root workspace. --allow-dirty: the tests above may
# leave files in the clone; what is packaged is the include list.
cargo package --manifest-path "$manifest" -p rpcscan-datafusion --no-verify --locked --allow-dirty \
  --config 'patch.crates-io.rpcscan.path="."'

step "cluster on separate hosts: network namespaces, an executor killed mid-query (ballista/netns.sh)"
bash ballista/netns.sh
t4=$SECONDS

# Each heavy test executable is ~0.5 GB: the ones this build superseded go now (.ci/prune.sh).
bash .ci/prune.sh "$CARGO_TARGET_DIR"

echo
echo "heavy: fmt+clippy $((t1 - t0))s, build $((t2 - t1))s, tests $((t3 - t2))s, netns $((t4 - t3))s, total $((t4 - t0))s (clippy: $([ "$run_clippy" = 1 ] && echo ran || echo SKIPPED), cache was $([ "$warm" = 1 ] && echo warm || echo cold))"
