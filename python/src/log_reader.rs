//! `LogReader`: a log file's rows as a stream of Arrow record batches, for `scan_log`'s
//! Polars IO source (`rpcscan/polars.py`). The engine runs on a thread of its own with
//! `scan`'s row builder (`crate::scan::Collect`), told which columns to fill and which kinds
//! to keep; each block of input becomes a batch as soon as it is merged, in input order, and
//! waits in a bounded channel until Python asks for it (so a slow consumer holds at most
//! `QUEUE` batches and the engine's window in memory). When the reader is closed or dropped
//! (Polars has all the rows it asked for), the engine stops within its poll interval.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rpcscan::Kind;
use rpcscan_traffic::input::{self, Command, Input, Item, Output, Source, Stop};

use crate::scan::{Collect, Prepared, Rows, Table};

/// Batches waiting for Python.
const QUEUE: usize = 4;
/// Rows a framed stream (read in order, never merged) gathers before they make a batch.
const STREAM_BATCH: usize = 64 * 1024;

/// What the engine thread sends: a batch, or why the run failed.
type Sent = Result<RecordBatch, String>;

/// `Collect`, sending each merged block's batch down the channel.
struct Streaming {
    collect: Collect,
    batches: SyncSender<Sent>,
    /// The receiver is gone (or asked to stop): end the input.
    stop: Arc<AtomicBool>,
    /// Rows sent.
    rows: Arc<AtomicU64>,
}

impl Streaming {
    fn send(&self, rows: &mut Rows) {
        if self.stop.load(Ordering::Relaxed) {
            return;
        }
        rows.flush();
        let sent = match rows.take_batches() {
            Ok(batches) => batches,
            Err(e) => {
                let _ = self.batches.send(Err(e.to_string()));
                self.stop.store(true, Ordering::Relaxed);
                return;
            }
        };
        for batch in sent {
            let n = batch.num_rows() as u64;
            if self.batches.send(Ok(batch)).is_err() {
                self.stop.store(true, Ordering::Relaxed);
                return;
            }
            self.rows.fetch_add(n, Ordering::Relaxed);
        }
    }
}

impl Command for Streaming {
    type Tally = Rows;

    fn item(&self, source: &Source, item: &Item<'_>, out: &mut Vec<u8>, rows: &mut Rows) {
        self.collect.item(source, item, out, rows);
    }

    fn item_in_order(&self, source: &Source, item: &Item<'_>, out: &mut Vec<u8>, rows: &mut Rows) {
        self.collect.item(source, item, out, rows);
        if rows.len() >= STREAM_BATCH {
            self.send(rows);
        }
    }

    fn merge(&self, into: &mut Rows, from: Rows) {
        self.collect.merge(into, from);
        self.send(into);
    }

    fn wants_lines(&self) -> bool {
        self.collect.wants_lines()
    }

    fn numbers_lines_at_merge(&self) -> bool {
        self.collect.numbers_lines_at_merge()
    }

