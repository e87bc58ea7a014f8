//! `scan`: a whole log through the engine's inputs (`rpcscan_traffic::input`: files
//! memory-mapped and scanned on the rayon pool, pipes and other framings decoded in order),
//! collected with the GIL released into Arrow record batches, one per block of input: each
//! worker writes its block's columns straight in Arrow's layout, and a finished block
//! becomes a batch by moving its buffers (nothing is concatenated; the table's columns are
//! chunked). `kind` and `reason` are dictionary-encoded (`int8` keys into the names).
//!
//! The columns carry the values of `rpcscan classify --json`: `line` (NDJSON, else null),
//! `offset`, `kind`, `method` (decoded), `id` (the raw text, `"a"` with its quotes, as the
//! SQL function `rpc_id` gives it), `error_code` (when it fits an i64), `error_code_text`
//! (the code's exact decimal text, any size: `classify --json` prints that number
//! verbatim), `reason` (invalid messages), and `tool_name` (`params.name` of a
//! `tools/call` request).

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::Int8Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Int64Array, Int8Array, LargeStringArray, RecordBatch,
    RecordBatchIterator, StringArray, UInt64Array,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rpcscan::frame::Framing;
use rpcscan::{Kind, Parser, Reason, Validation};
use rpcscan_traffic::input::{
    self, Command, Extract, Input, Item, Notes, Output, Settings, Source, Stop, Verdict,
};

use crate::buffer::Bytes;
use crate::columns::{self, Texts};
use crate::pool::{self, scalars};

/// The CLI's default `--max-message-size`.
const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 << 20;

/// A column of optional strings in Arrow's layout (offsets, values, validity), so that a
/// finished column becomes an array without a copy (`pair`'s events; `read_log`'s rows use
/// `columns::Texts`).
pub(crate) struct Strings {
    data: Vec<u8>,
    offsets: Vec<i64>,
    nulls: Validity,
}

impl Default for Strings {
    fn default() -> Strings {
        Strings { data: Vec::new(), offsets: vec![0], nulls: Validity::default() }
    }
}

impl Strings {
    pub(crate) fn push(&mut self, value: Option<&[u8]>) {
        match value {
            Some(v) => {
                self.data.extend_from_slice(v);
                self.nulls.append(true);
            }
            None => self.nulls.append(false),
        }
        self.offsets.push(self.data.len() as i64);
    }

    /// The array (its buffers moved, not copied, and back to the pools when the array is
    /// dropped); the column starts over.
    pub(crate) fn take_array(&mut self) -> Result<ArrayRef, arrow_schema::ArrowError> {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let array = LargeStringArray::try_new(
            OffsetBuffer::new(pool::scalars(offsets)),
            pool::buffer(std::mem::take(&mut self.data)),
            self.nulls.finish(),
        )?;
        Ok(Arc::new(array))
    }

    pub(crate) fn into_array(mut self) -> Result<ArrayRef, arrow_schema::ArrowError> {
        self.take_array()
    }
}

/// A column's validity bits in Arrow's layout, 64 rows to a word, appended inline (a row
/// costs a shift and an or); no buffer when no row is null.
#[derive(Default)]
struct Validity {
    words: Vec<u64>,
    len: usize,
    nulls: usize,
}

impl Validity {
    #[inline]
    fn append(&mut self, valid: bool) {
        let bit = self.len % 64;
        if bit == 0 {
            self.words.push(0);
        }
        if let Some(word) = self.words.last_mut() {
            *word |= u64::from(valid) << bit;
        }
        self.nulls += usize::from(!valid);
        self.len += 1;
    }

    /// The validity of the rows so far (moved, not copied), `None` when none is null; the
    /// column starts over.
    fn finish(&mut self) -> Option<NullBuffer> {
        let words = std::mem::take(&mut self.words);
        let len = std::mem::take(&mut self.len);
        if std::mem::take(&mut self.nulls) == 0 {
            return None;
        }
        Some(NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(words), 0, len)))
    }
}

/// `kind` and `reason` are dictionary-encoded: an `i8` per row indexing the names, in the
/// library's order (`Kind::ALL`, `Reason::ALL`).
fn kind_key(kind: Kind) -> i8 {
    Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0) as i8
}

fn reason_key(reason: Reason) -> i8 {
    Reason::ALL.iter().position(|&r| r == reason).unwrap_or(0) as i8
}

