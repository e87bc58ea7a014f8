//! `rpc_method(line)`: The decoded `method` of a request or notification (NULL otherwise).

use std::borrow::Cow;

use super::verdict;

fn row(line: &[u8], max: usize) -> Option<Cow<'_, str>> {
    verdict::method(&verdict::scan(line, max))
}

super::utf8_udf!(
    /// `rpc_method(line)`: The decoded `method` of a request or notification (NULL otherwise).
    RpcMethod,
    "rpc_method",
    rpc_method_udf,
    rpc_method,
    row
);
