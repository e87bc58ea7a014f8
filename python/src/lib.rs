//! `rpcscan._rpcscan`: the Rust half of the `rpcscan` Python package.
//!
//! | file | what it is |
//! |---|---|
//! | `lib.rs` | `classify`, `parse`, `respond`, and the `Message` class |
//! | `buffer.rs` | the bytes of `bytes` / `bytearray` / `memoryview`, borrowed without a copy |
//! | `scan.rs` | `scan`: whole logs through the engine (`rpcscan-traffic`) into an Arrow table |
//! | `columns.rs` | `scan`'s string columns, validity bitmaps and arrays (arrow's checks skipped) |
//! | `arrow_input.rs` | `scan` of an Arrow array of messages (the C data interface) |
//! | `log_reader.rs` | `LogReader`: a log's batches streamed to `scan_log` (Polars IO source) |
//! | `pair.rs` | `pair`: responses matched to requests by the library's `Pairing` |
//! | `datafusion.rs` | `rpcscan.datafusion`'s functions through DataFusion's FFI (`datafusion` feature) |
//! | `polars_plugin.rs` | the `.rpc` expression namespace as a Polars plugin (`polars` feature) |
//!
//! Verdicts, reasons, codes and answers are the library's (docs/spec.md §3, §4); nothing is
//! decided here. `rpcscan.InvalidMessage` is defined in Python (`rpcscan/__init__.py`): an
//! `abi3` build for 3.9 cannot subclass `ValueError` from Rust.
#![deny(missing_docs)]

mod arrow_input;
mod buffer;
mod columns;
#[cfg(feature = "datafusion")]
mod datafusion;
mod log_reader;
mod pair;
#[cfg(feature = "polars")]
mod polars_plugin;
mod pool;
mod scan;

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyString, PyTuple, PyType};
use rpcscan::response::{ErrorResponse, METHOD_NOT_FOUND};
use rpcscan::{Id, Invalid, Kind, Parser, Str, Validation};

use crate::buffer::Bytes;

/// The bytes of a message argument: an exact `bytes` read in place, another object's held
/// buffer, or the UTF-8 of a `str`.
enum Input<'a> {
    Bytes(&'a [u8]),
    Buffer(Bytes),
    Text(String),
}

impl<'a> Input<'a> {
    fn get(obj: &'a Bound<'_, PyAny>) -> PyResult<Input<'a>> {
        // The common case first: an exact `bytes` is immutable and read in place, with no
        // buffer export to take and release.
        if let Ok(bytes) = obj.cast_exact::<PyBytes>() {
            return Ok(Input::Bytes(bytes.as_bytes()));
        }
        if let Ok(text) = obj.cast::<PyString>() {
            return Ok(Input::Text(text.to_cow()?.into_owned()));
        }
        Bytes::get(obj).map(Input::Buffer)
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Input::Bytes(bytes) => bytes,
            Input::Buffer(bytes) => bytes.as_slice(),
            Input::Text(text) => text.as_bytes(),
        }
    }

    /// `true` when no other thread can change the bytes while the GIL is released.
    fn is_immutable(&self) -> bool {
        match self {
            Input::Bytes(_) | Input::Text(_) => true,
            Input::Buffer(bytes) => bytes.is_immutable(),
        }
    }
}

/// `strict=True` → strict validation, `False` → envelope mode (docs/spec.md §6).
fn parser(strict: bool) -> Parser {
    Parser::new().validation(if strict { Validation::Strict } else { Validation::Envelope })
}

/// A JSON string's text: decoded by the library, or by the standard library's `json` when
/// it holds a lone surrogate escape (which a Python `str` can carry, and Rust's cannot).
fn text<'py>(py: Python<'py>, s: Str<'_>) -> PyResult<Bound<'py, PyAny>> {
    match s.decode() {
        Ok(decoded) => Ok(PyString::new(py, &decoded).into_any()),
        Err(_) => {
            let mut quoted = Vec::with_capacity(s.raw().len() + 2);
            quoted.push(b'"');
            quoted.extend_from_slice(s.raw());
            quoted.push(b'"');
            json_loads(py, &quoted)
        }
    }
}

