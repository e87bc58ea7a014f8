#!/usr/bin/env bash
# The Python package's CI (.ci/run calls it): formats and lints the extension crate (its own
# workspace, so the root's cargo fmt / clippy do not see it), builds the wheel with maturin
# (`maturin build --release`, manylinux_2_34: the tag glibc 2.34+ symbols allow, checked
# with the pinned auditwheel), installs it into a fresh virtual environment with the pinned
# test dependencies (requirements-dev.txt), and runs pytest: the rule book's table (written by spectable/ from the oracle), scan against
# `rpcscan classify --json`, pair against `rpcscan pair --json` and the oracle's pairing
# reference (spectable's `pairlog`), pandas / Polars / DuckDB round trips, the docstrings'
# examples. Then every ```python block of README.md on its own (tests/readme_blocks.py:
# a fresh directory and interpreter each), and the build without cargo on PATH, which must
# stop with the package's message (build_backend/) instead of downloading a toolchain.
# Warm (2026-12-06, load about 7, the extension relinked after a change), everything before
# the DataFusion step took 69 s; cold, the release build is the one `maturin develop
# --release` did before, so these steps add little beyond it. Then the `datafusion` feature (rpcscan.datafusion: rpcscan-datafusion's
# functions in PyPI `datafusion` 55 through datafusion-ffi): a debug build (profile
# ffi-test; a release build of DataFusion with LTO is far too slow on two cores) into the
# same venv with requirements-datafusion.txt, and tests/test_datafusion_ffi.py, which must
# run (RPCSCAN_REQUIRE_DATAFUSION=1 turns its skips into failures). A cold build of that
# step (DataFusion not yet in the target dir) is the long part: 12.6 min for the maturin
# build on this 2-core machine (load average about 3), and 6.5 min more for clippy of the
# feature (a check build of DataFusion), which is therefore skipped while the build is cold,
# as .ci/heavy.sh does, and runs on the next run. Warm, the step took 14 s (clippy, the
# extension relinked, the tests).
# Then the `polars` feature (the `.rpc` expression namespace, a Polars plugin built with
# pyo3-polars against PyPI `polars` 2.1.0 from requirements-dev.txt) the same way: a debug
# build into the same venv, and tests/test_polars.py with RPCSCAN_REQUIRE_POLARS=1 (the
# plugin's tests must run). Cold, on this 2-core AMD EPYC under other builds (load 9-16):
# the build of Polars' crates and the extension 13.7 min wall, 5.3 min of CPU; clippy of the
# feature, skipped while cold, 10.5 min wall (2.9 min CPU) on the next run. Warm: 28 s.
#
#   RPCSCAN_PY_TARGET  cargo target dir of the extension (default:
#                      $HOME/.cache/rpcscan/target-py; pyo3 and arrow stay out of the root's)
#   RPCSCAN_PY_VENV    where the fresh virtual environment goes (default: a temporary dir)
#   PYTHON             the interpreter to build the venv from (default: python3)
#   RPCSCAN_PY_LARGE_MB  the generated log scan() is checked on, in MB (default 50)
#   RPCSCAN_PY_DATAFUSION_CLIPPY  auto (default: lint the feature only when its build is
#                      warm), 1 (always), 0 (never)
#   RPCSCAN_PY_POLARS_CLIPPY  the same for the `polars` feature
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
echo "--- cargo test --lib: the column arrays through arrow's own checks (a debug build)"
# read_log's arrays skip arrow's checks in release builds (src/columns.rs); debug builds make
# them with the checks, here over a generated log read by the engine in both modes. Cold,
# the debug build took 3.4 min on the 2-core EPYC at load 10 (2026-12-06); warm, seconds.
cargo test -q --lib -p rpcscan-python

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

echo "--- maturin build --release: the wheel, its manylinux tag checked by auditwheel"
# Debian 12's glibc is 2.36; the extension uses symbols up to GLIBC_2.34, so the most a
# wheel built here can honestly claim is manylinux_2_34 (an older tag needs an older
# glibc to build on, a manylinux image or zig, which this offline build does not use).
manylinux=manylinux_2_34
wheels="$work/wheels"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --release -q \
  --interpreter "$venv/bin/python" --compatibility "$manylinux" --auditwheel check -o "$wheels"
wheel="$(ls "$wheels"/rpcscan-*-cp39-abi3-"$manylinux"_x86_64.whl)"
"$venv/bin/auditwheel" show "$wheel" | tee "$work/auditwheel.txt"
tr -s ' \n' ' ' < "$work/auditwheel.txt" | grep -q "consistent with the following platform tag: \"${manylinux}_x86_64\"" \
  || { echo "auditwheel: $wheel is not $manylinux"; exit 1; }
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel"

echo "--- pytest"
# From another directory, so that the installed wheel is imported, not python/rpcscan/.
(cd "$work" && "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$here/tests")

echo "--- README.md: each python block on its own"
"$venv/bin/python" tests/readme_blocks.py README.md --without datafusion --without polars

echo "--- without cargo on PATH, the build stops with a clear message"
nocargo="$work/no-cargo-path"
mkdir -p "$nocargo"
for tool in sh bash env uname; do ln -sf "$(command -v "$tool")" "$nocargo/$tool"; done
if PATH="$venv/bin:$nocargo" "$venv/bin/python" -m pip wheel -q --no-build-isolation --no-deps \
  -w "$work/no-cargo-wheel" . >"$work/no-cargo.log" 2>&1; then
  echo "the build succeeded without cargo on PATH"; exit 1
fi
grep -q "rpcscan: building the package needs Rust" "$work/no-cargo.log" \
  || { cat "$work/no-cargo.log"; echo "no clear message without cargo"; exit 1; }
if grep -qi "puccinialin\|installing into a temporary directory" "$work/no-cargo.log"; then
  cat "$work/no-cargo.log"; echo "the build tried to install Rust"; exit 1
fi

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
"$venv/bin/python" tests/readme_blocks.py README.md --only datafusion
echo "DataFusion FFI step took $((SECONDS - df_start))s (cold: $((1 - df_warm)))"

echo "--- Polars: the \`polars\` feature (the .rpc expression plugin, pyo3-polars)"
pl_start=$SECONDS
# Warm means Polars' crates compiled in the ffi-test profile (clippy leaves only .rmeta).
if compgen -G "$CARGO_TARGET_DIR/ffi-test/deps/libpolars_plan-*.rlib" >/dev/null; then
  pl_warm=1
else
  pl_warm=0
  echo "COLD: Polars is not built in $CARGO_TARGET_DIR/ffi-test yet (a first build)"
fi
case "${RPCSCAN_PY_POLARS_CLIPPY:-auto}" in
  1) pl_clippy=1 ;;
  0) pl_clippy=0 ;;
  *) pl_clippy=$pl_warm ;;
esac
if [ "$pl_clippy" = 1 ]; then
  cargo clippy --all-targets --features polars -- -D warnings
else
  echo "SKIPPED: clippy --features polars (cold build cache; the next run lints)"
fi
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" \
  "$venv/bin/maturin" develop -q --profile ffi-test --features polars
RPCSCAN_REQUIRE_POLARS=1 "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
  tests/test_polars.py
"$venv/bin/python" tests/readme_blocks.py README.md --only polars
echo "Polars plugin step took $((SECONDS - pl_start))s (cold: $((1 - pl_warm)))"

echo "python package CI took $((SECONDS - start))s"
