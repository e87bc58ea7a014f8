//! Where a run writes: buffered stdout, `rpcscan:` notes on stderr (or kept: [`Notes`]), and
//! why a run stops.

use std::io::{self, BufWriter, Write};
use std::sync::{Arc, Mutex, PoisonError};

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

/// Where a run's notes go (an input that looks binary, a read error): stderr as
/// `rpcscan: <note>` ([`Notes::stderr`], the default), or kept for the caller to show its
/// own way ([`Notes::collect`]: the Python package turns them into `warnings`).
#[derive(Clone, Debug, Default)]
pub struct Notes(Option<Arc<Mutex<Vec<String>>>>);

impl Notes {
    /// Notes printed on stderr.
    pub fn stderr() -> Notes {
        Notes(None)
    }

    /// Notes kept, for [`Notes::take`].
    pub fn collect() -> Notes {
        Notes(Some(Arc::default()))
    }

    /// Notes one thing.
    pub fn note(&self, what: std::fmt::Arguments<'_>) {
        match &self.0 {
            None => warn(what),
            Some(kept) => {
                kept.lock().unwrap_or_else(PoisonError::into_inner).push(what.to_string())
            }
        }
    }

    /// The notes kept so far, in order (none for [`Notes::stderr`]); they are forgotten.
    pub fn take(&self) -> Vec<String> {
        match &self.0 {
            None => Vec::new(),
            Some(kept) => std::mem::take(&mut *kept.lock().unwrap_or_else(PoisonError::into_inner)),
        }
    }
}
