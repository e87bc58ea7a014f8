//! Ctrl-C as the end of the input, for a subcommand that reports at the end (`rpcscan
//! pair` on `tail -f server.log`): the first SIGINT ends the engine's input where it is
//! (`rpcscan_traffic::input::interrupt`), a second one exits at once with status 130.
//!
//! The signal is caught by tokio's handler on a thread of its own (no `unsafe` here).

use std::io;
use std::thread;

use rpcscan_traffic::input::interrupt;

/// From now on, Ctrl-C ends the input instead of the process; a second one exits (130).
/// The handler is in place when this returns.
pub fn end_input_on_ctrl_c() -> io::Result<()> {
    // Once per process (`pair --follow` asks twice): two handlers would take one Ctrl-C
    // for two.
    static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if INSTALLED.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut sigint = runtime.block_on(async { signal(SignalKind::interrupt()) })?;
        thread::Builder::new().name("ctrl-c".to_owned()).spawn(move || {
            runtime.block_on(async move {
                while sigint.recv().await.is_some() {
                    if interrupt::interrupt() {
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
                    if interrupt::interrupt() {
                        std::process::exit(130);
                    }
                }
            });
        })?;
    }
    Ok(())
}
