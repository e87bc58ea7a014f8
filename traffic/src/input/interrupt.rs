//! Ctrl-C as the end of the input, for a subcommand that reports at the end (`rpcscan
//! pair` on `tail -f server.log`): the first SIGINT ends the input where it is (blocks
//! already read are finished and counted, the report is printed), a second one exits at
//! once with status 130.
//!
//! The signal handler is the product's (the `rpcscan` binary catches it with tokio's
//! handler on a thread of its own and calls [`interrupt`]); the engine only keeps the flag.
//! The NDJSON pipeline notices the flag within `POLL` (50 ms), even while its reader thread is
//! blocked on a pipe. A framed stream (Content-Length, SSE, json-seq) is read on the
//! calling thread and notices it after its current read returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a waiting pipeline looks at the flag.
pub(super) const POLL: Duration = Duration::from_millis(50);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// `true` once the input was ended by [`interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Ends the input where it is, as Ctrl-C does (the product installs the signal handler:
/// `rpcscan pair` on a thread of its own). Returns `true` when the input was already
/// ended: a second Ctrl-C, which the product answers by exiting.
pub fn interrupt() -> bool {
    INTERRUPTED.swap(true, Ordering::SeqCst)
}
