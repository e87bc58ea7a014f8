//! Shared code of rpcscan's fuzz targets (one target per property, `fuzz_targets/`).
//!
//! | module | what it is |
//! |---|---|
//! | [`check`] | the properties, as functions that panic on a violation; also compiled into `tests/regressions.rs` so every finding replays the exact check that caught it |
//! | [`gateway`] | the gateway toolkit property: id rewriting, the id map, owned messages, member lookups, MCP routing keys and headers tell the truth (`gateway`); also compiled into `tests/regressions.rs` |
//! | [`frames`] | the framing property: any chunking gives the frames and errors of the whole stream (`frames`); also compiled into `tests/regressions.rs` |
//! | [`model`] | the `arbitrary`-driven generator of valid-but-nasty messages (`structured`) |
//!
//! The reference classifier itself is `rpcscan_oracle` (SPEC §8), shared with the
//! integration tests and the benchmarks.

pub mod check;
pub mod frames;
pub mod gateway;
pub mod model;
