//! `rpc_invalid_reason(line)`: The reason name of an invalid message (`Reason::as_str`; NULL for valid ones).

use std::borrow::Cow;

use super::verdict;

fn row(line: &[u8], max: usize) -> Option<Cow<'_, str>> {
    verdict::invalid_reason(&verdict::scan(line, max)).map(Cow::Borrowed)
}

super::utf8_udf!(
    /// `rpc_invalid_reason(line)`: The reason name of an invalid message (`Reason::as_str`; NULL for valid ones).
    RpcInvalidReason,
    "rpc_invalid_reason",
    rpc_invalid_reason_udf,
    rpc_invalid_reason,
    row
);
