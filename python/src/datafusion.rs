//! `rpcscan.datafusion` (the `datafusion` cargo feature): rpcscan-datafusion's scalar
//! functions handed to DataFusion for Python (PyPI `datafusion` 55) through DataFusion's FFI.
//!
//! Each function is an object with `__datafusion_scalar_udf__`, which returns a PyCapsule
//! named `datafusion_scalar_udf` holding an `FFI_ScalarUDF`; `datafusion.udf(obj)` turns it
//! into a `datafusion.ScalarUDF` for `SessionContext.register_udf`. The functions run here,
//! in this extension's copy of DataFusion: Python's DataFusion calls them through the FFI
//! structs, with the Arrow arrays passed by the C data interface (no copy).

use std::sync::Arc;

use datafusion_expr::ScalarUDF;
use datafusion_ffi::udf::FFI_ScalarUDF;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rpcscan_datafusion::DEFAULT_MAX_MESSAGE_SIZE;

/// The capsule name DataFusion for Python checks (`ScalarUDF.from_pycapsule`).
const CAPSULE: &std::ffi::CStr = c"datafusion_scalar_udf";

/// One rpcscan function for DataFusion for Python: pass it to `datafusion.udf()`.
#[pyclass(frozen, module = "rpcscan.datafusion", name = "Function")]
pub struct Function {
    udf: Arc<ScalarUDF>,
    max_message_size: Option<usize>,
}

#[pymethods]
impl Function {
    /// The SQL name (`"rpc_kind"`, ...).
    #[getter]
    fn name(&self) -> &str {
        self.udf.name()
    }

    /// The longest message the function parses (longer ones are `invalid` / `too_large`);
    /// `None` for `rpc_text`, which gives no verdicts.
    #[getter]
    fn max_message_size(&self) -> Option<usize> {
        self.max_message_size
    }

    /// The function as a `datafusion_scalar_udf` PyCapsule (DataFusion's FFI).
    fn __datafusion_scalar_udf__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        check_datafusion_version(py)?;
        let ffi = FFI_ScalarUDF::from(Arc::clone(&self.udf));
        PyCapsule::new_with_value(py, ffi, CAPSULE)
    }

    fn __repr__(&self) -> String {
        match self.max_message_size {
            Some(size) => {
                format!("<rpcscan.datafusion.Function {} max_message_size={size}>", self.name())
            }
            None => format!("<rpcscan.datafusion.Function {}>", self.name()),
        }
    }
}

/// datafusion-ffi recommends the same DataFusion on both sides, and its structs change
/// between major versions: a capsule read by another major version's `datafusion` with the
/// wrong layout would be undefined behaviour (typically a crash), so another major version
/// is refused with an error naming both. A `datafusion` that is not imported (another
/// consumer of the capsule) is not checked.
fn check_datafusion_version(py: Python<'_>) -> PyResult<()> {
    let ours = datafusion_ffi::version();
    let modules = py.import("sys")?.getattr("modules")?;
    let Some(module) =
        modules.call_method1("get", ("datafusion",))?.extract::<Option<Bound<'_, PyAny>>>()?
    else {
        return Ok(());
    };
    let Ok(version) = module.getattr("__version__") else {
        return Ok(());
    };
    let version: String = version.extract()?;
    let major = version.split('.').next().and_then(|m| m.parse::<u64>().ok());
    if major == Some(ours) {
        return Ok(());
    }
    Err(PyRuntimeError::new_err(format!(
        "rpcscan's DataFusion functions are built for DataFusion {ours}, but datafusion \
         {version} is imported: their FFI structs do not match; install datafusion=={ours}.*"
    )))
}

/// Every rpcscan function (`rpc_kind`, `rpc_method`, `rpc_id`, `rpc_error_code`,
/// `rpc_tool_name`, `rpc_invalid_reason`, `rpc_scan`, `rpc_text`), with messages longer
/// than `max_message_size` bytes `invalid` / `too_large` (default 16 MiB, the CLI's).
#[pyfunction]
#[pyo3(signature = (max_message_size = DEFAULT_MAX_MESSAGE_SIZE))]
pub fn datafusion_functions(max_message_size: usize) -> PyResult<Vec<Function>> {
    if max_message_size == 0 {
        return Err(PyValueError::new_err("max_message_size must be at least 1"));
    }
    Ok(rpcscan_datafusion::functions_with_max_message_size(max_message_size)
        .into_iter()
        .map(|udf| {
            let max_message_size = rpcscan_datafusion::max_message_size_of(&udf);
            Function { udf, max_message_size }
        })
        .collect())
}
