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
}

impl Default for RpcErrorCode {
    fn default() -> Self {
        Self {
            signature: line_signature(),
        }
    }
}

fn column(array: &dyn Array) -> Result<ArrayRef> {
    let mut out = Int64Builder::with_capacity(array.len());
    each_line(array, |line| {
        out.append_option(line.and_then(|line| verdict::error_code(&rpcscan::parse(line))))
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
        invoke_unary(self.name(), args, column)
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
