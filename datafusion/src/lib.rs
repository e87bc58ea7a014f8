//! # rpcscan-datafusion
//!
//! [rpcscan](rpcscan)'s verdicts inside Apache DataFusion: scalar functions that classify a
//! column of JSON-RPC 2.0 / MCP messages in place, and a `lines` file format that reads log
//! files as one `line` column, split into newline-aligned byte ranges so one large file is
//! scanned by every core.
//!
//! ```no_run
//! # async fn demo() -> datafusion::error::Result<()> {
//! use datafusion::prelude::SessionContext;
//!
//! let ctx = SessionContext::new();
//! rpcscan_datafusion::register(&ctx)?; // the functions and `STORED AS LINES`
//! ctx.sql("CREATE EXTERNAL TABLE logs STORED AS LINES LOCATION 'traffic/'").await?;
//! ctx.sql("SELECT rpc_kind(line) AS kind, count(*) FROM logs GROUP BY 1").await?.show().await?;
//! # Ok(()) }
//! ```
//!
//! ## The functions
//!
//! Every function takes one argument of type `Utf8`, `LargeUtf8`, `Utf8View`, `Binary`,
//! `LargeBinary` or `BinaryView` (one message per row, no framing), reads the Arrow buffers in
//! place, and returns NULL for a NULL row. Verdicts are strict mode ([`rpcscan::parse`]):
//! bytes that are not UTF-8 (only possible in a binary column) are `invalid`/`invalid_utf8`.
//!
//! | function | type | value |
//! |---|---|---|
//! | `rpc_kind(line)` | Utf8 | `request`, `notification`, `result`, `error` or `invalid` |
//! | `rpc_method(line)` | Utf8 | the decoded `method` of requests and notifications |
//! | `rpc_id(line)` | Utf8 | the id's exact text (`"a"` with quotes, `9007199254740993`, `null`) |
//! | `rpc_error_code(line)` | Int64 | `error.code` of error responses, when it fits an i64 |
//! | `rpc_tool_name(line)` | Utf8 | `params.name` of a `tools/call` request |
//! | `rpc_invalid_reason(line)` | Utf8 | the reason name of an invalid message ([`rpcscan::Reason::as_str`]) |
//! | `rpc_scan(line)` | Struct | all six above (`kind`, `method`, `id`, `error_code`, `tool_name`, `invalid_reason`) from one scan |
//!
//! Choices where SQL needs an answer the rule book does not give:
//!
//! * `rpc_id` of an error response with `"id": null` is the text `null`; a message without
//!   an `id` member gives SQL NULL. For an invalid message it is the id a server would echo
//!   ([`rpcscan::Invalid::id`]), or NULL.
//! * A method or tool name with a lone surrogate escape (`"\ud800"`) cannot be decoded to
//!   text; the function returns its raw escaped text instead.
//! * `rpc_error_code` is NULL for a code outside the i64 range (still a valid `error`).
//!
//! ## The `lines` format
//!
//! [`LinesFormatFactory`] (`STORED AS LINES`) and [`LinesTable`] read files as one non-null
//! `line` column of type `Binary`, framed like rpcscan's NDJSON framing: split on `\n`, one
//! trailing `\r` removed, lines that are empty or only spaces/tabs/CRs skipped, a last line
//! without `\n` kept. Unlike the CLI, there is no line length limit (a line is buffered
//! whole). Files are split into byte ranges aligned on `\n` ([`LinesSource`]), so one large
//! file is read in parallel.
#![deny(missing_docs)]

mod input;
pub mod lines;
pub mod udf;

use std::sync::Arc;

use datafusion::error::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

pub use lines::{
    lines_schema, LinesFormat, LinesFormatFactory, LinesSource, LinesTable, LinesTableFactory,
};
pub use udf::{
    rpc_error_code, rpc_id, rpc_invalid_reason, rpc_kind, rpc_method, rpc_scan, rpc_tool_name,
};

/// Every rpcscan scalar function (shared singletons).
pub fn all_functions() -> Vec<Arc<ScalarUDF>> {
    vec![
        udf::kind::rpc_kind_udf(),
        udf::method::rpc_method_udf(),
        udf::id::rpc_id_udf(),
        udf::error_code::rpc_error_code_udf(),
        udf::tool_name::rpc_tool_name_udf(),
        udf::invalid_reason::rpc_invalid_reason_udf(),
        udf::scan::rpc_scan_udf(),
    ]
}

/// Registers every rpcscan function with `registry` (a `SessionState`, a `TaskContext`
/// builder, ...), next to the functions already there.
pub fn register_all(registry: &mut dyn FunctionRegistry) -> Result<()> {
    for udf in all_functions() {
        registry.register_udf(udf)?;
    }
    Ok(())
}

/// Registers the functions and the `lines` format (`STORED AS LINES`) with a session.
pub fn register(ctx: &SessionContext) -> Result<()> {
    let state = ctx.state_ref();
    let mut state = state.write();
    register_all(&mut *state)?;
    lines::register_format(&mut state)
}
