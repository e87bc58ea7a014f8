//! The `.rpc` expression namespace (`rpcscan.polars`) as a Polars expression plugin
//! (pyo3-polars): `pl.col("line").rpc.kind()` and friends run inside Polars' engine on a
//! String or Binary column, one message per element, with no Python per row.
//!
//! Each function scans every element once with the library's parser and keeps one value:
//! the values of `scan(array)` (`crate::arrow_input`, the `Collect` rows of `crate::scan`):
//! `kind`, `id` (the raw text, `"a"` with its quotes; the recovered id of an invalid
//! message), `method` (decoded), `tool` (`params.name` of a `tools/call` request),
//! `error_code` (when it fits an i64, as `scan`'s column), `error_code_text` (the code's exact
//! text, as `scan`'s) and `reason`. A null element gives
//! null; an element longer than `max_message_size` is `invalid` / `too_large`, as in `scan`.
//!
//! Polars calls these on whole columns (the in-memory engine) or on morsels (the streaming
//! engine, from several threads at once); a large column is also cut into runs of
//! `CHUNK` elements scanned on the rayon pool, each run one chunk of the result (no copy).

use std::borrow::Cow;

use polars_core::prelude::*;
use pyo3_polars::derive::polars_expr;
use rayon::prelude::*;
use rpcscan::{Parser, Reason, Validation};
use rpcscan_traffic::input::Verdict;
use serde::Deserialize;

/// Elements per unit of parallel work.
const CHUNK: usize = 16 * 1024;

/// The keyword arguments every function takes (`rpcscan/polars.py` passes them).
#[derive(Deserialize)]
struct Options {
    /// `true`: strict validation; `false`: envelope mode (docs/spec.md §6).
    strict: bool,
    /// Longer elements are `invalid` / `too_large` (`scan`'s `max_message_size`).
    max_message_size: usize,
}

impl Options {
    fn parser(&self) -> Parser {
        Parser::new().validation(if self.strict {
            Validation::Strict
        } else {
            Validation::Envelope
        })
    }
}

/// One element's verdict, as `crate::arrow_input::scan` gives it.
fn verdict<'a>(parser: &Parser, options: &Options, bytes: &'a [u8]) -> Verdict<'a> {
    if bytes.len() > options.max_message_size {
        return Verdict::Skipped { reason: Reason::TooLarge, len: bytes.len() as u64 };
    }
    match parser.parse(bytes) {
        Ok(m) => Verdict::Message(m),
        Err(inv) => Verdict::Invalid(inv),
    }
}

/// The input column as binary (a String column's views reinterpreted, no copy).
fn binary(inputs: &[Series]) -> PolarsResult<BinaryChunked> {
    let Some(s) = inputs.first() else {
        polars_bail!(InvalidOperation: "rpc: expected one input column");
    };
    match s.dtype() {
        DataType::String => Ok(s.str()?.as_binary()),
        DataType::Binary => Ok(s.binary()?.clone()),
        other => polars_bail!(
            InvalidOperation: "rpc: expected a String or Binary column of messages, got {other}"
        ),
    }
}

/// Runs `part` over `ca` in runs of `CHUNK` elements on the rayon pool and joins the
/// results' chunks in order.
fn chunked<F>(ca: &BinaryChunked, part: F) -> PolarsResult<Series>
where
    F: Fn(&BinaryChunked) -> Series + Sync,
{
    let len = ca.len();
    if len <= CHUNK {
        return Ok(part(ca));
    }
    let parts: Vec<Series> = (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .map(|i| part(&ca.slice((i * CHUNK) as i64, CHUNK)))
        .collect();
    let mut parts = parts.into_iter();
    let Some(mut out) = parts.next() else {
        return Ok(part(ca));
    };
    for p in parts {
        out.append_owned(p)?;
    }
    Ok(out)
}

/// A String column: `value` of each element's verdict (null elements give null).
fn strings(
    inputs: &[Series],
    options: &Options,
    value: for<'a> fn(&Verdict<'a>) -> Option<Cow<'a, [u8]>>,
) -> PolarsResult<Series> {
    let ca = binary(inputs)?;
    let name = ca.name().clone();
    let parser = options.parser();
    chunked(&ca, |part| {
        let mut builder = StringChunkedBuilder::new(name.clone(), part.len());
        for bytes in part.iter() {
            let text = bytes.and_then(|b| value(&verdict(&parser, options, b)));
            match text {
                Some(text) => match std::str::from_utf8(&text) {
                    Ok(s) => builder.append_value(s),
                    Err(_) => builder.append_value(String::from_utf8_lossy(&text)),
                },
                None => builder.append_null(),
            }
        }
        builder.finish().into_series()
    })
}