/// `json.loads(raw)`.
fn json_loads<'py>(py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let loads = LOADS
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("json")?.getattr("loads")?.unbind()))?;
    loads.bind(py).call1((PyBytes::new(py, raw),))
}

/// The fewest digits Python's integer string conversion limit can be set to
/// (`sys.set_int_max_str_digits`): literals this short always convert.
const INT_MIN_STR_DIGITS_LIMIT: usize = 640;

/// An integer literal of any size, exactly: a Python `int` (`int()` on its text), or a
/// `decimal.Decimal` holding the same integer when the literal has more digits than the
/// interpreter's integer string conversion limit allows (`sys.get_int_max_str_digits()`,
/// 4300 by default: converting longer text to `int` takes quadratic time, so Python
/// refuses it, and so does this function rather than raise `ValueError` or lift the limit).
/// A `Decimal` with an integral value compares and hashes like the `int` it stands for.
fn integer<'py>(py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let digits = std::str::from_utf8(raw).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let count = digits.trim_start_matches('-').len();
    if count > INT_MIN_STR_DIGITS_LIMIT && count > int_max_str_digits(py)? {
        static DECIMAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let decimal = DECIMAL.get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("decimal")?.getattr("Decimal")?.unbind())
        })?;
        return decimal.bind(py).call1((digits,));
    }
    py.get_type::<pyo3::types::PyInt>().call1((digits,))
}

/// `sys.get_int_max_str_digits()`, with 0 (no limit) as `usize::MAX`; no limit on a Python
/// without it.
fn int_max_str_digits(py: Python<'_>) -> PyResult<usize> {
    let sys = py.import("sys")?;
    let Ok(get) = sys.getattr("get_int_max_str_digits") else {
        return Ok(usize::MAX);
    };
    match get.call0()?.extract::<usize>()? {
        0 => Ok(usize::MAX),
        limit => Ok(limit),
    }
}

/// An id as Python sees it: `int` (any size), `str`, or `None` for `null`.
fn id_value<'py>(py: Python<'py>, id: Id<'_>) -> PyResult<Bound<'py, PyAny>> {
    if id.is_integer() {
        integer(py, id.raw())
    } else if let Some(s) = id.as_str() {
        text(py, s)
    } else {
        Ok(py.None().into_bound(py))
    }
}

/// The `rpcscan.InvalidMessage` exception for `inv`.
fn invalid_error(py: Python<'_>, inv: &Invalid<'_>) -> PyErr {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let class = match CLASS.import(py, "rpcscan", "InvalidMessage") {
        Ok(class) => class,
        Err(e) => return e,
    };
    let id_raw = inv.id().map(|id| PyBytes::new(py, id.raw()));
    let response = PyBytes::new(py, &inv.response().to_vec());
    let args = (inv.to_string(), inv.reason().as_str(), inv.code(), inv.offset(), id_raw, response);
    match class.call1(args) {
        Ok(err) => PyErr::from_value(err),
        Err(e) => e,
    }
}

/// The kind of one message: `"request"`, `"notification"`, `"result"`, `"error"` or
/// `"invalid"` (the rule book, §1: see `help(rpcscan)`).
///
/// >>> rpcscan.classify(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
/// 'request'
#[pyfunction]
#[pyo3(signature = (data, strict = true))]
fn classify(py: Python<'_>, data: &Bound<'_, PyAny>, strict: bool) -> PyResult<Py<PyString>> {
    let input = Input::get(data)?;
    let bytes = input.as_slice();
    // Large immutable messages are scanned without holding the GIL.
    let kind = if bytes.len() >= 1 << 16 && input.is_immutable() {
        py.detach(|| parser(strict).classify(bytes))
    } else {
        parser(strict).classify(bytes)
    };
    Ok(kind_str(py, kind))
}

