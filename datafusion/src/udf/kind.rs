//! `rpc_kind(line)`: The kind of a message: `request`, `notification`, `result`, `error` or `invalid`.

use std::borrow::Cow;

fn row(line: &[u8], max: usize) -> Option<Cow<'_, str>> {
    if line.len() > max {
        return Some(Cow::Borrowed(rpcscan::Kind::Invalid.as_str())); // too_large
    }
    // `classify` is the cheapest path to the kind alone (same verdict as `parse`).
    Some(Cow::Borrowed(rpcscan::classify(line).as_str()))
}

super::utf8_udf!(
    /// `rpc_kind(line)`: The kind of a message: `request`, `notification`, `result`, `error` or `invalid`.
    RpcKind,
    "rpc_kind",
    rpc_kind_udf,
    rpc_kind,
    row
);
