//! Where a run writes: buffered stdout, `rpcscan:` notes on stderr, and why a run stops.

use std::io::{self, BufWriter, Write};

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

/// Buffered, locked stdout (or nowhere: [`Output::discard`]).
pub struct Output {
    w: BufWriter<Box<dyn Write>>,
}

impl Output {
    /// Locks stdout for the whole run.
    pub fn stdout() -> Output {
        Output { w: BufWriter::with_capacity(128 * 1024, Box::new(io::stdout().lock())) }
    }

    /// Writes nowhere: for a [`super::Command`] that collects into its tally, so that
    /// concurrent runs (the Python package's threads) do not queue on the stdout lock.
    pub fn discard() -> Output {
        Output { w: BufWriter::new(Box::new(io::sink())) }
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