/// Bits of [`Rows::present`], one per nullable column: set when the row has a value there.
const HAS_LINE: u8 = 1;
const HAS_METHOD: u8 = 1 << 1;
const HAS_ID: u8 = 1 << 2;
const HAS_ERROR_CODE: u8 = 1 << 3;
const HAS_ERROR_CODE_TEXT: u8 = 1 << 4;
const HAS_REASON: u8 = 1 << 5;
const HAS_TOOL_NAME: u8 = 1 << 6;

/// The rows of one block, in Arrow's layout; in the run's own tally, the blocks already
/// finished, in input order, as record batches (one per block: nothing is concatenated).
/// A null value is a zero (or an empty string) in its column and a clear bit in the row's
/// presence byte: one byte per row, turned into the seven validity bitmaps when the block
/// becomes a batch (`columns::validity`), rather than a bit appended per row and column.
#[derive(Default)]
pub(crate) struct Rows {
    /// 0 where the framing has no lines (null).
    line: Vec<u64>,
    offset: Vec<u64>,
    kind: Vec<i8>,
    method: Texts,
    id: Texts,
    error_code: Vec<i64>,
    error_code_text: Texts,
    reason: Vec<i8>,
    tool_name: Texts,
    /// Per row, the `HAS_*` bits of the nullable columns that hold a value.
    present: Vec<u8>,
    batches: Vec<RecordBatch>,
    /// A batch could not be built (not expected: the columns are built alike).
    error: Option<arrow_schema::ArrowError>,
}

/// The size of the last block merged: rows, and bytes of each string column. A new
/// block's columns are sized by it up front rather than grown (and copied) row by row.
static LAST_BLOCK: [AtomicUsize; 5] = [const { AtomicUsize::new(0) }; 5];

impl Rows {
    pub(crate) fn len(&self) -> usize {
        self.offset.len()
    }

    /// The batches finished so far, in order (the rows not yet in one stay).
    pub(crate) fn take_batches(&mut self) -> Result<Vec<RecordBatch>, arrow_schema::ArrowError> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(std::mem::take(&mut self.batches)),
        }
    }

    /// Sizes an empty block's columns like the last block merged (with some room).
    fn reserve(&mut self) {
        let hint = |i: usize| LAST_BLOCK[i].load(Ordering::Relaxed) / 8 * 9;
        let rows = hint(0);
        self.line = pool::U64.take(rows);
        self.offset = pool::U64.take(rows);
        self.kind = pool::I8.take(rows);
        self.error_code = pool::I64.take(rows);
        self.reason = pool::I8.take(rows);
        self.present = pool::U8.take(rows);
        self.method.reserve(rows, hint(1));
        self.id.reserve(rows, hint(2));
        self.tool_name.reserve(rows, hint(3));
        self.error_code_text.reserve(rows, hint(4));
    }

    /// Remembers this block's size for the next ones.
    fn remember(&self) {
        let sizes = [
            self.len(),
            self.method.bytes(),
            self.id.bytes(),
            self.tool_name.bytes(),
            self.error_code_text.bytes(),
        ];
        for (slot, size) in LAST_BLOCK.iter().zip(sizes) {
            slot.store(size, Ordering::Relaxed);
        }
    }

    /// The rows so far as one record batch, appended to `batches`.
    pub(crate) fn flush(&mut self) {
        if self.len() == 0 {
            return;
        }
        match self.take_batch() {
            Ok(batch) => self.batches.push(batch),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    fn take_batch(&mut self) -> Result<RecordBatch, arrow_schema::ArrowError> {
        let present = std::mem::take(&mut self.present);
        let [line_nulls, method_nulls, id_nulls, code_nulls, code_text_nulls, reason_nulls, tool_nulls] =
            columns::validity(&present);
        pool::U8.give(present);
        let kind = Int8Array::new(scalars(std::mem::take(&mut self.kind)), None);
        let reason = Int8Array::new(scalars(std::mem::take(&mut self.reason)), reason_nulls);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::new(scalars(std::mem::take(&mut self.line)), line_nulls)),
            Arc::new(UInt64Array::new(scalars(std::mem::take(&mut self.offset)), None)),
            columns::dictionary(kind, kind_names())?,
            self.method.take_array(method_nulls)?,
            self.id.take_array(id_nulls)?,
            Arc::new(Int64Array::new(scalars(std::mem::take(&mut self.error_code)), code_nulls)),
            self.error_code_text.take_array(code_text_nulls)?,
            columns::dictionary(reason, reason_names())?,
            self.tool_name.take_array(tool_nulls)?,
        ];
        RecordBatch::try_new(schema(), columns)
    }
}

