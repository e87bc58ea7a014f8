//! Reading a message column in place, whatever its string or binary encoding, and the
//! shared shape of a one-argument UDF call (array or scalar in, same out).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, Signature, Volatility};

/// The column types every rpcscan function accepts.
pub(crate) const LINE_TYPES: [DataType; 6] = [
    DataType::Utf8,
    DataType::LargeUtf8,
    DataType::Utf8View,
    DataType::Binary,
    DataType::LargeBinary,
    DataType::BinaryView,
];

/// One argument of any of [`LINE_TYPES`]; the verdict depends on the bytes only.
pub(crate) fn line_signature() -> Signature {
    Signature::uniform(1, LINE_TYPES.to_vec(), Volatility::Immutable)
}

/// Calls `f` once per row with the row's bytes (borrowed from the Arrow buffers), or
/// `None` for a NULL row.
pub(crate) fn each_line(array: &dyn Array, mut f: impl FnMut(Option<&[u8]>)) -> Result<()> {
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().for_each(|v| f(v.map(str::as_bytes))),
        DataType::LargeUtf8 => {
            array.as_string::<i64>().iter().for_each(|v| f(v.map(str::as_bytes)))
        }
        DataType::Utf8View => array.as_string_view().iter().for_each(|v| f(v.map(str::as_bytes))),
        DataType::Binary => array.as_binary::<i32>().iter().for_each(f),
        DataType::LargeBinary => array.as_binary::<i64>().iter().for_each(f),
        DataType::BinaryView => array.as_binary_view().iter().for_each(f),
        DataType::Null => (0..array.len()).for_each(|_| f(None)),
        other => return exec_err!("rpcscan functions take a string or binary column, not {other}"),
    }
    Ok(())
}

/// Runs `column` (one input array → one output array of the same length) on the call's
/// single argument; a scalar argument gives a scalar result.
pub(crate) fn invoke_unary(
    name: &str,
    args: ScalarFunctionArgs,
    column: impl FnOnce(&dyn Array) -> Result<ArrayRef>,
) -> Result<ColumnarValue> {
    let [arg] = <[ColumnarValue; 1]>::try_from(args.args).map_err(|args| {
        datafusion::common::DataFusionError::Execution(format!(
            "{name} takes one argument, got {}",
            args.len()
        ))
    })?;
    match arg {
        ColumnarValue::Array(array) => Ok(ColumnarValue::Array(column(array.as_ref())?)),
        ColumnarValue::Scalar(scalar) => {
            let array = scalar.to_array_of_size(1)?;
            let out = column(array.as_ref())?;
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        }
    }
}

/// Builds a Utf8 column from a per-row function (`None` → NULL), which gets the row and the
/// maximum message size.
pub(crate) fn utf8_column(
    array: &dyn Array,
    max_message_size: usize,
    row: fn(&[u8], usize) -> Option<Text<'_>>,
) -> Result<ArrayRef> {
    let mut out =
        datafusion::arrow::array::StringBuilder::with_capacity(array.len(), array.len() * 8);
    each_line(array, |line| match line.and_then(|l| row(l, max_message_size)) {
        Some(text) => out.append_value(text),
        None => out.append_null(),
    })?;
    Ok(Arc::new(out.finish()))
}

/// Text a row function hands back: borrowed from the message or owned after unescaping.
pub(crate) type Text<'a> = std::borrow::Cow<'a, str>;
