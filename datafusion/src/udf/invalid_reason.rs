//! `rpc_invalid_reason(line)`: The reason name of an invalid message (`Reason::as_str`; NULL for valid ones).

use std::borrow::Cow;

use super::verdict;

fn row(line: &[u8]) -> Option<Cow<'_, str>> {
    verdict::invalid_reason(&rpcscan::parse(line)).map(Cow::Borrowed)
}

super::utf8_udf!(
    /// `rpc_invalid_reason(line)`: The reason name of an invalid message (`Reason::as_str`; NULL for valid ones).
    RpcInvalidReason,
    "rpc_invalid_reason",
    rpc_invalid_reason_udf,
    rpc_invalid_reason,
    row
);
