#!/usr/bin/env bash
# The Python package's CI (.ci/run calls it): formats and lints the extension crate (its own
# workspace, so the root's cargo fmt / clippy do not see it), builds it with maturin into a
# fresh virtual environment with the pinned test dependencies (requirements-dev.txt), and
# runs pytest: the rule book's table (written by spectable/ from the oracle), scan against
# `rpcscan classify --json`, pair against `rpcscan pair --json` and the oracle's pairing
# reference (spectable's `pairlog`), pandas / Polars / DuckDB round trips, the docstrings'
# examples. Then the `datafusion` feature (rpcscan.datafusion: rpcscan-datafusion's
# functions in PyPI `datafusion` 55 through datafusion-ffi): a debug build (profile
# ffi-test; a release build of DataFusion with LTO is far too slow on two cores) into the
# same venv with requirements-datafusion.txt, and tests/test_datafusion_ffi.py, which must
# run (RPCSCAN_REQUIRE_DATAFUSION=1 turns its skips into failures). A cold build of that
# step (DataFusion not yet in the target dir) is the long part: 12.6 min for the maturin
# build on this 2-core machine (load average about 3), and 6.5 min more for clippy of the
# feature (a check build of DataFusion), which is therefore skipped while the build is cold,
# as .ci/heavy.sh does, and runs on the next run. Warm, the step took 14 s (clippy, the
# extension relinked, the tests).
#
#   RPCSCAN_PY_TARGET  cargo target dir of the extension (default:
#                      $HOME/.cache/rpcscan/target-py; pyo3 and arrow stay out of the root's)
#   RPCSCAN_PY_VENV    where the fresh virtual environment goes (default: a temporary dir)
#   PYTHON             the interpreter to build the venv from (default: python3)
#   RPCSCAN_PY_LARGE_MB  the generated log scan() is checked on, in MB (default 50)
#   RPCSCAN_PY_DATAFUSION_CLIPPY  auto (default: lint the feature only when its build is
#                      warm), 1 (always), 0 (never)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
start=$SECONDS

# The CLI the scan tests compare against, built with the root workspace's settings.
root_target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build -q -p rpcscan-cli --bin rpcscan)
export RPCSCAN_BIN="$root_target/debug/rpcscan"

export CARGO_TARGET_DIR="${RPCSCAN_PY_TARGET:-$HOME/.cache/rpcscan/target-py}"
cd "$here"
echo "--- cargo fmt --check, clippy (python/)"
# Only this workspace's crates: `--all` would also check the path dependencies (the root crate).
cargo fmt -p rpcscan-python -p rpcscan-python-spectable -- --check
cargo clippy --workspace --all-targets -- -D warnings

echo "--- the rule book's table as JSON (spectable/)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo build -q --release -p rpcscan-python-spectable
cargo run -q --release -p rpcscan-python-spectable > "$work/spec-table.json"
export RPCSCAN_SPEC_TABLE="$work/spec-table.json"
# Generated logs with known pairs, for the pair() tests.
export RPCSCAN_PAIRLOG="$CARGO_TARGET_DIR/release/pairlog"

echo "--- a fresh virtual environment, pinned test dependencies"
venv="${RPCSCAN_PY_VENV:-$work/venv}"
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -r requirements-dev.txt

echo "--- maturin develop --release"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" develop --release -q

echo "--- pytest"
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests

echo "--- DataFusion for Python: the \`datafusion\` feature through datafusion-ffi"
df_start=$SECONDS
# Warm means a compiled DataFusion in the ffi-test profile (clippy leaves only .rmeta files).
if compgen -G "$CARGO_TARGET_DIR/ffi-test/deps/libdatafusion-*.rlib" >/dev/null; then
  df_warm=1
else
  df_warm=0
  echo "COLD: DataFusion is not built in $CARGO_TARGET_DIR/ffi-test yet (a first build)"
fi
case "${RPCSCAN_PY_DATAFUSION_CLIPPY:-auto}" in
  1) df_clippy=1 ;;
  0) df_clippy=0 ;;
  *) df_clippy=$df_warm ;;
esac
if [ "$df_clippy" = 1 ]; then
  cargo clippy --all-targets --features datafusion -- -D warnings
else
  echo "SKIPPED: clippy --features datafusion (cold build cache; the next run lints)"
fi
"$venv/bin/python" -m pip install -q -r requirements-datafusion.txt
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
  "$venv/bin/maturin" develop -q --profile ffi-test --features datafusion
RPCSCAN_REQUIRE_DATAFUSION=1 "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
  tests/test_datafusion_ffi.py
echo "DataFusion FFI step took $((SECONDS - df_start))s (cold: $((1 - df_warm)))"

echo "python package CI took $((SECONDS - start))s"
