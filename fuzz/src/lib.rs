//! Shared code of rpcscan's fuzz targets (one target per property, `fuzz_targets/`).
//!
//! | module | what it is |
//! |---|---|
//! | [`model`] | the `arbitrary`-driven generator of valid-but-nasty messages (`structured`) |
//!
//! The properties the targets check live in `rpcscan_testkit` (`check`, `frames`,
//! `gateway`), shared with the root crate's `tests/differential.rs` and
//! `tests/regressions.rs`; the reference classifier is `rpcscan_oracle` (docs/spec.md §8).

pub mod model;
