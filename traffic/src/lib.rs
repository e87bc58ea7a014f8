//! The engine under rpcscan's products (the `rpcscan` command line, the Python package, the
//! proxy and the gateway): JSON-RPC / MCP traffic read from files, pipes, in-memory bytes
//! and log lines, in input order and in parallel; the log records the proxy and the gateway
//! write (and the readers of every log); pairing of responses to requests over those inputs;
//! globs, durations and the method/tool policy. Built on the `rpcscan` library's scanner,
//! matcher and framings; a product adds its arguments and its output only.
//!
//! | module | its one job |
//! |---|---|
//! | [`input`] | inputs → messages in order: mmap + rayon for NDJSON, framed streams, log-line extraction |
//! | [`log`] | the one log record writer of `rpcscan proxy` and `rpcscan gateway` |
//! | [`pair`] | the matcher over the engine's inputs; the product supplies a [`pair::Report`] |
//! | [`policy`] | which client methods and tools a proxy forwards (globs) |
//! | [`glob`] | `*` and `?` over names |
//! | [`duration`] | the one duration grammar of every flag (`500ms`, `1h30m`) |
//! | [`json`] | the little JSON the products write themselves |
//!
//! Features: `progress` draws a progress bar on stderr for long runs on a terminal
//! (`indicatif`); off, the engine draws nothing.
//!
//! `unsafe` here is the memory map of a regular file (`input::open`, with its `// SAFETY:`
//! note); everything else is safe code.
#![deny(missing_docs, clippy::undocumented_unsafe_blocks)]

pub mod duration;
pub mod glob;
pub mod input;
pub mod json;
pub mod log;
pub mod pair;
pub mod policy;

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
