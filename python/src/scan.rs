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
use arrow_array::types::Int8Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Int64Array, Int8Array, LargeStringArray, RecordBatch,
    RecordBatchIterator, StringArray, UInt64Array,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rpcscan::frame::Framing;
use rpcscan::{Kind, Parser, Validation};
use rpcscan_cli::input::{
    self, Command, Extract, Input, Item, Output, Settings, Source, Stop, Verdict,
};

use crate::buffer::Bytes;

/// The CLI's default `--max-message-size`.
const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 << 20;

/// A column of optional strings, appended to and merged in input order.
#[derive(Default)]
pub(crate) struct Strings {
    data: Vec<u8>,
    ends: Vec<i64>,
    valid: Vec<bool>,
}

impl Strings {
    pub(crate) fn push(&mut self, value: Option<&[u8]>) {
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

    pub(crate) fn into_array(self) -> Result<ArrayRef, arrow_schema::ArrowError> {
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

/// The engine's settings from `scan` / `pair`'s keyword arguments: the CLI's `--framing`,
/// `--mode`, `--max-message-size`, `--line-format`, `--json-field`, `--ts-field`,
/// `--dir-field`, checked the same way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn settings(
    framing: &str,
    mode: &str,
    max_message_size: usize,
    line_format: Option<&str>,
    json_field: Option<&str>,
    ts_field: Option<&str>,
    dir_field: Option<&str>,
) -> PyResult<Settings> {
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
    let extract = match (line_format, json_field) {
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err("give line_format or json_field, not both"))
        }
        (Some(re), None) => {
            if ts_field.is_some() || dir_field.is_some() {
                return Err(PyValueError::new_err(
                    "ts_field and dir_field go with json_field; line_format names its \
                     (?<ts>...) and (?<dir>...) groups",
                ));
            }
            Some(
                Extract::regex(re)
                    .map_err(|e| PyValueError::new_err(format!("line_format: {e}")))?,
            )
        }
        (None, Some(msg)) => Some(
            Extract::fields(msg, ts_field, dir_field)
                .map_err(|e| PyValueError::new_err(format!("json_field: {e}")))?,
        ),
        (None, None) => {
            if ts_field.is_some() || dir_field.is_some() {
                return Err(PyValueError::new_err("ts_field and dir_field need json_field"));
            }
            None
        }
    };
    if extract.is_some() && framing.is_some_and(|f| f != Framing::Ndjson) {
        return Err(PyValueError::new_err("log lines (line_format, json_field) are NDJSON"));
    }
    Ok(Settings {
        // Log records are lines.
        framing: if extract.is_some() { Some(Framing::Ndjson) } else { framing },
        parser: Parser::new().validation(mode),
        max_message_size,
        mmap: true,
        extract: extract.map(Arc::new),
    })
}

fn names<const N: usize>(names: [&str; N]) -> String {
    names.join(", ")
}

/// Runs the engine over one input with `cmd`, without the GIL: its merged tally.
pub(crate) fn run_engine<C: Command>(
    py: Python<'_>,
    cmd: &C,
    settings: &Settings,
    input: Input,
) -> PyResult<C::Tally> {
    let result = py.detach(|| {
        let mut out = Output::discard();
        input::run(cmd, settings, &[input], &mut out).map(|run| (run.failed, run.tally))
    });
    match result {
        Ok((false, tally)) => Ok(tally),
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

/// Where a `scan` or `pair` reads from.
pub(crate) enum Prepared {
    /// A file or bytes, through the engine.
    Engine(Input),
    /// Arrow arrays of messages, one per element (`crate::arrow_input`).
    Arrow(Vec<ArrayRef>),
}

impl Prepared {
    /// A path: open errors become the matching `OSError` subclass (`FileNotFoundError`...)
    /// here, rather than a note on stderr from the engine.
    pub(crate) fn path(path: PathBuf) -> PyResult<Prepared> {
        let meta = std::fs::File::open(&path)
            .and_then(|f| f.metadata())
            .map_err(|e| os_error(&e, &path))?;
        if meta.is_dir() {
            return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!(
                "{}: is a directory",
                path.display()
            )));
        }
        Ok(Prepared::Engine(Input::Path(path)))
    }

    /// Bytes-like data, copied with the GIL held (a `bytearray` could be written to by
    /// another thread), then read as the CLI reads a pipe.
    pub(crate) fn bytes(data: &Bound<'_, PyAny>) -> PyResult<Prepared> {
        let bytes = Bytes::get(data)?;
        let owned: Arc<[u8]> = Arc::from(bytes.as_slice());
        drop(bytes);
        Ok(Prepared::Engine(Input::Bytes(owned)))
    }

    /// An object with the Arrow PyCapsule interface.
    pub(crate) fn arrow(array: &Bound<'_, PyAny>, settings: &Settings) -> PyResult<Prepared> {
        if settings.extract.is_some() {
            return Err(PyValueError::new_err(
                "an Arrow source holds one message per element: no line_format / json_field",
            ));
        }
        Ok(Prepared::Arrow(crate::arrow_input::import(array)?))
    }

    /// Runs `cmd` over it, without the GIL: the merged tally.
    pub(crate) fn run<C: Command>(
        self,
        py: Python<'_>,
        cmd: &C,
        settings: &Settings,
    ) -> PyResult<C::Tally> {
        match self {
            Prepared::Engine(input) => run_engine(py, cmd, settings, input),
            Prepared::Arrow(arrays) => {
                let tally = py.detach(|| crate::arrow_input::scan(cmd, &arrays, settings))?;
                // Released here, with the GIL held (their producer may need it).
                drop(arrays);
                Ok(tally)
            }
        }
    }
}