/// The kind's name as a Python `str`: one interned object per kind, made once.
fn kind_str(py: Python<'_>, kind: Kind) -> Py<PyString> {
    static KINDS: PyOnceLock<[Py<PyString>; 5]> = PyOnceLock::new();
    let kinds = KINDS.get_or_init(py, || {
        [Kind::Request, Kind::Notification, Kind::Result, Kind::Error, Kind::Invalid]
            .map(|k| PyString::intern(py, k.as_str()).unbind())
    });
    let index = match kind {
        Kind::Request => 0,
        Kind::Notification => 1,
        Kind::Result => 2,
        Kind::Error => 3,
        Kind::Invalid => 4,
    };
    kinds[index].clone_ref(py)
}

/// A valid JSON-RPC 2.0 message: its kind and the members a router reads (the rule book, §5).
/// Values the scanner does not read (`params`, `result`, `error.data`) are raw JSON bytes;
/// `params_json()` and friends decode them with the standard library's `json`.
#[pyclass(frozen, module = "rpcscan")]
struct Message {
    /// `"request"`, `"notification"`, `"result"` or `"error"`.
    #[pyo3(get)]
    kind: &'static str,
    /// `int` (any size, exact), `str`, or `None` (no id, or `"id": null`). An integer with
    /// more digits than Python's integer string conversion limit allows
    /// (`sys.get_int_max_str_digits()`, 4300 by default) is a `decimal.Decimal` of the same
    /// exact value instead (it compares and hashes equal to the `int`).
    #[pyo3(get)]
    id: Py<PyAny>,
    /// The id's bytes exactly as sent (quotes included for a string), or `None` without one.
    #[pyo3(get)]
    id_raw: Option<Py<PyBytes>>,
    /// The decoded `method` of a request or notification.
    #[pyo3(get)]
    method: Option<Py<PyAny>>,
    /// `params.name` of a `tools/call` request, decoded.
    #[pyo3(get)]
    tool_name: Option<Py<PyAny>>,
    /// `params` as raw JSON bytes.
    #[pyo3(get)]
    params: Option<Py<PyBytes>>,
    /// `result` as raw JSON bytes.
    #[pyo3(get)]
    result: Option<Py<PyBytes>>,
    /// `error.data` as raw JSON bytes.
    #[pyo3(get)]
    error_data: Option<Py<PyBytes>>,
    /// `error.code` as an `int` of any size (a `decimal.Decimal` past Python's integer
    /// string conversion limit, as `id`).
    #[pyo3(get)]
    error_code: Option<Py<PyAny>>,
    /// `error.message`, decoded.
    #[pyo3(get)]
    error_message: Option<Py<PyAny>>,
}

fn decode_raw(py: Python<'_>, raw: &Option<Py<PyBytes>>) -> PyResult<Py<PyAny>> {
    match raw {
        Some(bytes) => json_loads(py, bytes.as_bytes(py)).map(Bound::unbind),
        None => Ok(py.None()),
    }
}

impl Message {
    /// The fields in the constructor's order: what pickling, equality and hashing see.
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let opt = |v: &Option<Py<PyAny>>| match v {
            Some(v) => v.clone_ref(py),
            None => py.None(),
        };
        let opt_bytes = |v: &Option<Py<PyBytes>>| match v {
            Some(v) => v.clone_ref(py).into_any(),
            None => py.None(),
        };
        PyTuple::new(
            py,
            [
                PyString::new(py, self.kind).into_any().unbind(),
                self.id.clone_ref(py),
                opt_bytes(&self.id_raw),
                opt(&self.method),
                opt(&self.tool_name),
                opt_bytes(&self.params),
                opt_bytes(&self.result),
                opt_bytes(&self.error_data),
                opt(&self.error_code),
                opt(&self.error_message),
            ],
        )
    }
}

