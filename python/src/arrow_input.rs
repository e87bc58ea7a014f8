//! `scan(array)`: an Arrow array or chunked array of messages, one per element, imported
//! through the Arrow C data interface (`__arrow_c_stream__`, `__arrow_c_array__`), so
//! pyarrow, Polars, DuckDB and nanoarrow objects work without pyarrow being required.
//!
//! Layouts: string, large string, string view, binary, large binary, binary view (and a
//! struct of exactly one such column, such as a one-column table). Row `line` is the
//! element's 1-based position, `offset` its byte offset were the elements joined by
//! newlines, so `scan(array)` equals `scan(b"\n".join(array))` for elements that hold no
//! newline and are not blank. Null elements are no messages (no row), as blank lines.

#![allow(unsafe_code)]

use std::ffi::CStr;
use std::ptr::NonNull;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{make_array, Array, ArrayRef};
use arrow_schema::DataType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use rayon::prelude::*;
use rpcscan::Reason;
use rpcscan_traffic::input::{Command, Item, Settings, Source, Verdict};

/// Elements per unit of parallel work.
const CHUNK: usize = 16 * 1024;

fn arrow_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("Arrow import: {e}"))
}

fn pointer(capsule: &Bound<'_, PyAny>, name: &'static CStr) -> PyResult<NonNull<std::ffi::c_void>> {
    let capsule = capsule.cast::<PyCapsule>()?;
    capsule.pointer_checked(Some(name))
}

/// The arrays of an object with the Arrow PyCapsule interface, in order.
pub fn import(obj: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    if obj.hasattr("__arrow_c_stream__")? {
        let capsule = obj.call_method0("__arrow_c_stream__")?;
        let raw = pointer(&capsule, c"arrow_array_stream")?;
        // SAFETY: the capsule named `arrow_array_stream` points to an `ArrowArrayStream`
        // (the PyCapsule interface's contract); `from_raw` moves it out and marks the
        // original released, so the capsule's destructor does not release it again.
        let mut stream = unsafe { FFI_ArrowArrayStream::from_raw(raw.as_ptr().cast()) };
        let mut schema = FFI_ArrowSchema::empty();
        let get_schema =
            stream.get_schema.ok_or_else(|| arrow_error("a stream without get_schema"))?;
        let get_next = stream.get_next.ok_or_else(|| arrow_error("a stream without get_next"))?;
        // SAFETY: the stream's own callback, on the stream, writing a schema into `schema`.
        if unsafe { get_schema(&mut stream, &mut schema) } != 0 {
            return Err(arrow_error(last_error(&mut stream)));
        }
        let data_type = DataType::try_from(&schema).map_err(arrow_error)?;
        let mut arrays = Vec::new();
        loop {
            let mut array = FFI_ArrowArray::empty();
            // SAFETY: the stream's own callback, on the stream, writing an array into `array`.
            if unsafe { get_next(&mut stream, &mut array) } != 0 {
                return Err(arrow_error(last_error(&mut stream)));
            }
            if array.is_released() {
                break;
            }
            // SAFETY: `array` was just filled by the producer for this stream's schema.
            let data =
                unsafe { from_ffi_and_data_type(array, data_type.clone()) }.map_err(arrow_error)?;
            arrays.push(make_array(data));
        }
        return Ok(arrays);
    }
    if obj.hasattr("__arrow_c_array__")? {
        let pair = obj.call_method0("__arrow_c_array__")?;
        let pair = pair.cast::<PyTuple>()?;
        let schema = pointer(&pair.get_item(0)?, c"arrow_schema")?;
        let array = pointer(&pair.get_item(1)?, c"arrow_array")?;
        // SAFETY: the capsules point to an `ArrowSchema` and an `ArrowArray` (the PyCapsule
        // interface's contract). The array is moved out (its original marked released, so
        // the capsule's destructor skips it); the schema is only borrowed.
        let data = unsafe {
            let array = FFI_ArrowArray::from_raw(array.as_ptr().cast());
            let schema = &*schema.as_ptr().cast::<FFI_ArrowSchema>();
            from_ffi(array, schema)
        }
        .map_err(arrow_error)?;
        return Ok(vec![make_array(data)]);
    }
    Err(PyTypeError::new_err("not an Arrow array (no __arrow_c_stream__ / __arrow_c_array__)"))
}

fn last_error(stream: &mut FFI_ArrowArrayStream) -> String {
    let fallback = || "the stream reported an error".to_owned();
    let Some(get_last_error) = stream.get_last_error else {
        return fallback();
    };
    // SAFETY: the stream's own callback; it returns null or a NUL-terminated string that
    // stays valid until the next call on the stream, and we copy it at once.
    unsafe {
        let text = get_last_error(stream);
        if text.is_null() {
            return fallback();
        }
        CStr::from_ptr(text).to_string_lossy().into_owned()
    }
}

