//! `rpc_tool_name(line)`: `params.name` of a `tools/call` request (NULL otherwise).

use std::borrow::Cow;

use super::verdict;

fn row(line: &[u8], max: usize) -> Option<Cow<'_, str>> {
    verdict::tool_name(&verdict::scan(line, max))
}

super::utf8_udf!(
    /// `rpc_tool_name(line)`: `params.name` of a `tools/call` request (NULL otherwise).
    RpcToolName,
    "rpc_tool_name",
    rpc_tool_name_udf,
    rpc_tool_name,
    row
);