/// `None` as `Option::None`, anything else kept.
fn some(value: Option<Bound<'_, PyAny>>) -> Option<Py<PyAny>> {
    value.filter(|v| !v.is_none()).map(Bound::unbind)
}

#[pymethods]
impl Message {
    /// A message from its fields, as `parse` fills them (pickling uses this); `kind` is
    /// one of the four valid kinds. `parse` is the way to get one from bytes.
    #[new]
    #[pyo3(signature = (kind, id = None, id_raw = None, method = None, tool_name = None, params = None, result = None, error_data = None, error_code = None, error_message = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        kind: &str,
        id: Option<Bound<'_, PyAny>>,
        id_raw: Option<Bound<'_, PyBytes>>,
        method: Option<Bound<'_, PyAny>>,
        tool_name: Option<Bound<'_, PyAny>>,
        params: Option<Bound<'_, PyBytes>>,
        result: Option<Bound<'_, PyBytes>>,
        error_data: Option<Bound<'_, PyBytes>>,
        error_code: Option<Bound<'_, PyAny>>,
        error_message: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Message> {
        let kind = [Kind::Request, Kind::Notification, Kind::Result, Kind::Error]
            .into_iter()
            .map(Kind::as_str)
            .find(|k| *k == kind)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "kind must be request, notification, result or error, not {kind:?}"
                ))
            })?;
        Ok(Message {
            kind,
            id: some(id).unwrap_or_else(|| py.None()),
            id_raw: id_raw.map(Bound::unbind),
            method: some(method),
            tool_name: some(tool_name),
            params: params.map(Bound::unbind),
            result: result.map(Bound::unbind),
            error_data: error_data.map(Bound::unbind),
            error_code: some(error_code),
            error_message: some(error_message),
        })
    }

    /// Pickles as its class and fields.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        Ok((slf.get_type(), slf.get().fields(slf.py())?))
    }

    /// Equal when every field is.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match other.cast::<Message>() {
            Ok(other) => {
                let equal = self.fields(py)?.eq(other.get().fields(py)?)?;
                Ok(PyBool::new(py, equal).to_owned().into_any().unbind())
            }
            Err(_) => Ok(py.NotImplemented()),
        }
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.fields(py)?.hash()
    }

    /// `params` decoded with `json.loads`, or `None` without params.
    fn params_json(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        decode_raw(py, &self.params)
    }

    /// `result` decoded with `json.loads`, or `None` for other kinds.
    fn result_json(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        decode_raw(py, &self.result)
    }

    /// `error.data` decoded with `json.loads`, or `None` without it.
    fn error_data_json(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        decode_raw(py, &self.error_data)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let id = self.id.bind(py).repr()?;
        let method = match &self.method {
            Some(m) => m.bind(py).repr()?.to_string(),
            None => "None".to_owned(),
        };
        Ok(format!("Message(kind='{}', id={id}, method={method})", self.kind))
    }
}

/// Scans one message and returns its `Message`, or raises `rpcscan.InvalidMessage`
/// (a `ValueError`) with the reason, code, offset, recovered id and the answer's bytes.
///
/// >>> m = rpcscan.parse(b'{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}')
/// >>> m.id
/// 18446744073709551617
#[pyfunction]
#[pyo3(signature = (data, strict = true))]
fn parse(py: Python<'_>, data: &Bound<'_, PyAny>, strict: bool) -> PyResult<Message> {
    let input = Input::get(data)?;
    let msg = match parser(strict).parse(input.as_slice()) {
        Ok(msg) => msg,
        Err(inv) => return Err(invalid_error(py, &inv)),
    };
    let bytes = |raw: &[u8]| PyBytes::new(py, raw).unbind();
    let id = match msg.id() {
        Some(id) => id_value(py, id)?.unbind(),
        None => py.None(),
    };
    let opt_text = |s: Option<Str<'_>>| -> PyResult<Option<Py<PyAny>>> {
        s.map(|s| text(py, s).map(Bound::unbind)).transpose()
    };
    Ok(Message {
        kind: msg.kind().as_str(),
        id,
        id_raw: msg.id().map(|id| bytes(id.raw())),
        method: opt_text(msg.method())?,
        tool_name: opt_text(msg.mcp().tool_name())?,
        params: msg.params().map(|raw| bytes(raw.as_bytes())),
        result: msg.result().map(|raw| bytes(raw.as_bytes())),
        error_data: msg.error_data().map(|raw| bytes(raw.as_bytes())),
        error_code: msg
            .error_code()
            .map(|c| integer(py, c.raw()).map(Bound::unbind))
            .transpose()?,
        error_message: opt_text(msg.error_message())?,
    })
}

