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
//! | `rpc_text(line [, _file, _line])` | Utf8 | the line as text; a line that is not UTF-8 is an error naming its file and line ([`CheckedLineCast`] makes `CAST(line AS VARCHAR)` call it) |
//!
//! A message longer than the maximum message size ([`DEFAULT_MAX_MESSAGE_SIZE`], 16 MiB, the
//! CLI's default; [`register_with_max_message_size`] changes it) is `invalid` /
//! `too_large` and not parsed, as in every rpcscan front end (docs/spec.md §7).
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
//! without `\n` kept. A line is buffered whole, also one over the maximum message size
//! (the functions then call it `too_large`). Files are split into byte ranges aligned on
//! `\n` ([`LinesSource`]), so one large file is read in parallel. [`LinesOptions`] (or
//! `OPTIONS (...)` in SQL) add the metadata columns `_file`, `_line`, `_offset`
//! (`format.metadata_columns`) and set the compression (`format.compression`; by default
//! `.gz`, `.zst`, `.bz2` and `.xz` files are decompressed by extension). A location that
//! matches no file (missing, an empty directory, a glob that matches nothing) is an error
//! naming it; an empty file is an empty table.
#![deny(missing_docs)]

mod input;
pub mod lines;
pub mod udf;

use std::sync::Arc;

use datafusion::error::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::ScalarUDF;
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;
pub use rpcscan::frame::DEFAULT_MAX_MESSAGE_SIZE;

pub use lines::{
    lines_schema, lines_schema_with_metadata, LinesFormat, LinesFormatFactory, LinesOptions,
    LinesSource, LinesTable, LinesTableFactory,
};
pub use udf::{
    rpc_error_code, rpc_id, rpc_invalid_reason, rpc_kind, rpc_method, rpc_scan, rpc_text,
    rpc_tool_name, CheckedLineCast,
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
        udf::text::rpc_text_udf(),
    ]
}

/// Every rpcscan scalar function, with messages longer than `max_message_size` bytes
/// `invalid` / `too_large` (the CLI's `--max-message-size`; [`all_functions`] uses the
/// default, [`DEFAULT_MAX_MESSAGE_SIZE`]).
pub fn functions_with_max_message_size(max_message_size: usize) -> Vec<Arc<ScalarUDF>> {
    if max_message_size == DEFAULT_MAX_MESSAGE_SIZE {
        return all_functions();
    }
    let m = max_message_size;
    vec![
        Arc::new(ScalarUDF::new_from_impl(udf::kind::RpcKind::new(m))),
        Arc::new(ScalarUDF::new_from_impl(udf::method::RpcMethod::new(m))),
        Arc::new(ScalarUDF::new_from_impl(udf::id::RpcId::new(m))),
        Arc::new(ScalarUDF::new_from_impl(udf::error_code::RpcErrorCode::new(m))),
        Arc::new(ScalarUDF::new_from_impl(udf::tool_name::RpcToolName::new(m))),
        Arc::new(ScalarUDF::new_from_impl(udf::invalid_reason::RpcInvalidReason::new(m))),
        Arc::new(ScalarUDF::new_from_impl(udf::scan::RpcScan::new(m))),
        udf::text::rpc_text_udf(), // no verdicts: no limit
    ]
}

/// The maximum message size of an rpcscan function (`None` for any other function): what a
/// plan codec ships so that every process of a cluster applies the same limit.
pub fn max_message_size_of(udf: &ScalarUDF) -> Option<usize> {
    let inner = udf.inner();
    None.or_else(|| inner.downcast_ref::<udf::kind::RpcKind>().map(|f| f.max_message_size()))
        .or_else(|| inner.downcast_ref::<udf::method::RpcMethod>().map(|f| f.max_message_size()))
        .or_else(|| inner.downcast_ref::<udf::id::RpcId>().map(|f| f.max_message_size()))
        .or_else(|| {
            inner.downcast_ref::<udf::error_code::RpcErrorCode>().map(|f| f.max_message_size())
        })
        .or_else(|| {
            inner.downcast_ref::<udf::tool_name::RpcToolName>().map(|f| f.max_message_size())
        })
        .or_else(|| {
            inner
                .downcast_ref::<udf::invalid_reason::RpcInvalidReason>()
                .map(|f| f.max_message_size())
        })
        .or_else(|| inner.downcast_ref::<udf::scan::RpcScan>().map(|f| f.max_message_size()))
}

/// Registers every rpcscan function with `registry` (a `SessionState`, a `TaskContext`
/// builder, ...), next to the functions already there.
pub fn register_all(registry: &mut dyn FunctionRegistry) -> Result<()> {
    register_all_with_max_message_size(registry, DEFAULT_MAX_MESSAGE_SIZE)
}

/// [`register_all`] with a maximum message size other than the default.
pub fn register_all_with_max_message_size(
    registry: &mut dyn FunctionRegistry,
    max_message_size: usize,
) -> Result<()> {
    for udf in functions_with_max_message_size(max_message_size) {
        registry.register_udf(udf)?;
    }
    Ok(())
}

/// Registers the functions, the `lines` format (`STORED AS LINES`) and the
/// [`CheckedLineCast`] analyzer rule (a `CAST(line AS VARCHAR)` that fails names the file
/// and line, given the metadata columns) with a session.
pub fn register(ctx: &SessionContext) -> Result<()> {
    register_with_max_message_size(ctx, DEFAULT_MAX_MESSAGE_SIZE)
}

/// [`register`] with a maximum message size other than the default.
pub fn register_with_max_message_size(ctx: &SessionContext, max_message_size: usize) -> Result<()> {
    let state = ctx.state_ref();
    let mut state = state.write();
    register_all_with_max_message_size(&mut *state, max_message_size)?;
    if !state.analyzer().rules.iter().any(|r| r.name() == CheckedLineCast.name()) {
        state.add_analyzer_rule(Arc::new(CheckedLineCast));
    }
    lines::register_format(&mut state)
}
