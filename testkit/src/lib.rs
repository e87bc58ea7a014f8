//! What rpcscan's fuzz targets and integration tests share, written once (not published).
//!
//! | module | what it is |
//! |---|---|
//! | [`check`] | the properties, as functions that panic on a violation: the fuzz targets check them, and `tests/differential.rs` and `tests/regressions.rs` replay them, so every finding replays the exact check that caught it |
//! | [`gateway`] | the gateway toolkit property: id rewriting, the id map, owned messages, member lookups, MCP routing keys and headers tell the truth (`gateway` target, `tests/regressions.rs`) |
//! | [`frames`] | the framing property: any chunking gives the frames and errors of the whole stream (`frames` target, `tests/regressions.rs`) |
//! | [`alloc`] | the counting global allocator of the no-allocation tests ([`install_counting_allocator!`]) |
//!
//! The reference classifier itself is `rpcscan_oracle` (docs/spec.md §8), and the rule
//! book's examples are its table (`rpcscan_oracle::table`).

pub mod alloc;
pub mod check;
pub mod frames;
pub mod gateway;