/// What a server answers to one message, as `rpcscan respond` prints it (the rule book, §4):
/// the -32700 / -32600 error response for an invalid message (with the recovered id or
/// `null`), -32601 for a request whose method is not in `supported`, and `None` for a
/// supported request, a notification, a result or an error.
///
/// >>> rpcscan.respond(b'{"jsonrpc":"2.0","id":7,"method":"nope"}')
/// b'{"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}}'
#[pyfunction]
#[pyo3(signature = (data, supported = None, strict = true))]
fn respond<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    supported: Option<&Bound<'py, PyAny>>,
    strict: bool,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let supported: Vec<String> = match supported {
        None => vec!["tools/list".to_owned(), "tools/call".to_owned()],
        Some(obj) if obj.is_instance_of::<PyString>() => {
            return Err(PyTypeError::new_err(
                "supported must be a collection of method names, not one str",
            ))
        }
        Some(obj) => obj
            .try_iter()?
            .map(|m| m.and_then(|m| m.extract::<String>()))
            .collect::<PyResult<_>>()?,
    };
    let input = Input::get(data)?;
    let answer: Cow<'_, [u8]> = match parser(strict).parse(input.as_slice()) {
        Err(inv) => inv.response().to_vec().into(),
        Ok(m) if m.kind() == Kind::Request => {
            let known =
                m.method().is_some_and(|method| supported.iter().any(|s| method == s.as_str()));
            if known {
                return Ok(None);
            }
            let mut response = ErrorResponse::standard(METHOD_NOT_FOUND);
            if let Some(id) = m.id() {
                response = response.id(id.raw());
            }
            response.to_vec().into()
        }
        Ok(_) => return Ok(None),
    };
    Ok(Some(PyBytes::new(py, &answer)))
}

/// The reason names of the rule book's §4 with their codes, in the library's order.
#[pyfunction]
fn reasons(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyTuple>>> {
    rpcscan::Reason::ALL
        .iter()
        .map(|r| {
            PyTuple::new(
                py,
                [r.as_str().into_pyobject(py)?.into_any(), r.code().into_pyobject(py)?.into_any()],
            )
        })
        .collect()
}

#[pymodule]
fn _rpcscan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(classify, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(respond, m)?)?;
    m.add_function(wrap_pyfunction!(reasons, m)?)?;
    m.add_function(wrap_pyfunction!(scan::scan_path, m)?)?;
    m.add_function(wrap_pyfunction!(scan::scan_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(scan::scan_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(scan::pair, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Message>()?;
    m.add_class::<scan::Table>()?;
    m.add_class::<log_reader::LogReader>()?;
    m.add("POLARS_PLUGIN", cfg!(feature = "polars"))?;
    #[cfg(feature = "datafusion")]
    {
        m.add_function(wrap_pyfunction!(datafusion::datafusion_functions, m)?)?;
        m.add_class::<datafusion::Function>()?;
        m.add("DATAFUSION_FFI_MAJOR", datafusion_ffi::version())?;
    }
    Ok(())
}