/// The dictionary of `kind`: the five names, shared by every batch.
fn kind_names() -> ArrayRef {
    static NAMES: OnceLock<ArrayRef> = OnceLock::new();
    NAMES.get_or_init(|| Arc::new(StringArray::from(Kind::ALL.map(Kind::as_str).to_vec()))).clone()
}

/// The dictionary of `reason`: every reason name of docs/spec.md §4.
fn reason_names() -> ArrayRef {
    static NAMES: OnceLock<ArrayRef> = OnceLock::new();
    NAMES
        .get_or_init(|| Arc::new(StringArray::from(Reason::ALL.map(Reason::as_str).to_vec())))
        .clone()
}

/// A decoded name (no allocation without escapes), or its raw escaped text when it holds a
/// lone surrogate escape (as the SQL functions do). Without escapes the text is the raw
/// bytes: as they are when `scanned` (`method`: the scanner checked its UTF-8), else
/// checked here (`params.name`, which envelope mode does not check).
fn push_name(column: &mut Texts, s: rpcscan::Str<'_>, scanned: bool) {
    if !s.has_escapes() {
        if scanned {
            column.push_scanned(s.raw());
        } else {
            column.push_lossy(s.raw());
        }
        return;
    }
    match s.decode() {
        Ok(text) => column.push_str(&text),
        Err(_) => column.push_lossy(s.raw()),
    }
}

/// `params.name` of a `tools/call` request, as `Message::mcp().tool_name()` gives it,
/// without reading the other MCP members (`mcp()` reads `_meta` and `result.resultType`
/// too, a scan of every result object). The parser of [`settings`] asks the strict scan to
/// note it on its way (`Parser::note_params_name`: a key compare per `params` member),
/// which costs less than a second walk of `params` per `tools/call` row did (5% of
/// `read_log`'s CPU time on MCP traffic); envelope mode looks it up in `params`.
pub(crate) fn tool_name<'a>(m: &rpcscan::Message<'a>) -> Option<rpcscan::Str<'a>> {
    if m.kind() != Kind::Request || !is_tools_call(&m.method()?) {
        return None;
    }
    m.params_name().as_str()
}

/// `method == "tools/call"`, comparing the bytes in place when there is no escape (the
/// usual case: `Str`'s comparison decodes as it goes).
#[inline]
fn is_tools_call(method: &rpcscan::Str<'_>) -> bool {
    if method.has_escapes() {
        *method == "tools/call"
    } else {
        method.raw() == b"tools/call"
    }
}

/// The subcommand that collects rows instead of printing: every row and column for `scan`
/// ([`Collect::ALL`]); `scan_log` (`crate::log_reader`) keeps the rows of some kinds and
/// fills only the columns a query reads (the others stay null, at the cost of a null bit).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Collect {
    /// Bit `i`: column `i` of [`schema`] is filled.
    pub(crate) columns: u32,
    /// Bit `i`: rows of `Kind::ALL[i]` are kept.
    pub(crate) kinds: u8,
}

impl Collect {
    /// Every row, every column.
    pub(crate) const ALL: Collect = Collect { columns: u32::MAX, kinds: u8::MAX };

    fn wants(&self, column: usize) -> bool {
        self.columns.checked_shr(column as u32).is_none_or(|bits| bits & 1 != 0)
    }

