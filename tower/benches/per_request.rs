//! The layer's per-request path, for instruction counts: `N` `tools/call` POSTs (default
//! 1000) through `McpLayer` (defaults, no timeouts) around an inner service that answers
//! each with a JSON result, on a current-thread runtime, one after another. Nothing else
//! runs, so the difference of two runs' instruction counts divided by the difference of
//! their `N` is the cost of one request (the layer's, plus the inner service's few
//! allocations and the test's own request building):
//!
//! ```text
//! cargo build --release -p rpcscan-tower --bench per_request
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/per_request-* 1000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/per_request-* 2000
//! ```
//!
//! `cargo test --benches` runs it once with a small `N` and checks the answers.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use rpcscan_tower::{McpLayer, RequestBody};
use tower::{service_fn, Layer, ServiceExt};

const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"},"_meta":{"progressToken":7}}}"#;
const ANSWER: &[u8] =
    br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"sunny"}]}}"#;

fn main() {
    // `cargo bench` passes `--bench`; a number is the request count.
    let n = std::env::args().skip(1).find_map(|a| a.parse::<usize>().ok()).unwrap_or(10);
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let upstream = service_fn(|_: Request<RequestBody<Full<Bytes>>>| async {
        Ok::<_, Infallible>(
            Response::builder()
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from_static(ANSWER)))
                .expect("response"),
        )
    });
    let service = McpLayer::new().request_timeout(None).layer(upstream);
    runtime.block_on(async {
        for _ in 0..n {
            let request = Request::post("/mcp")
                .header("content-type", "application/json")
                .header("mcp-session-id", "4f0c2d9e8b7a41c6")
                .body(Full::new(Bytes::from_static(CALL)))
                .expect("request");
            let response = service.clone().oneshot(request).await.expect("infallible");
            assert_eq!(response.status(), 200);
            let body = response.into_body().collect().await.expect("body").to_bytes();
            assert_eq!(body, ANSWER);
        }
    });
}