/// A JSON string's text (decoded; its raw escaped text when it holds a lone surrogate
/// escape, as `scan`'s columns do).
fn name<'a>(s: rpcscan::Str<'a>) -> Cow<'a, [u8]> {
    if !s.has_escapes() {
        return Cow::Borrowed(s.raw());
    }
    match s.decode() {
        Ok(text) => Cow::Owned(text.into_owned().into_bytes()),
        Err(_) => Cow::Borrowed(s.raw()),
    }
}

fn kind_of<'a>(v: &Verdict<'a>) -> Option<Cow<'a, [u8]>> {
    Some(Cow::Borrowed(v.kind().as_str().as_bytes()))
}

fn id_of<'a>(v: &Verdict<'a>) -> Option<Cow<'a, [u8]>> {
    let id = match v {
        Verdict::Message(m) => m.id(),
        Verdict::Invalid(inv) => inv.id(),
        Verdict::Skipped { .. } => None,
    };
    id.map(|id| Cow::Borrowed(id.raw()))
}

fn method_of<'a>(v: &Verdict<'a>) -> Option<Cow<'a, [u8]>> {
    match v {
        Verdict::Message(m) => m.method().map(name),
        _ => None,
    }
}

fn tool_of<'a>(v: &Verdict<'a>) -> Option<Cow<'a, [u8]>> {
    match v {
        Verdict::Message(m) => crate::scan::tool_name(m).map(name),
        _ => None,
    }
}

fn error_code_text_of<'a>(v: &Verdict<'a>) -> Option<Cow<'a, [u8]>> {
    match v {
        Verdict::Message(m) => m.error_code().map(|c| Cow::Borrowed(c.raw())),
        _ => None,
    }
}

fn reason_of<'a>(v: &Verdict<'a>) -> Option<Cow<'a, [u8]>> {
    v.reason().map(|r| Cow::Borrowed(r.as_str().as_bytes()))
}

/// `kind`: `request`, `notification`, `result`, `error` or `invalid`.
#[polars_expr(output_type = String)]
fn rpc_kind(inputs: &[Series], kwargs: Options) -> PolarsResult<Series> {
    strings(inputs, &kwargs, kind_of)
}

/// `id`: the raw text of the id (`7`, `"a"` with its quotes, `null`), or the recovered id
/// of an invalid message.
#[polars_expr(output_type = String)]
fn rpc_id(inputs: &[Series], kwargs: Options) -> PolarsResult<Series> {
    strings(inputs, &kwargs, id_of)
}

/// `method`: a request's or notification's method, decoded.
#[polars_expr(output_type = String)]
fn rpc_method(inputs: &[Series], kwargs: Options) -> PolarsResult<Series> {
    strings(inputs, &kwargs, method_of)
}

/// `tool`: `params.name` of a `tools/call` request, decoded.
#[polars_expr(output_type = String)]
fn rpc_tool(inputs: &[Series], kwargs: Options) -> PolarsResult<Series> {
    strings(inputs, &kwargs, tool_of)
}

/// `reason`: why an invalid message is invalid (docs/spec.md §4).
#[polars_expr(output_type = String)]
fn rpc_reason(inputs: &[Series], kwargs: Options) -> PolarsResult<Series> {
    strings(inputs, &kwargs, reason_of)
}

/// `error_code_text`: an error response's `error.code` as its exact decimal text, at any
/// size (`scan`'s `error_code_text` column).
#[polars_expr(output_type = String)]
fn rpc_error_code_text(inputs: &[Series], kwargs: Options) -> PolarsResult<Series> {
    strings(inputs, &kwargs, error_code_text_of)
}

/// `error_code`: an error response's `error.code` when it fits an i64, as `scan`'s column.
#[polars_expr(output_type = Int64)]
fn rpc_error_code(inputs: &[Series], kwargs: Options) -> PolarsResult<Series> {
    let ca = binary(inputs)?;
    let name = ca.name().clone();
    let parser = kwargs.parser();
    chunked(&ca, |part| {
        let mut builder = PrimitiveChunkedBuilder::<Int64Type>::new(name.clone(), part.len());
        for bytes in part.iter() {
            let code = bytes.and_then(|b| match verdict(&parser, &kwargs, b) {
                Verdict::Message(m) => m.error_code().and_then(|c| c.as_i64()),
                _ => None,
            });
            builder.append_option(code);
        }
        builder.finish().into_series()
    })
}
