//! `scan`: a whole log through the CLI's input engine (`rpcscan_cli::input`: files
//! memory-mapped and scanned on the rayon pool, pipes and other framings decoded in order),
//! collected into one Arrow record batch with the GIL released.
//!
//! The columns carry the values of `rpcscan classify --json`: `line` (NDJSON, else null),
//! `offset`, `kind`, `method` (decoded), `id` (the raw text, `"a"` with its quotes, as the
//! SQL function `rpc_id` gives it), `error_code` (when it fits an i64), `reason` (invalid
//! messages), and `tool_name` (`params.name` of a `tools/call` request).

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, Int64Array, LargeStringArray, RecordBatch, RecordBatchIterator, StringArray,
    UInt64Array,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rpcscan::frame::Framing;
use rpcscan::{Kind, Parser, Validation};
use rpcscan_cli::input::{self, Command, Input, Item, Output, Settings, Source, Stop, Verdict};

use crate::buffer::Bytes;

/// The CLI's default `--max-message-size`.
const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 << 20;

/// A column of optional strings, appended to and merged in input order.
#[derive(Default)]
struct Strings {
    data: Vec<u8>,
    ends: Vec<i64>,
    valid: Vec<bool>,
}

impl Strings {
    fn push(&mut self, value: Option<&[u8]>) {
        if let Some(v) = value {
            self.data.extend_from_slice(v);
        }
        self.ends.push(self.data.len() as i64);
        self.valid.push(value.is_some());
    }

    fn append(&mut self, from: Strings) {
        let base = self.data.len() as i64;
        self.data.extend_from_slice(&from.data);
        self.ends.extend(from.ends.iter().map(|e| e + base));
        self.valid.extend(from.valid);
    }

    fn into_array(self) -> Result<ArrayRef, arrow_schema::ArrowError> {
        let mut offsets = Vec::with_capacity(self.ends.len() + 1);
        offsets.push(0i64);
        offsets.extend(self.ends);
        let nulls = NullBuffer::from(self.valid);
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        let array = LargeStringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(self.data),
            nulls,
        )?;
        Ok(Arc::new(array))
    }
}

/// The rows of one block (then of the whole run, merged in input order).
#[derive(Default)]
pub(crate) struct Rows {
    /// 0: not an NDJSON line (null).
    line: Vec<u64>,
    offset: Vec<u64>,
    kind: Vec<Kind>,
    method: Strings,
    id: Strings,
    error_code: Vec<Option<i64>>,
    reason: Vec<Option<&'static str>>,
    tool_name: Strings,
}

impl Strings {
    /// A decoded name (no allocation without escapes), or its raw escaped text when it
    /// holds a lone surrogate escape (as the SQL functions do).
    fn push_name(&mut self, s: Option<rpcscan::Str<'_>>) {
        match s {
            None => self.push(None),
            Some(s) => match s.decode() {
                Ok(text) => self.push(Some(text.as_bytes())),
                Err(_) => self.push(Some(String::from_utf8_lossy(s.raw()).as_bytes())),
            },
        }
    }
}

/// The subcommand that collects rows instead of printing.
pub(crate) struct Collect;

impl Command for Collect {
    type Tally = Rows;

    fn item(&self, _source: &Source, item: &Item<'_>, _out: &mut Vec<u8>, rows: &mut Rows) {
        rows.line.push(item.line);
        rows.offset.push(item.offset);
        rows.kind.push(item.verdict.kind());
        rows.reason.push(item.verdict.reason().map(|r| r.as_str()));
        match &item.verdict {
            Verdict::Message(m) => {
                rows.method.push_name(m.method());
                rows.id.push(m.id().map(|id| id.raw()));
                rows.error_code.push(m.error_code().and_then(|c| c.as_i64()));
                rows.tool_name.push_name(m.mcp().tool_name());
            }
            Verdict::Invalid(inv) => {
                rows.method.push(None);
                rows.id.push(inv.id().map(|id| id.raw()));
                rows.error_code.push(None);
                rows.tool_name.push(None);
            }
            Verdict::Skipped { .. } => {
                rows.method.push(None);
                rows.id.push(None);
                rows.error_code.push(None);
                rows.tool_name.push(None);
            }
        }
    }

    fn merge(&self, into: &mut Rows, from: Rows) {
        into.line.extend(from.line);
        into.offset.extend(from.offset);
        into.kind.extend(from.kind);
        into.method.append(from.method);
        into.id.append(from.id);
        into.error_code.extend(from.error_code);
        into.reason.extend(from.reason);
        into.tool_name.append(from.tool_name);
    }

    fn wants_lines(&self) -> bool {
        true
    }
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("line", DataType::UInt64, true),
        Field::new("offset", DataType::UInt64, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("method", DataType::LargeUtf8, true),
        Field::new("id", DataType::LargeUtf8, true),
        Field::new("error_code", DataType::Int64, true),
        Field::new("reason", DataType::Utf8, true),
        Field::new("tool_name", DataType::LargeUtf8, true),
    ]))
}

fn batch(rows: Rows) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let line: UInt64Array = rows.line.iter().map(|&l| (l > 0).then_some(l)).collect();
    let kind: StringArray = rows.kind.iter().map(|k| Some(k.as_str())).collect();
    let reason: StringArray = rows.reason.iter().copied().collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(line),
        Arc::new(UInt64Array::from(rows.offset)),
        Arc::new(kind),
        rows.method.into_array()?,
        rows.id.into_array()?,
        Arc::new(Int64Array::from(rows.error_code)),
        Arc::new(reason),
        rows.tool_name.into_array()?,
    ];
    RecordBatch::try_new(schema(), columns)
}

