//! rpcscan's measurement programs and the baselines they compare against (not published).
//!
//! The baselines pull serde, simd-json, sonic-rs and (when Debian's `libsimdjson-dev` is
//! installed; see `build.rs`) simdjson, so they live here and not in the test kit the fuzz
//! targets share (`rpcscan-testkit`). The traffic shapes they are measured on are
//! [`shapes`]. The programs (`src/bin/`) measure rather
//! than test; build them with the benchmark profile:
//!
//! ```text
//! cargo run --profile bench -p rpcscan-benchmarks --bin ratios -- small 40   # or tiny, mixed, code, cjk, image
//! cargo run --profile bench -p rpcscan-benchmarks --bin scaling
//! cargo build --profile bench -p rpcscan-benchmarks --bin profile
//! ```
//!
//! The criterion benchmarks stay in the root crate's `benches/` (`cargo bench`), except
//! `benches/layer.rs` here (`cargo bench -p rpcscan-benchmarks --bench layer`), which
//! compares `rpcscan_tower::McpLayer` with [`serde_layer`] and needs the tower crate.

#![deny(missing_docs)]

pub mod baselines;
pub mod cli_run;
pub mod logs;
pub mod mcp_1k;
pub mod serde_layer;
pub mod shapes;
pub mod simdjson;
