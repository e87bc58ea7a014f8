//! Where a run writes: buffered stdout, `rpcscan:` notes on stderr, and why a run stops.

use std::io::{self, BufWriter, StdoutLock, Write};

/// Why a run stopped early.
#[derive(Debug)]
pub enum Stop {
    /// The reader of our stdout went away (`| head`): finish quietly.
    BrokenPipe,
    /// Writing stdout failed otherwise.
    Output(io::Error),
    /// A worker panicked (a bug): reported, exit 2.
    Panic,
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Stop::BrokenPipe
        } else {
            Stop::Output(e)
        }
    }
}

/// Buffered, locked stdout.
pub struct Output {
    w: BufWriter<StdoutLock<'static>>,
}

impl Output {
    /// Locks stdout for the whole run.
    pub fn stdout() -> Output {
        Output {
            w: BufWriter::with_capacity(128 * 1024, io::stdout().lock()),
        }
    }

    /// Writes bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        self.w.write_all(bytes).map_err(Stop::from)
    }

    /// Pushes everything written so far to the reader.
    pub fn flush(&mut self) -> Result<(), Stop> {
        self.w.flush().map_err(Stop::from)
    }
}

/// Prints `rpcscan: <what>` on stderr, ignoring a closed stderr.
pub fn warn(what: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr().lock(), "rpcscan: {what}");
}
