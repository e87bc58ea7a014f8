#!/usr/bin/env bash
# The JavaScript package's CI (.ci/run calls it): formats and lints the binding crates (their
# own workspace, so the root's cargo fmt / clippy do not see them), runs their unit tests,
# writes the rule book's table (python/spectable, the rows the Rust and Python tests check),
# installs the pinned npm packages (npm ci: package-lock.json), builds the N-API add-on
# (napi build), the WebAssembly module (wasm32-unknown-unknown with simd128, .cargo/config.toml)
# and its portable twin (no simd128, dist-portable/: the tests compare the two) and the
# TypeScript (strict; the wasm entry is also checked without Node's types), checks that the committed
# src/binding.d.ts is what napi-rs generates, and runs `node --test` (every test on both
# builds). Then the example gateway (examples/gateway.ts) between the official MCP SDK
# client and server-everything, its session compared with a direct one, and the
# benchmark script once in check mode (its counts, no timing).
#
#   RPCSCAN_JS_TARGET  cargo target dir of the bindings (default:
#                      $HOME/.cache/rpcscan/target-js; napi stays out of the root's)
#   NODE               the node binary (default: node; Node 20 or later)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
start=$SECONDS
node="${NODE:-node}"

major=$("$node" -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "error: Node $("$node" --version) is too old: the package needs Node 20 or later" >&2
  exit 1
fi
echo "node $("$node" --version), npm $(npm --version)"

# The CLI the respond tests compare against, built with the root workspace's settings.
root_target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build -q -p rpcscan-cli --bin rpcscan)
export RPCSCAN_BIN="$root_target/debug/rpcscan" RPCSCAN_REQUIRE_CLI=1

export CARGO_TARGET_DIR="${RPCSCAN_JS_TARGET:-$HOME/.cache/rpcscan/target-js}"
cd "$here"
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 ||
  rustup target list --installed | grep -qx wasm32-unknown-unknown

echo "--- cargo fmt --check, clippy, unit tests (js/)"
# Only this workspace's crates: `--all` would also check the path dependencies (the root crate).
cargo fmt -p rpcscan-js-core -p rpcscan-napi -p rpcscan-wasm -p rpcscan-js-bench-corpus -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p rpcscan-wasm --target wasm32-unknown-unknown -- -D warnings
cargo test -q -p rpcscan-js-core -p rpcscan-wasm

echo "--- the rule book's table as JSON (python/spectable)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo run -q --locked --release --manifest-path "$repo/python/Cargo.toml" \
  -p rpcscan-python-spectable --bin rpcscan-python-spectable > "$work/spec-table.json"
export RPCSCAN_SPEC_TABLE="$work/spec-table.json"

echo "--- npm ci (package-lock.json), build: N-API add-on, WebAssembly module, TypeScript"
npm ci --no-audit --no-fund --loglevel=error
npm run -s build
if ! git -C "$here" diff --exit-code -- src/binding.d.ts; then
  echo "error: src/binding.d.ts is not what napi-rs generates from napi/src/lib.rs: commit the new one" >&2
  exit 1
fi

echo "--- node --test (each test on the N-API and the WebAssembly build)"
"$node" --test test/

echo "--- the example gateway between the official SDK client and server-everything (examples/interop.sh)"
bash examples/interop.sh

echo "--- the benchmark script in check mode: every contender's kinds, no timing (bench/bench.mjs)"
"$node" bench/bench.mjs --check

echo "js package CI took $((SECONDS - start))s"
