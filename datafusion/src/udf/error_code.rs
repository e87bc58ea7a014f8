//! `rpc_error_code(line)`: `error.code` of an error response as Int64 (NULL when the message
//! is not an error response or the code does not fit an i64).

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, Int64Builder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};

use super::verdict;
use crate::input::{each_line, invoke_unary, line_signature};

/// `rpc_error_code(line)`: `error.code` of an error response as Int64.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RpcErrorCode {
    signature: Signature,
    max_message_size: usize,
}

impl Default for RpcErrorCode {
    fn default() -> Self {
        Self::new(rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE)
    }
}

impl RpcErrorCode {
    /// The function with messages longer than `max_message_size` bytes `too_large`.
    pub fn new(max_message_size: usize) -> Self {
        Self { signature: line_signature(), max_message_size }
    }

    /// The longest message parsed; longer ones are `invalid` / `too_large`.
    pub fn max_message_size(&self) -> usize {
        self.max_message_size
    }
}

fn column(array: &dyn Array, max: usize) -> Result<ArrayRef> {
    let mut out = Int64Builder::with_capacity(array.len());
    each_line(array, |line| {
        out.append_option(line.and_then(|line| verdict::error_code(&verdict::scan(line, max))))
    })?;
    Ok(Arc::new(out.finish()))
}

impl ScalarUDFImpl for RpcErrorCode {
    fn name(&self) -> &str {
        "rpc_error_code"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| column(a, self.max_message_size))
    }
}

/// The shared `rpc_error_code` function.
pub fn rpc_error_code_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(RpcErrorCode::default())));
    Arc::clone(&UDF)
}

/// `rpc_error_code(line)` as an expression.
pub fn rpc_error_code(line: Expr) -> Expr {
    rpc_error_code_udf().call(vec![line])
}