/// One array's elements as bytes.
enum Values<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    BinaryView(&'a arrow_array::BinaryViewArray),
}

impl<'a> Values<'a> {
    fn new(array: &'a dyn Array) -> PyResult<Values<'a>> {
        Ok(match array.data_type() {
            DataType::Utf8 => Values::Utf8(array.as_string::<i32>()),
            DataType::LargeUtf8 => Values::LargeUtf8(array.as_string::<i64>()),
            DataType::Utf8View => Values::Utf8View(array.as_string_view()),
            DataType::Binary => Values::Binary(array.as_binary::<i32>()),
            DataType::LargeBinary => Values::LargeBinary(array.as_binary::<i64>()),
            DataType::BinaryView => Values::BinaryView(array.as_binary_view()),
            DataType::Struct(fields) if fields.len() == 1 => {
                return Values::new(array.as_struct().column(0).as_ref())
            }
            other => {
                return Err(PyTypeError::new_err(format!(
                    "scan: an Arrow source must hold strings or binary (string, large_string, \
                     string_view, binary, large_binary, binary_view), not {other}"
                )))
            }
        })
    }

    fn len(&self) -> usize {
        match self {
            Values::Utf8(a) => a.len(),
            Values::LargeUtf8(a) => a.len(),
            Values::Utf8View(a) => a.len(),
            Values::Binary(a) => a.len(),
            Values::LargeBinary(a) => a.len(),
            Values::BinaryView(a) => a.len(),
        }
    }

    fn get(&self, i: usize) -> Option<&'a [u8]> {
        macro_rules! value {
            ($a:expr, $bytes:expr) => {
                if $a.is_null(i) {
                    None
                } else {
                    Some($bytes)
                }
            };
        }
        match self {
            Values::Utf8(a) => value!(a, a.value(i).as_bytes()),
            Values::LargeUtf8(a) => value!(a, a.value(i).as_bytes()),
            Values::Utf8View(a) => value!(a, a.value(i).as_bytes()),
            Values::Binary(a) => value!(a, a.value(i)),
            Values::LargeBinary(a) => value!(a, a.value(i)),
            Values::BinaryView(a) => value!(a, a.value(i)),
        }
    }
}

/// Scans every element of `arrays` with `cmd` (in order, on the rayon pool: each unit's
/// tally, then merged in input order).
pub fn scan<C: Command>(cmd: &C, arrays: &[ArrayRef], settings: &Settings) -> PyResult<C::Tally> {
    let values = arrays.iter().map(|a| Values::new(a.as_ref())).collect::<PyResult<Vec<_>>>()?;
    // Work units: (array, first element, end, line of the first element, its offset).
    let mut units = Vec::new();
    let (mut line, mut offset) = (1u64, 0u64);
    for (n, v) in values.iter().enumerate() {
        let mut start = 0;
        while start < v.len() {
            let end = (start + CHUNK).min(v.len());
            units.push((n, start, end, line, offset));
            for i in start..end {
                offset += v.get(i).map_or(0, |b| b.len() as u64 + 1);
            }
            line += (end - start) as u64;
            start = end;
        }
    }
    let source = Source {
        name: "<arrow>".to_owned(),
        json_name: b"\"<arrow>\"".to_vec(),
        extract: None,
        index: 0,
        stream: 0,
        notes: settings.notes.clone(),
    };
    let parts: Vec<C::Tally> = units
        .par_iter()
        .map(|&(n, start, end, line, mut offset)| {
            let mut tally = C::Tally::default();
            let mut out = Vec::new();
            for i in start..end {
                let Some(bytes) = values[n].get(i) else {
                    continue;
                };
                let verdict = if bytes.len() > settings.max_message_size {
                    Verdict::Skipped { reason: Reason::TooLarge, len: bytes.len() as u64 }
                } else {
                    match settings.parser.parse(bytes) {
                        Ok(m) => Verdict::Message(m),
                        Err(inv) => Verdict::Invalid(inv),
                    }
                };
                let item = Item::bare(offset, line + (i - start) as u64, bytes, verdict);
                cmd.item(&source, &item, &mut out, &mut tally);
                offset += bytes.len() as u64 + 1;
            }
            tally
        })
        .collect();
    let mut all = C::Tally::default();
    for part in parts {
        cmd.merge(&mut all, part);
    }
    Ok(all)
}
