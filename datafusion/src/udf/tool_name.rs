//! `rpc_tool_name(line)`: `params.name` of a `tools/call` request (NULL otherwise).

use std::borrow::Cow;

use super::verdict;

fn row(line: &[u8]) -> Option<Cow<'_, str>> {
    verdict::tool_name(&rpcscan::parse(line))
}

super::utf8_udf!(
    /// `rpc_tool_name(line)`: `params.name` of a `tools/call` request (NULL otherwise).
    RpcToolName,
    "rpc_tool_name",
    rpc_tool_name_udf,
    rpc_tool_name,
    row
);
