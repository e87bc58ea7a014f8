//! Per-message answers shared by the single-value functions and `rpc_scan`: each takes the
//! scan result of one message and picks one field (SQL NULL → `None`).

use std::borrow::Cow;

use rpcscan::{Invalid, Message, Reason, Str};

/// The strict verdict on one row.
pub(crate) enum Scan<'a> {
    /// At most the maximum message size: what `rpcscan::parse` says.
    Parsed(Result<Message<'a>, Invalid<'a>>),
    /// Longer than the maximum message size: `invalid` / `too_large`, not parsed, as every
    /// rpcscan front end does (docs/spec.md §7).
    TooLarge,
}

/// The verdict on `line` with messages longer than `max` bytes `too_large`.
pub(crate) fn scan(line: &[u8], max: usize) -> Scan<'_> {
    if line.len() > max {
        Scan::TooLarge
    } else {
        Scan::Parsed(rpcscan::parse(line))
    }
}

impl<'a> Scan<'a> {
    fn message(&self) -> Option<&Message<'a>> {
        match self {
            Scan::Parsed(Ok(msg)) => Some(msg),
            _ => None,
        }
    }
}

pub(crate) fn kind(scan: &Scan<'_>) -> &'static str {
    match scan.message() {
        Some(msg) => msg.kind().as_str(),
        None => rpcscan::Kind::Invalid.as_str(),
    }
}

/// Decoded text, or the raw escaped text when it cannot be decoded (lone surrogate).
fn text<'a>(s: Str<'a>) -> Option<Cow<'a, str>> {
    match s.decode() {
        Ok(text) => Some(text),
        Err(_) => std::str::from_utf8(s.raw()).ok().map(Cow::Borrowed),
    }
}

pub(crate) fn method<'a>(scan: &Scan<'a>) -> Option<Cow<'a, str>> {
    scan.message()?.method().and_then(text)
}

pub(crate) fn id<'a>(scan: &Scan<'a>) -> Option<Cow<'a, str>> {
    let id = match scan {
        Scan::Parsed(Ok(msg)) => msg.id()?,
        Scan::Parsed(Err(invalid)) => invalid.id()?,
        Scan::TooLarge => return None,
    };
    std::str::from_utf8(id.raw()).ok().map(Cow::Borrowed)
}

pub(crate) fn error_code(scan: &Scan<'_>) -> Option<i64> {
    scan.message()?.error_code()?.as_i64()
}

pub(crate) fn tool_name<'a>(scan: &Scan<'a>) -> Option<Cow<'a, str>> {
    scan.message()?.mcp().tool_name().and_then(text)
}

pub(crate) fn invalid_reason(scan: &Scan<'_>) -> Option<&'static str> {
    match scan {
        Scan::Parsed(Ok(_)) => None,
        Scan::Parsed(Err(invalid)) => Some(invalid.reason().as_str()),
        Scan::TooLarge => Some(Reason::TooLarge.as_str()),
    }
}