    /// Appends `item`'s row, filling the columns `wants` names.
    #[inline(always)]
    fn row(&self, kind: i8, item: &Item<'_>, rows: &mut Rows, wants: impl Fn(usize) -> bool) {
        let mut present = if item.line > 0 { HAS_LINE } else { 0 };
        rows.line.push(item.line);
        rows.offset.push(item.offset);
        rows.kind.push(kind);
        let reason = match &item.verdict {
            Verdict::Message(m) => {
                match m.method().filter(|_| wants(METHOD)) {
                    Some(method) => {
                        push_name(&mut rows.method, method, true);
                        present |= HAS_METHOD;
                    }
                    None => rows.method.push_null(),
                }
                match m.id().filter(|_| wants(ID)) {
                    Some(id) => {
                        rows.id.push_scanned(id.raw());
                        present |= HAS_ID;
                    }
                    None => rows.id.push_null(),
                }
                let code = m.error_code();
                match code.filter(|_| wants(ERROR_CODE)).and_then(|c| c.as_i64()) {
                    Some(c) => {
                        rows.error_code.push(c);
                        present |= HAS_ERROR_CODE;
                    }
                    None => rows.error_code.push(0),
                }
                match code.filter(|_| wants(ERROR_CODE_TEXT)) {
                    Some(c) => {
                        rows.error_code_text.push_scanned(c.raw());
                        present |= HAS_ERROR_CODE_TEXT;
                    }
                    None => rows.error_code_text.push_null(),
                }
                // `params` is not checked for UTF-8 in envelope mode.
                match wants(TOOL_NAME).then(|| tool_name(m)).flatten() {
                    Some(name) => {
                        push_name(&mut rows.tool_name, name, false);
                        present |= HAS_TOOL_NAME;
                    }
                    None => rows.tool_name.push_null(),
                }
                None
            }
            Verdict::Invalid(inv) => {
                rows.method.push_null();
                match inv.id().filter(|_| wants(ID)) {
                    Some(id) => {
                        rows.id.push_lossy(id.raw());
                        present |= HAS_ID;
                    }
                    None => rows.id.push_null(),
                }
                rows.error_code.push(0);
                rows.error_code_text.push_null();
                rows.tool_name.push_null();
                Some(inv.reason())
            }
            Verdict::Skipped { reason, .. } => {
                rows.method.push_null();
                rows.id.push_null();
                rows.error_code.push(0);
                rows.error_code_text.push_null();
                rows.tool_name.push_null();
                Some(*reason)
            }
        };
        match reason {
            Some(reason) => {
                rows.reason.push(reason_key(reason));
                present |= HAS_REASON;
            }
            None => rows.reason.push(0),
        }
        rows.present.push(present);
    }
}

/// The columns of [`schema`] that cost something to fill, by position.
const METHOD: usize = 3;
const ID: usize = 4;
const ERROR_CODE: usize = 5;
const ERROR_CODE_TEXT: usize = 6;
const TOOL_NAME: usize = 8;

impl Command for Collect {
    type Tally = Rows;

    fn item(&self, _source: &Source, item: &Item<'_>, _out: &mut Vec<u8>, rows: &mut Rows) {
        let kind = kind_key(item.verdict.kind());
        if self.kinds & (1 << kind) == 0 {
            return;
        }
        if rows.offset.capacity() == 0 {
            rows.reserve();
        }
        // Every column (`read_log`): the checks below fold away.
        if self.columns == u32::MAX {
            self.row(kind, item, rows, |_| true);
        } else {
            self.row(kind, item, rows, |column| self.wants(column));
        }
    }

    /// A block's rows become one record batch (their buffers moved, not copied), after the
    /// batches before it.
    fn merge(&self, into: &mut Rows, mut from: Rows) {
        from.remember();
        into.flush();
        from.flush();
        into.batches.append(&mut from.batches);
        if let Some(e) = from.error {
            into.error.get_or_insert(e);
        }
    }

    fn wants_lines(&self) -> bool {
        true
    }

    /// A mapped block's lines come counted from 1 and are renumbered here, in order: the
    /// engine's producer then does not count the file's newlines once more.
    fn numbers_lines_at_merge(&self) -> bool {
        true
    }

    fn merge_lines(&self, into: &mut Rows, mut from: Rows, first_line: u64) {
        let by = first_line.saturating_sub(1);
        if by > 0 {
            // Null lines (none in NDJSON) hold 0 and stay masked.
            for line in &mut from.line {
                *line += by;
            }
        }
        self.merge(into, from);
    }
}

pub(crate) fn schema() -> Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    let dict = || DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
    SCHEMA
        .get_or_init(|| {
            Arc::new(Schema::new(vec![
                Field::new("line", DataType::UInt64, true),
                Field::new("offset", DataType::UInt64, false),
                Field::new("kind", dict(), false),
                Field::new("method", DataType::LargeUtf8, true),
                Field::new("id", DataType::LargeUtf8, true),
                Field::new("error_code", DataType::Int64, true),
                Field::new("error_code_text", DataType::LargeUtf8, true),
                Field::new("reason", dict(), true),
                Field::new("tool_name", DataType::LargeUtf8, true),
            ]))
        })
        .clone()
}