fn settings(framing: &str, mode: &str, max_message_size: usize) -> PyResult<Settings> {
    let framing = match framing {
        "auto" => None,
        name => Some(name.parse::<Framing>().map_err(|e| {
            PyValueError::new_err(format!(
                "framing: {e} (auto, {})",
                names(Framing::ALL.map(Framing::as_str))
            ))
        })?),
    };
    let mode: Validation = mode.parse().map_err(|e| {
        PyValueError::new_err(format!(
            "mode: {e} ({})",
            names(Validation::ALL.map(Validation::as_str))
        ))
    })?;
    if max_message_size == 0 {
        return Err(PyValueError::new_err("max_message_size must be at least 1"));
    }
    Ok(Settings {
        framing,
        parser: Parser::new().validation(mode),
        max_message_size,
        mmap: true,
        extract: None,
    })
}

fn names<const N: usize>(names: [&str; N]) -> String {
    names.join(", ")
}

/// Runs the engine over one input, without the GIL.
fn run(py: Python<'_>, settings: &Settings, input: Input) -> PyResult<Table> {
    let result = py.detach(|| {
        let mut out = Output::discard();
        input::run(&Collect, settings, &[input], &mut out).map(|run| (run.failed, run.tally))
    });
    match result {
        Ok((false, rows)) => {
            let batch = batch(rows).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            Ok(Table { batch })
        }
        Ok((true, _)) => Err(PyOSError::new_err("read error (see stderr)")),
        Err(Stop::Panic) => Err(PyRuntimeError::new_err("internal error: a worker panicked")),
        Err(Stop::BrokenPipe | Stop::Output(_)) => {
            Err(PyRuntimeError::new_err("internal error: output stopped"))
        }
    }
}

/// `OSError(errno, strerror, filename)`: Python picks the subclass (`FileNotFoundError`,
/// `PermissionError`...) from the errno.
fn os_error(e: &std::io::Error, path: &std::path::Path) -> PyErr {
    let text = e.to_string();
    let strerror = text.split(" (os error").next().unwrap_or(&text).to_owned();
    match e.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, strerror, path.display().to_string())),
        None => PyOSError::new_err(format!("{}: {e}", path.display())),
    }
}

/// Scans a file (NDJSON files are memory-mapped and scanned on all cores).
#[pyfunction]
#[pyo3(signature = (path, framing = "auto", mode = "strict", max_message_size = DEFAULT_MAX_MESSAGE_SIZE))]
pub fn scan_path(
    py: Python<'_>,
    path: PathBuf,
    framing: &str,
    mode: &str,
    max_message_size: usize,
) -> PyResult<Table> {
    let settings = settings(framing, mode, max_message_size)?;
    // Open errors become the matching OSError subclass (FileNotFoundError, ...), here,
    // rather than a note on stderr from the engine.
    let meta =
        std::fs::File::open(&path).and_then(|f| f.metadata()).map_err(|e| os_error(&e, &path))?;
    if meta.is_dir() {
        return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!(
            "{}: is a directory",
            path.display()
        )));
    }
    run(py, &settings, Input::Path(path))
}

/// Scans an Arrow array or chunked array of messages, one per element
/// (`crate::arrow_input`).
#[pyfunction]
#[pyo3(signature = (array, mode = "strict", max_message_size = DEFAULT_MAX_MESSAGE_SIZE))]
pub fn scan_arrow(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    mode: &str,
    max_message_size: usize,
) -> PyResult<Table> {
    let settings = settings("ndjson", mode, max_message_size)?;
    let arrays = crate::arrow_input::import(array)?;
    let rows = py.detach(|| crate::arrow_input::scan(&arrays, &settings))?;
    // The imported arrays are released here, with the GIL held (their producer may need it).
    drop(arrays);
    let batch = batch(rows).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(Table { batch })
}

/// Scans bytes already in memory, as the CLI reads a pipe.
#[pyfunction]
#[pyo3(signature = (data, framing = "auto", mode = "strict", max_message_size = DEFAULT_MAX_MESSAGE_SIZE))]
pub fn scan_bytes(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    framing: &str,
    mode: &str,
    max_message_size: usize,
) -> PyResult<Table> {
    let settings = settings(framing, mode, max_message_size)?;
    let bytes = Bytes::get(data)?;
    // Copied with the GIL held: a `bytearray` could be written to by another thread.
    let owned: Arc<[u8]> = Arc::from(bytes.as_slice());
    drop(bytes);
    run(py, &settings, Input::Bytes(owned))
}

/// The result of `scan`: one Arrow record batch, handed out through the Arrow PyCapsule
/// interface (`pyarrow.table(t)`, `polars.from_arrow(t)`, DuckDB...).
#[pyclass(frozen, module = "rpcscan")]
pub struct Table {
    batch: RecordBatch,
}

const STREAM: &CStr = c"arrow_array_stream";

#[pymethods]
impl Table {
    /// The Arrow C stream interface: a capsule holding an `ArrowArrayStream`.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is fixed; a consumer asking for another one casts it itself.
        let _ = requested_schema;
        let reader = RecordBatchIterator::new([Ok(self.batch.clone())], self.batch.schema());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    /// The number of rows (messages).
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.batch.schema().fields().iter().map(|f| f.name().clone()).collect()
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    fn __repr__(&self) -> String {
        format!("rpcscan.Table({} rows: {})", self.batch.num_rows(), self.column_names().join(", "))
    }
}
