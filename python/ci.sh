#!/usr/bin/env bash
# The Python package's CI (.ci/run calls it): formats and lints the extension crate (its own
# workspace, so the root's cargo fmt / clippy do not see it), builds it with maturin into a
# fresh virtual environment with the pinned test dependencies (requirements-dev.txt), and
# runs pytest: the rule book's table (written by spectable/ from the oracle), scan against
# `rpcscan classify --json`, pair against `rpcscan pair --json` and the oracle's pairing
# reference (spectable's `pairlog`), pandas / Polars / DuckDB round trips, the docstrings'
# examples.
#
#   RPCSCAN_PY_TARGET  cargo target dir of the extension (default:
#                      $HOME/.cache/rpcscan/target-py; pyo3 and arrow stay out of the root's)
#   RPCSCAN_PY_VENV    where the fresh virtual environment goes (default: a temporary dir)
#   PYTHON             the interpreter to build the venv from (default: python3)
#   RPCSCAN_PY_LARGE_MB  the generated log scan() is checked on, in MB (default 50)
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
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests

echo "python package CI took $((SECONDS - start))s"
