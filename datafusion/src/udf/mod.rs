//! The rpcscan scalar functions, one file each (the datafusion-functions-json layout): a
//! `ScalarUDFImpl`, its shared singleton (`rpc_*_udf()`) and an expression builder
//! (`rpc_*(expr)`) for the DataFrame API.

pub mod error_code;
pub mod id;
pub mod invalid_reason;
pub mod kind;
pub mod method;
pub mod scan;
pub mod text;
pub mod tool_name;
mod verdict;

pub use error_code::rpc_error_code;
pub use id::rpc_id;
pub use invalid_reason::rpc_invalid_reason;
pub use kind::rpc_kind;
pub use method::rpc_method;
pub use scan::rpc_scan;
pub use text::{rpc_text, CheckedLineCast};
pub use tool_name::rpc_tool_name;

/// Declares a one-argument Utf8-returning rpcscan UDF: the struct, its `ScalarUDFImpl`, the
/// singleton and the expression builder. `$row` maps one message's bytes to its value.
macro_rules! utf8_udf {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $udf_fn:ident, $expr_fn:ident, $row:path) => {
        $(#[$doc])*
        #[derive(Debug, PartialEq, Eq, Hash)]
        pub struct $ty {
            signature: datafusion::logical_expr::Signature,
            max_message_size: usize,
        }

        impl Default for $ty {
            fn default() -> Self {
                Self::new(rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE)
            }
        }

        impl $ty {
            /// The function with messages longer than `max_message_size` bytes `too_large`.
            pub fn new(max_message_size: usize) -> Self {
                Self { signature: crate::input::line_signature(), max_message_size }
            }

            /// The longest message parsed; longer ones are `invalid` / `too_large`.
            pub fn max_message_size(&self) -> usize {
                self.max_message_size
            }
        }

        impl datafusion::logical_expr::ScalarUDFImpl for $ty {
            fn name(&self) -> &str {
                $name
            }

            fn signature(&self) -> &datafusion::logical_expr::Signature {
                &self.signature
            }

            fn return_type(
                &self,
                _arg_types: &[datafusion::arrow::datatypes::DataType],
            ) -> datafusion::common::Result<datafusion::arrow::datatypes::DataType> {
                Ok(datafusion::arrow::datatypes::DataType::Utf8)
            }

            fn invoke_with_args(
                &self,
                args: datafusion::logical_expr::ScalarFunctionArgs,
            ) -> datafusion::common::Result<datafusion::logical_expr::ColumnarValue> {
                crate::input::invoke_unary($name, args, |array| {
                    crate::input::utf8_column(array, self.max_message_size, $row)
                })
            }
        }

        #[doc = concat!("The shared `", $name, "` function.")]
        pub fn $udf_fn() -> std::sync::Arc<datafusion::logical_expr::ScalarUDF> {
            static UDF: std::sync::LazyLock<std::sync::Arc<datafusion::logical_expr::ScalarUDF>> =
                std::sync::LazyLock::new(|| {
                    std::sync::Arc::new(datafusion::logical_expr::ScalarUDF::new_from_impl(<$ty>::default()))
                });
            std::sync::Arc::clone(&UDF)
        }

        #[doc = concat!("`", $name, "(line)` as an expression.")]
        pub fn $expr_fn(line: datafusion::logical_expr::Expr) -> datafusion::logical_expr::Expr {
            $udf_fn().call(vec![line])
        }
    };
}
pub(crate) use utf8_udf;
