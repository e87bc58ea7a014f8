//! `rpc_id(line)`: The exact text of the message's `id` (NULL without one; the echoable id of an invalid message).

use std::borrow::Cow;

use super::verdict;

fn row(line: &[u8], max: usize) -> Option<Cow<'_, str>> {
    verdict::id(&verdict::scan(line, max))
}

super::utf8_udf!(
    /// `rpc_id(line)`: The exact text of the message's `id` (NULL without one; the echoable id of an invalid message).
    RpcId,
    "rpc_id",
    rpc_id_udf,
    rpc_id,
    row
);