/// The run's rows as record batches, in input order.
fn batches(mut rows: Rows) -> PyResult<Vec<RecordBatch>> {
    rows.flush();
    match rows.error {
        Some(e) => Err(PyRuntimeError::new_err(e.to_string())),
        None => Ok(rows.batches),
    }
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
        // `params.name` noted by the scan, for `tool_name` (and `pair`'s tool).
        parser: Parser::new().validation(mode).note_params_name(true),
        max_message_size,
        // Positioned reads: a file truncated under us cannot kill the interpreter
        // (`scan_path(mmap=True)` maps, on request).
        mmap: false,
        extract: extract.map(Arc::new),
        // Turned into `warnings` (or the `OSError` of a read error) by `run_engine`.
        notes: Notes::collect(),
        // `pair` turns them on (`rpcscan_traffic::pair::settings`).
        labels: false,
    })
}

fn names<const N: usize>(names: [&str; N]) -> String {
    names.join(", ")
}

/// Runs the engine over one input with `cmd` (without the GIL when `detach`): its merged
/// tally. The run's notes become `rpcscan.ScanWarning`s, or the `OSError` of a read error.
pub(crate) fn run_engine<C: Command>(
    py: Python<'_>,
    cmd: &C,
    settings: &Settings,
    input: Input,
    detach: bool,
) -> PyResult<C::Tally> {
    let go = || {
        let mut out = Output::discard();
        input::run(cmd, settings, std::slice::from_ref(&input), &mut out)
            .map(|run| (run.failed, run.tally))
    };
    let result = if detach { py.detach(go) } else { go() };
    // The input (a held buffer) is released here, with the GIL.
    drop(input);
    let mut notes = settings.notes.take();
    let failed = matches!(result, Ok((true, _)));
    // A failed run's last note is its read error: the exception's text.
    let error = if failed { notes.pop() } else { None };
    if !notes.is_empty() {
        static WARNING: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> =
            pyo3::sync::PyOnceLock::new();
        let category = WARNING.import(py, "rpcscan", "ScanWarning")?;
        for note in notes {
            let text = std::ffi::CString::new(format!("rpcscan: {note}"))
                .unwrap_or_else(|_| c"rpcscan: a note with a NUL byte".to_owned());
            PyErr::warn(py, category, &text, 2)?;
        }
    }
    match result {
        Ok((false, tally)) => Ok(tally),
        Ok((true, _)) => Err(PyOSError::new_err(error.unwrap_or_else(|| "read error".to_owned()))),
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
    /// A file or bytes, through the engine; scanned without the GIL when `detach`.
    Engine { input: Input, detach: bool },
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
        Ok(Prepared::Engine { input: Input::Path(path), detach: true })
    }

    /// Any object with the buffer protocol, read where it lies (the export is held until
    /// the run ends, so it cannot be resized or freed meanwhile): NDJSON in parallel
    /// blocks, as a mapped file. `bytes` (or a `memoryview` of it) cannot change, and is
    /// scanned without the GIL; a `bytearray`, `mmap` or array could be written to by
    /// another Python thread, so the GIL stays held while the workers scan it.
    pub(crate) fn bytes(data: &Bound<'_, PyAny>) -> PyResult<Prepared> {
        let bytes = Bytes::get(data)?;
        let detach = bytes.is_immutable();
        Ok(Prepared::Engine { input: Input::Bytes(input::Buffer::new(bytes)), detach })
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
            Prepared::Engine { input, detach } => run_engine(py, cmd, settings, input, detach),
            Prepared::Arrow(arrays) => {
                let tally = py.detach(|| crate::arrow_input::scan(cmd, &arrays, settings))?;
                // Released here, with the GIL held (their producer may need it).
                drop(arrays);
                Ok(tally)
            }
        }
    }
}

/// Scans a file (NDJSON files are read with positioned reads, or memory-mapped with
/// `mmap`, and scanned on all cores).
#[pyfunction]
#[pyo3(signature = (path, framing = "auto", mode = "strict", max_message_size = DEFAULT_MAX_MESSAGE_SIZE, line_format = None, json_field = None, ts_field = None, dir_field = None, mmap = false))]
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
    mmap: bool,
) -> PyResult<Table> {
    let settings =
        settings(framing, mode, max_message_size, line_format, json_field, ts_field, dir_field)?;
    let settings = Settings { mmap, ..settings };
    table(Prepared::path(path)?.run(py, &Collect::ALL, &settings)?)
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
    table(Prepared::arrow(array, &settings)?.run(py, &Collect::ALL, &settings)?)
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
    table(Prepared::bytes(data)?.run(py, &Collect::ALL, &settings)?)
}