/// Scans a file (NDJSON files are memory-mapped and scanned on all cores).
#[pyfunction]
#[pyo3(signature = (path, framing = "auto", mode = "strict", max_message_size = DEFAULT_MAX_MESSAGE_SIZE, line_format = None, json_field = None, ts_field = None, dir_field = None))]
#[allow(clippy::too_many_arguments)]
pub fn scan_path(
    py: Python<'_>,
    path: PathBuf,
    framing: &str,
    mode: &str,
    max_message_size: usize,
    line_format: Option<&str>,
    json_field: Option<&str>,
    ts_field: Option<&str>,
    dir_field: Option<&str>,
) -> PyResult<Table> {
    let settings =
        settings(framing, mode, max_message_size, line_format, json_field, ts_field, dir_field)?;
    table(Prepared::path(path)?.run(py, &Collect, &settings)?)
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
    let settings = settings("ndjson", mode, max_message_size, None, None, None, None)?;
    table(Prepared::arrow(array, &settings)?.run(py, &Collect, &settings)?)
}

/// Scans bytes already in memory, as the CLI reads a pipe.
#[pyfunction]
#[pyo3(signature = (data, framing = "auto", mode = "strict", max_message_size = DEFAULT_MAX_MESSAGE_SIZE, line_format = None, json_field = None, ts_field = None, dir_field = None))]
#[allow(clippy::too_many_arguments)]
pub fn scan_bytes(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    framing: &str,
    mode: &str,
    max_message_size: usize,
    line_format: Option<&str>,
    json_field: Option<&str>,
    ts_field: Option<&str>,
    dir_field: Option<&str>,
) -> PyResult<Table> {
    let settings =
        settings(framing, mode, max_message_size, line_format, json_field, ts_field, dir_field)?;
    table(Prepared::bytes(data)?.run(py, &Collect, &settings)?)
}

fn table(rows: Rows) -> PyResult<Table> {
    let batch = batch(rows).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(Table { batch })
}

/// `pair`: `source_kind` is `"path"`, `"bytes"` or `"arrow"` (the Python wrapper decides).
/// Returns the event table and the summary `dict` (`crate::pair`).
#[pyfunction]
#[pyo3(signature = (source, source_kind, framing = "auto", mode = "strict", max_message_size = DEFAULT_MAX_MESSAGE_SIZE, line_format = None, json_field = None, ts_field = None, dir_field = None, max_in_flight = rpcscan::pair::DEFAULT_MAX_IN_FLIGHT, timeout = None))]
#[allow(clippy::too_many_arguments)]
pub fn pair(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    source_kind: &str,
    framing: &str,
    mode: &str,
    max_message_size: usize,
    line_format: Option<&str>,
    json_field: Option<&str>,
    ts_field: Option<&str>,
    dir_field: Option<&str>,
    max_in_flight: usize,
    timeout: Option<f64>,
) -> PyResult<(Table, Py<pyo3::types::PyDict>)> {
    let settings =
        settings(framing, mode, max_message_size, line_format, json_field, ts_field, dir_field)?;
    let cmd = crate::pair::Pair { max_in_flight, timeout: crate::pair::timeout(timeout)? };
    let prepared = match source_kind {
        "path" => Prepared::path(source.extract()?)?,
        "bytes" => Prepared::bytes(source)?,
        "arrow" => Prepared::arrow(source, &settings)?,
        other => return Err(PyValueError::new_err(format!("unknown source kind {other:?}"))),
    };
    let tally = prepared.run(py, &cmd, &settings)?;
    let finished = py.detach(|| cmd.finish(tally));
    finished.into_python(py)
}

/// A dictionary-encoded string column: `keys` index `values` (null for `None`).
pub(crate) fn dictionary(
    keys: Vec<Option<i8>>,
    values: &[&str],
) -> Result<ArrayRef, arrow_schema::ArrowError> {
    let keys = Int8Array::from(keys);
    let values: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
    Ok(Arc::new(DictionaryArray::<Int8Type>::try_new(keys, values)?))
}

/// The result of `scan`: one Arrow record batch, handed out through the Arrow PyCapsule
/// interface (`pyarrow.table(t)`, `polars.from_arrow(t)`, DuckDB...).
#[pyclass(frozen, module = "rpcscan")]
pub struct Table {
    batch: RecordBatch,
}

const STREAM: &CStr = c"arrow_array_stream";

impl Table {
    /// A table of one batch.
    pub(crate) fn new(batch: RecordBatch) -> Table {
        Table { batch }
    }
}

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
