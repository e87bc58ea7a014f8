//! The engine behind the `rpcscan` command line, as a library: files, pipes and in-memory
//! bytes → messages in input order (mmap + rayon for NDJSON, the library's decoders for the
//! other framings), and the little JSON the CLI writes itself. The `rpcscan` binary
//! (`main.rs`) and the Python package (python/, `rpcscan-python`) both drive it through
//! [`input::run`] with their own [`input::Command`].
#![deny(missing_docs, clippy::undocumented_unsafe_blocks)]

pub mod input;
pub mod json;