    fn merge_lines(&self, into: &mut Rows, from: Rows, first_line: u64) {
        self.collect.merge_lines(into, from, first_line);
        self.send(into);
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A log file read in the background: iterate it for `rpcscan.Table`s of one batch each.
#[pyclass(module = "rpcscan._rpcscan")]
pub struct LogReader {
    batches: Mutex<Option<Receiver<Sent>>>,
    stop: Arc<AtomicBool>,
    rows: Arc<AtomicU64>,
}

#[pymethods]
impl LogReader {
    /// Starts reading `path` with `read_log`'s options (`mmap`: map the file instead of
    /// reading it); `columns` names the columns to fill,
    /// `kinds` the kinds to keep (`None`: all).
    #[new]
    #[pyo3(signature = (path, framing, mode, max_message_size, line_format, json_field, columns, kinds, mmap = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        path: PathBuf,
        framing: &str,
        mode: &str,
        max_message_size: usize,
        line_format: Option<&str>,
        json_field: Option<&str>,
        columns: Option<Vec<String>>,
        kinds: Option<Vec<String>>,
        mmap: bool,
    ) -> PyResult<LogReader> {
        let settings = crate::scan::settings(
            framing,
            mode,
            max_message_size,
            line_format,
            json_field,
            None,
            None,
        )?;
        // As `read_log`: positioned reads unless asked to map the file.
        let settings = input::Settings { mmap, ..settings };
        let columns = match columns {
            None => u32::MAX,
            Some(names) => {
                let schema = crate::scan::schema();
                let mut mask = 0u32;
                for name in names {
                    let i = schema.index_of(&name).map_err(|_| {
                        PyValueError::new_err(format!("columns: no column {name:?}"))
                    })?;
                    // Columns past the mask's width are always filled.
                    mask |= 1u32.checked_shl(i as u32).unwrap_or(0);
                }
                mask
            }
        };
        let kinds = match kinds {
            None => u8::MAX,
            Some(names) => {
                let mut mask = 0u8;
                for name in names {
                    let i = Kind::ALL.iter().position(|k| k.as_str() == name).ok_or_else(|| {
                        PyValueError::new_err(format!("kinds: unknown kind {name:?}"))
                    })?;
                    mask |= 1 << i;
                }
                mask
            }
        };
        let Prepared::Engine { input, .. } = Prepared::path(path)? else {
            return Err(PyRuntimeError::new_err("internal error: a path is read by the engine"));
        };
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let rows = Arc::new(AtomicU64::new(0));
        let cmd = Streaming {
            collect: Collect { columns, kinds },
            batches: tx,
            stop: Arc::clone(&stop),
            rows: Arc::clone(&rows),
        };
        std::thread::Builder::new()
            .name("rpcscan-log-reader".to_owned())
            .spawn(move || run(cmd, settings, input))
            .map_err(|e| PyOSError::new_err(format!("cannot start the reader thread: {e}")))?;
        Ok(LogReader { batches: Mutex::new(Some(rx)), stop, rows })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next batch as a one-batch `rpcscan.Table`, waiting for it without the GIL.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Table>> {
        let mut guard =
            self.batches.lock().map_err(|_| PyRuntimeError::new_err("the reader was poisoned"))?;
        // Taken out while waiting (a `Receiver` is `Send`, not `Sync`), and put back.
        let Some(rx) = guard.take() else {
            return Ok(None);
        };
        let (rx, next) = py.detach(move || {
            let next = rx.recv();
            (rx, next)
        });
        match next {
            Ok(Ok(batch)) => {
                *guard = Some(rx);
                Ok(Some(Table::new(batch)))
            }
            Ok(Err(e)) => Err(PyOSError::new_err(e)),
            // The engine finished: every batch was sent.
            Err(mpsc::RecvError) => Ok(None),
        }
    }

    /// Stops reading: the engine ends within its poll interval, batches not yet taken are
    /// dropped.
    fn close(&self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Ok(mut guard) = self.batches.lock() {
            *guard = None;
        }
    }

    /// Rows sent so far (those of the kinds kept).
    #[getter]
    fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }
}

impl Drop for LogReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The engine thread: the whole input, then the rows of a framed stream not yet sent.
fn run(cmd: Streaming, settings: input::Settings, input: Input) {
    let mut out = Output::discard();
    let result = input::run(&cmd, &settings, &[input], &mut out);
    let error = match result {
        Ok(mut run) => {
            cmd.send(&mut run.tally);
            // As `read_log`: a failed run's last note is its read error, the exception's text.
            run.failed.then(|| settings.notes.take().pop().unwrap_or_else(|| "read error".into()))
        }
        Err(Stop::Panic) => Some("internal error: a worker panicked".to_owned()),
        Err(Stop::BrokenPipe | Stop::Output(_)) => {
            Some("internal error: output stopped".to_owned())
        }
    };
    if let Some(e) = error {
        if !cmd.stop.load(Ordering::Relaxed) {
            let _ = cmd.batches.send(Err(e));
        }
    }
}
