//! Ctrl-C as the end of the input, for a subcommand that reports at the end (`rpcscan
//! pair` on `tail -f server.log`): the first SIGINT ends the input where it is (blocks
//! already read are finished and counted, the report is printed), a second one exits at
//! once with status 130.
//!
//! The signal is caught by tokio's handler on a thread of its own (no `unsafe` here); the
//! NDJSON pipeline notices the flag within `POLL` (50 ms), even while its reader thread is
//! blocked on a pipe. A framed stream (Content-Length, SSE, json-seq) is read on the
//! calling thread and notices it after its current read returns.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

/// How often a waiting pipeline looks at the flag.
pub(super) const POLL: Duration = Duration::from_millis(50);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// `true` once Ctrl-C was pressed (only after [`end_input_on_ctrl_c`]).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// From now on, Ctrl-C ends the input instead of the process; a second one exits (130).
/// The handler is in place when this returns.
pub fn end_input_on_ctrl_c() -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut sigint = runtime.block_on(async { signal(SignalKind::interrupt()) })?;
        thread::Builder::new().name("ctrl-c".to_owned()).spawn(move || {
            runtime.block_on(async move {
                while sigint.recv().await.is_some() {
                    if INTERRUPTED.swap(true, Ordering::SeqCst) {
                        std::process::exit(130);
                    }
                }
            });
        })?;
    }
    #[cfg(not(unix))]
    {
        thread::Builder::new().name("ctrl-c".to_owned()).spawn(move || {
            runtime.block_on(async move {
                while tokio::signal::ctrl_c().await.is_ok() {
                    if INTERRUPTED.swap(true, Ordering::SeqCst) {
                        std::process::exit(130);
                    }
                }
            });
        })?;
    }
    Ok(())
}
