//! `rpc_scan(line)`: every field of the other functions from one scan of the message, as a
//! struct `{kind, method, id, error_code, tool_name, invalid_reason}` (NULL for a NULL row).

use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, Int64Builder, StringBuilder, StructArray};
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};

use super::verdict;
use crate::input::{each_line, invoke_unary, line_signature};

/// `rpc_scan(line)`: all rpcscan fields of a message in one pass.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RpcScan {
    signature: Signature,
    max_message_size: usize,
}

impl Default for RpcScan {
    fn default() -> Self {
        Self::new(rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE)
    }
}

impl RpcScan {
    /// The function with messages longer than `max_message_size` bytes `too_large`.
    pub fn new(max_message_size: usize) -> Self {
        Self { signature: line_signature(), max_message_size }
    }

    /// The longest message parsed; longer ones are `invalid` / `too_large`.
    pub fn max_message_size(&self) -> usize {
        self.max_message_size
    }
}

/// The struct's fields, in order (every one nullable: a field is NULL when it does not apply).
pub fn scan_fields() -> Fields {
    Fields::from(vec![
        Field::new("kind", DataType::Utf8, true),
        Field::new("method", DataType::Utf8, true),
        Field::new("id", DataType::Utf8, true),
        Field::new("error_code", DataType::Int64, true),
        Field::new("tool_name", DataType::Utf8, true),
        Field::new("invalid_reason", DataType::Utf8, true),
    ])
}

fn column(array: &dyn Array, max: usize) -> Result<ArrayRef> {
    let n = array.len();
    let mut kind = StringBuilder::with_capacity(n, n * 8);
    let mut method = StringBuilder::with_capacity(n, n * 8);
    let mut id = StringBuilder::with_capacity(n, n * 4);
    let mut code = Int64Builder::with_capacity(n);
    let mut tool = StringBuilder::with_capacity(n, n * 4);
    let mut reason = StringBuilder::new();
    each_line(array, |line| match line {
        Some(line) => {
            let scan = verdict::scan(line, max);
            kind.append_value(verdict::kind(&scan));
            method.append_option(verdict::method(&scan));
            id.append_option(verdict::id(&scan));
            code.append_option(verdict::error_code(&scan));
            tool.append_option(verdict::tool_name(&scan));
            reason.append_option(verdict::invalid_reason(&scan));
        }
        None => {
            kind.append_null();
            method.append_null();
            id.append_null();
            code.append_null();
            tool.append_null();
            reason.append_null();
        }
    })?;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(kind.finish()),
        Arc::new(method.finish()),
        Arc::new(id.finish()),
        Arc::new(code.finish()),
        Arc::new(tool.finish()),
        Arc::new(reason.finish()),
    ];
    let nulls = array.logical_nulls().filter(|n| n.null_count() > 0);
    Ok(Arc::new(StructArray::try_new(scan_fields(), columns, nulls)?))
}

impl ScalarUDFImpl for RpcScan {
    fn name(&self) -> &str {
        "rpc_scan"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Struct(scan_fields()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        invoke_unary(self.name(), args, |a| column(a, self.max_message_size))
    }
}

/// The shared `rpc_scan` function.
pub fn rpc_scan_udf() -> Arc<ScalarUDF> {
    static UDF: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(RpcScan::default())));
    Arc::clone(&UDF)
}

/// `rpc_scan(line)` as an expression.
pub fn rpc_scan(line: Expr) -> Expr {
    rpc_scan_udf().call(vec![line])
}
