//! The `axum_rate_limit` example, driven with paused time: the keys reach the handler, a
//! limited tool's calls beyond its rate wait for the next window, and another tool's
//! calls are not held up meanwhile.

#[path = "../examples/axum_rate_limit.rs"]
mod example;

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use tokio::time::{Duration, Instant};
use tower::ServiceExt;

fn call(id: u32, tool: &str) -> Request<Body> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"}}}}"#
    );
    Request::post("/mcp").header("content-type", "application/json").body(Body::from(body)).unwrap()
}

async fn send(request: Request<Body>) -> (u16, String) {
    let response = example::app().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    (
        status,
        String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec())
            .unwrap(),
    )
}

#[tokio::test(start_paused = true)]
async fn tools_are_limited_each_on_its_own() {
    // One app, so that the limiters are shared by the calls.
    let app = example::app();
    let start = Instant::now();
    let go = |id, tool: &'static str| {
        let app = app.clone();
        tokio::spawn(async move {
            let response = app.oneshot(call(id, tool)).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (Instant::now() - start, String::from_utf8(body.to_vec()).unwrap())
        })
    };
    let searches: Vec<_> = (1..=5).map(|id| go(id, "search")).collect();
    let echo = go(9, "echo");
    let (echo_at, echo_body) = echo.await.unwrap();
    assert_eq!(
        echo_body,
        r#"{"jsonrpc": "2.0", "id": 9, "result": {"content":[{"type":"text","text":"echo"}]}}"#
    );
    assert!(echo_at < Duration::from_millis(10), "echo waited {echo_at:?}");

    let mut times = Vec::new();
    for (id, search) in (1..).zip(searches) {
        let (at, body) = search.await.unwrap();
        assert_eq!(
            body,
            format!(
                r#"{{"jsonrpc": "2.0", "id": {id}, "result": {{"content":[{{"type":"text","text":"search"}}]}}}}"#
            )
        );
        times.push(at);
    }
    // 2 a second: calls 1-2 at once, 3-4 after one window, 5 after two.
    let windows: Vec<u64> = times.iter().map(|t| t.as_secs()).collect();
    assert_eq!(windows, [0, 0, 1, 1, 2], "{times:?}");
}

#[tokio::test]
async fn the_layer_still_checks_what_reaches_the_limiter() {
    let (status, body) = send(call(1, "rm_rf")).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params: unknown tool"}}"#
    );
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let request = Request::post("/mcp")
        .header("content-type", "application/json")
        .body(Body::from(notification))
        .unwrap();
    assert_eq!(send(request).await.0, 202);
}
