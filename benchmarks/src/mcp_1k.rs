//! The traffic of the gateway benchmarks (`src/bin/gateway/`, `benches/layer.rs`): a 1 KB
//! MCP `tools/call` request and the 1 KB response answering it, both exactly 1024 bytes.

/// The id the request carries and the answer echoes.
pub const ID: u64 = 1;

/// The headers a Streamable HTTP client sends with the request, names in lower case.
pub const HEADERS: [(&str, &str); 4] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "search"),
];

fn padded(head: &str, tail: &str) -> String {
    let pad = 1024 - head.len() - tail.len();
    let text: String = "lorem ipsum dolor sit amet ".chars().cycle().take(pad).collect();
    format!("{head}{text}{tail}")
}

/// A `tools/call` of `search`, padded to 1 KB with a query text.
pub fn request() -> String {
    padded(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":""#,
        r#""},"_meta":{"progressToken":"p-1"}}}"#,
    )
}

/// The result for [`request`]: one text content block, padded to 1 KB.
pub fn answer() -> String {
    padded(
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#,
        r#""}],"isError":false}}"#,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_are_1_kb_valid_and_match() {
        let (request, answer) = (super::request(), super::answer());
        assert_eq!((request.len(), answer.len()), (1024, 1024));
        let request = rpcscan::parse(request.as_bytes()).unwrap();
        let answer = rpcscan::parse(answer.as_bytes()).unwrap();
        assert_eq!(request.mcp().tool_name().unwrap(), "search");
        assert!(answer.kind().is_response());
        assert_eq!(request.id(), answer.id());
    }
}
