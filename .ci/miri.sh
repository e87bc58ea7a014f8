#!/usr/bin/env bash
# Undefined-behaviour checks of the scalar paths (issue 5). Runs a curated set of tests
# under miri when the nightly `miri` component can be installed, otherwise the same tests
# under AddressSanitizer; prints which one ran. Miri always takes the scalar/SWAR kernels
# (src/simd routes on `cfg(miri)`); the SIMD kernels are covered by the fuzz targets,
# which run under ASan (.ci/fuzz.sh).
#
# Budget: about 6 minutes of interpretation on a 2-core machine. Left out, as too slow
# interpreted (each > 2 min) or meaningless without SIMD levels: the every-level SIMD
# tests, spec::section_2_json_validity (1 025-deep nesting), jsontestsuite's oracle
# cross-check (serde_json on 100 000 brackets), and the framing chunking/limit proptests.
# Proptests that stay run a handful of cases under cfg(miri) (tests/differential.rs);
# the corpus replays of tests/regressions.rs are skipped (file system, size).
#
#   MIRI_FORCE_ASAN=1  skip miri and use the AddressSanitizer fallback
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "miri.sh: FAILED: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
  exit 1
fi

# lib unit tests: everything but the SIMD level comparisons.
lib_args=(--lib -- --skip simd::tests::string_scans_agree_on_every_level
  --skip simd::tests::window_masks_are_exact_on_every_length_alignment_and_offset
  --skip simd::skipper::tests::every_level_matches_the_naive_walk
  --skip simd::skipper::tests::every_level_skips_strings_as_the_byte_walk
  --skip simd::stage1::tests::cursor_matches_the_byte_walk
  --skip scan::stage2::tests::fast_path_agrees_on_token_soup
  --skip scan::stage2::tests::every_length_alignment_and_boundary
  --skip simd::skipper::tests::every_length_alignment_and_boundary
  --skip simd::tests::plain_windows_agree_with_the_bytes
  --skip simd::tests::string_runs_stop_at_the_first_quote_or_backslash)
spec_args=(--test spec -- --skip section_2_json_validity)
suite_args=(--test jsontestsuite -- --exact y_files_are_accepted n_files_are_rejected
  accepted_files_wrapped_in_params_are_notifications)
framing_args=(--test framing -- --exact content_length_errors content_length_table
  detection_and_decoder json_seq_limits json_seq_table ndjson_bom_reaches_the_scanner
  ndjson_frames_are_zero_copy ndjson_limits ndjson_table owned_message_table
  owned_types_cross_threads sse_body_offset sse_event_types_repeat_and_change sse_fields
  sse_table)
differential_args=(--test differential)
regressions_args=(--test regressions)

if [ "${MIRI_FORCE_ASAN:-0}" != 1 ] &&
  rustup component add --toolchain nightly miri rust-src >/dev/null 2>&1; then
  tool=miri
  # Isolation off: the tests read files (JSONTestSuite in tests/data/, the fuzz corpora).
  export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
  cargo +nightly miri setup
  runner=(cargo +nightly miri test -p rpcscan)
else
  tool="AddressSanitizer (miri unavailable)"
  # The explicit target keeps build scripts and proc macros uninstrumented.
  export RUSTFLAGS="${RUSTFLAGS:-} -Zsanitizer=address"
  export RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -Zsanitizer=address"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
  runner=(cargo +nightly test -p rpcscan --target x86_64-unknown-linux-gnu)
fi
echo "=== miri.sh: running the curated scalar-path tests under $tool"

for set in lib_args spec_args suite_args framing_args differential_args regressions_args; do
  declare -n args=$set
  echo
  echo "=== miri.sh [$tool]: ${args[*]}"
  "${runner[@]}" "${args[@]}"
done

echo
echo "miri.sh: curated tests passed under $tool ($((SECONDS - started))s)"
