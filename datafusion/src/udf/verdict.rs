//! Per-message answers shared by the single-value functions and `rpc_scan`: each takes the
//! scan result of one message and picks one field (SQL NULL → `None`).

use std::borrow::Cow;

use rpcscan::{Invalid, Message, Str};

/// The strict verdict on one row.
pub(crate) type Scan<'a> = Result<Message<'a>, Invalid<'a>>;

pub(crate) fn kind(scan: &Scan<'_>) -> &'static str {
    match scan {
        Ok(msg) => msg.kind().as_str(),
        Err(_) => rpcscan::Kind::Invalid.as_str(),
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
    scan.as_ref().ok()?.method().and_then(text)
}

pub(crate) fn id<'a>(scan: &Scan<'a>) -> Option<Cow<'a, str>> {
    let id = match scan {
        Ok(msg) => msg.id()?,
        Err(invalid) => invalid.id()?,
    };
    std::str::from_utf8(id.raw()).ok().map(Cow::Borrowed)
}

pub(crate) fn error_code(scan: &Scan<'_>) -> Option<i64> {
    scan.as_ref().ok()?.error_code()?.as_i64()
}

pub(crate) fn tool_name<'a>(scan: &Scan<'a>) -> Option<Cow<'a, str>> {
    scan.as_ref().ok()?.mcp().tool_name().and_then(text)
}

pub(crate) fn invalid_reason(scan: &Scan<'_>) -> Option<&'static str> {
    scan.as_ref().err().map(|invalid| invalid.reason().as_str())
}