fn table(rows: Rows) -> PyResult<Table> {
    Ok(Table { schema: schema(), batches: batches(rows)? })
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
    let settings = rpcscan_traffic::pair::settings(settings);
    let cmd = crate::pair::Pair::new(crate::pair::Columns)
        .max_in_flight(max_in_flight)
        .timeout(crate::pair::timeout(timeout)?);
    let prepared = match source_kind {
        "path" => Prepared::path(source.extract()?)?,
        "bytes" => Prepared::bytes(source)?,
        "arrow" => Prepared::arrow(source, &settings)?,
        other => return Err(PyValueError::new_err(format!("unknown source kind {other:?}"))),
    };
    let tally = prepared.run(py, &cmd, &settings)?;
    let finished = py.detach(|| crate::pair::finish(&cmd, tally))?;
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
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

const STREAM: &CStr = c"arrow_array_stream";

impl Table {
    /// A table of one batch.
    pub(crate) fn new(batch: RecordBatch) -> Table {
        Table { schema: batch.schema(), batches: vec![batch] }
    }
}

#[pymethods]
impl Table {
    /// The Arrow C stream interface: a capsule holding an `ArrowArrayStream` of the record
    /// batches (one per block of input).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is fixed; a consumer asking for another one casts it itself.
        let _ = requested_schema;
        let batches: Vec<_> = self.batches.iter().cloned().map(Ok).collect();
        let reader = RecordBatchIterator::new(batches, self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    /// The number of rows (messages).
    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    fn __repr__(&self) -> String {
        format!("rpcscan.Table({} rows: {})", self.num_rows(), self.column_names().join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block of a log read through the engine becomes a batch whose arrays pass
    /// arrow's own checks (debug builds make them with `try_new`: `crate::columns`), in both
    /// modes, with escapes, lone surrogates, invalid ids and a `params.name` that is not
    /// UTF-8 (envelope mode does not check `params`).
    #[test]
    fn the_blocks_of_a_log_make_arrays_arrow_accepts() {
        let sample =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/mcp-traffic.ndjson"))
                .expect("the sample log");
        let odd: &[&[u8]] = &[
            br#"{"jsonrpc":"2.0","id":"\u00e9","method":"t\u006fols/call","params":{"name":"\u00e9cho"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"\ud800","params":{"name":"\udc00"}}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}",
            br#"{"jsonrpc":"1.0","id":"x\u00e9","method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32000000000000000000000,"message":"m"}}"#,
            b"\xff\xfe",
            b"[]",
        ];
        let mut log = Vec::new();
        while log.len() < 3 << 20 {
            log.extend_from_slice(&sample);
            for line in odd {
                log.extend_from_slice(line);
                log.push(b'\n');
            }
        }
        let path =
            std::env::temp_dir().join(format!("rpcscan-columns-{}.ndjson", std::process::id()));
        std::fs::write(&path, &log).expect("a temporary file");
        let lines = log.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
        for mode in ["strict", "envelope"] {
            // `settings`' own, built without Python (its errors are Python exceptions).
            let settings = Settings {
                framing: None,
                parser: Parser::new()
                    .validation(mode.parse().expect("a mode"))
                    .note_params_name(true),
                max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
                mmap: false,
                extract: None,
                notes: Notes::collect(),
                labels: false,
            };
            let mut out = Output::discard();
            let run = input::run(&Collect::ALL, &settings, &[Input::Path(path.clone())], &mut out)
                .unwrap_or_else(|_| panic!("{mode}: the run stopped"));
            let mut rows = run.tally;
            rows.flush();
            let batches = rows.take_batches().expect("batches");
            assert!(batches.len() > 1, "{mode}: one batch per block");
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            assert_eq!(rows, lines, "{mode}");
            for batch in &batches {
                for column in batch.columns() {
                    column.to_data().validate_full().expect("a valid array");
                }
            }
            let tools = batches
                .iter()
                .flat_map(|b| {
                    let names = b.column(8).as_any().downcast_ref::<LargeStringArray>().unwrap();
                    names.iter().map(|n| n.map(str::to_owned)).collect::<Vec<_>>()
                })
                .filter(|n| n.as_deref() == Some("\u{fffd}"))
                .count();
            // The name that is not UTF-8: strict mode calls its message invalid.
            assert_eq!(tools > 0, mode == "envelope", "{mode}");
        }
        let _ = std::fs::remove_file(&path);
    }
}
