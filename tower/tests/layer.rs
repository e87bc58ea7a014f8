//! The layer end to end with `tower::ServiceExt::oneshot` and `service_fn` upstreams:
//! every rejection with its exact status and body (and the upstream never called), the
//! forwarded request as the upstream sees it, and the answer paths (JSON checked, SSE
//! passed on chunk by chunk while observed).

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use rpcscan::{Kind, OwnedMessage};
use rpcscan_tower::{
    Decision, Denial, Direction, Event, McpLayer, Observer, PrometheusObserver, Rejection,
    RequestBody, ResponseBody,
};
use tower::{service_fn, Layer, Service, ServiceExt};

type TestBody = UnsyncBoxBody<Bytes, Infallible>;

fn full(bytes: impl Into<Bytes>) -> TestBody {
    Full::new(bytes.into()).boxed_unsync()
}

/// A body arriving in these chunks (no size hint: the layer must count).
fn chunked(chunks: Vec<Bytes>) -> TestBody {
    StreamBody::new(stream::iter(chunks.into_iter().map(|c| Ok(http_body::Frame::data(c)))))
        .boxed_unsync()
}

/// A body fed by the returned channel, chunk by chunk.
fn channel() -> (tokio::sync::mpsc::UnboundedSender<Bytes>, TestBody) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let body = StreamBody::new(stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok(http_body::Frame::data(chunk)), rx))
    }));
    (tx, body.boxed_unsync())
}

fn json(status: u16, body: &'static str) -> Response<TestBody> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(full(body))
        .unwrap()
}

fn sse(body: TestBody) -> Response<TestBody> {
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("mcp-session-id", "s-1")
        .body(body)
        .unwrap()
}

/// A forwarded body and the scan that came with it.
type Forwarded = (Bytes, Option<OwnedMessage>);

/// One rejection case: name, body, headers, status, answer.
type Case<'a> = (&'a str, String, Vec<(&'a str, &'a str)>, u16, String);

/// What the upstream saw.
#[derive(Clone, Default)]
struct Seen {
    calls: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Forwarded>>>,
}

/// One observed message, owned.
#[derive(Clone, Debug, PartialEq)]
struct Seen1 {
    direction: Direction,
    kind: Kind,
    method: Option<String>,
    tool: Option<String>,
    code: Option<i64>,
    rejected: Option<Rejection>,
    session: Option<String>,
    /// The status of an upstream error answer the message came in.
    status: Option<u16>,
    /// The layer's own answer: status and body.
    answer: Option<(u16, String)>,
    request_id: Option<String>,
}

#[derive(Default)]
struct Recorder {
    messages: Mutex<Vec<Seen1>>,
    non_message: Mutex<Vec<String>>,
}

impl Observer for Recorder {
    fn message(&self, e: &Event<'_>) {
        let text = |s: Option<rpcscan::Str<'_>>| s.map(|s| s.decode().unwrap().into_owned());
        self.messages.lock().unwrap().push(Seen1 {
            direction: e.direction,
            kind: e.kind,
            method: text(e.method),
            tool: text(e.tool),
            code: e.error_code,
            rejected: e.rejected,
            session: e.session.map(str::to_owned),
            status: e.status.map(|s| s.as_u16()),
            answer: e.answer.map(|a| (a.status.as_u16(), String::from_utf8_lossy(a.body).into())),
            request_id: e.request_id.map(|id| String::from_utf8_lossy(id).into_owned()),
        });
    }

    fn non_message_event(&self, _: Direction, _: Option<&str>, event: &str) {
        self.non_message.lock().unwrap().push(event.to_owned());
    }
}

type Upstream =
    tower::util::BoxCloneService<Request<RequestBody<TestBody>>, Response<TestBody>, Infallible>;

/// An upstream answering every request with `answer()`, recording what it saw.
fn upstream(
    seen: &Seen,
    answer: impl Fn() -> Response<TestBody> + Clone + Send + Sync + 'static,
) -> Upstream {
    let seen = seen.clone();
    tower::util::BoxCloneService::new(service_fn(move |request: Request<RequestBody<TestBody>>| {
        let seen = seen.clone();
        let answer = answer.clone();
        async move {
            seen.calls.fetch_add(1, Ordering::SeqCst);
            let scan = request.extensions().get::<OwnedMessage>().cloned();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            seen.requests.lock().unwrap().push((body, scan));
            Ok::<_, Infallible>(answer())
        }
    }))
}

fn post(body: impl Into<Bytes>, headers: &[(&str, &str)]) -> Request<TestBody> {
    let mut request = Request::post("/mcp").header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(full(body)).unwrap()
}

async fn read(response: Response<ResponseBody<TestBody>>) -> (StatusCode, Bytes) {
    let status = response.status();
    (status, response.into_body().collect().await.unwrap().to_bytes())
}

const OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

/// Sends `request` through `layer` to an upstream that answers `OK`; returns the answer and
/// how many times the upstream was called.
async fn send(layer: &McpLayer, request: Request<TestBody>) -> (StatusCode, Bytes, usize) {
    let seen = Seen::default();
    let service = layer.layer(upstream(&seen, || json(200, OK)));
    let (status, body) = read(service.oneshot(request).await.unwrap()).await;
    (status, body, seen.calls.load(Ordering::SeqCst))
}

fn error(id: &str, code: i64, message: &str) -> String {
    format!(
        r#"{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": {code}, "message": "{message}"}}}}"#
    )
}

#[tokio::test]
async fn every_rejection_has_its_status_and_body_and_never_reaches_upstream() {
    let call = |name: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#)
    };
    let mismatch = "Header mismatch: Mcp-Method header does not match the body";
    let name_differs = "Header mismatch: Mcp-Name header does not match the body";
    let dup_route = "Invalid Request: duplicate routing key in params";
    let pad = "p".repeat(300);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(200)
    );
    #[rustfmt::skip]
    let cases: Vec<Case<'_>> = vec![
        ("parse error", r#"{"jsonrpc":"2.0","id":1,"#.into(), vec![], 400, error("null", -32700, "Parse error")),
        ("bad params, id echoed", r#"{"jsonrpc":"2.0","id":"a-1","method":"m","params":null}"#.into(), vec![], 400, error(r#""a-1""#, -32600, "Invalid Request")),
        ("duplicate method", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}"#.into(), vec![], 400, error("1", -32600, "Invalid Request")),
        ("duplicate escaped method", r#"{"jsonrpc":"2.0","id":1,"method":"ping","m\u0065thod":"tools/call"}"#.into(), vec![], 400, error("1", -32600, "Invalid Request")),
        ("duplicate id", r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.into(), vec![], 400, error("null", -32600, "Invalid Request")),
        ("batch", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.into(), vec![], 400, error("null", -32600, "Invalid Request")),
        ("empty body", String::new(), vec![], 400, error("null", -32700, "Parse error")),
        ("duplicate name", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","n\u0061me":"b"}}"#.into(), vec![], 400, error("1", -32600, dup_route)),
        ("duplicate uri", r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a","uri":"b"}}"#.into(), vec![], 400, error("1", -32600, dup_route)),
        ("duplicate _meta", r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{},"_meta":{}}}"#.into(), vec![], 400, error("null", -32600, dup_route)),
        ("header says tools/list, body tools/call", call("echo"), vec![("mcp-method", "tools/list"), ("mcp-name", "echo")], 400, error("1", -32020, mismatch)),
        ("Mcp-Name differs", call("rm_rf"), vec![("mcp-method", "tools/call"), ("mcp-name", "read_file")], 400, error("1", -32020, name_differs)),
        ("Mcp-Name base64 differs", call("rm_rf"), vec![("mcp-method", "tools/call"), ("mcp-name", "=?base64?ZWNobw==?=")], 400, error("1", -32020, name_differs)),
        ("Mcp-Name missing", call("echo"), vec![("mcp-method", "tools/call")], 400, error("1", -32020, "Header mismatch: Mcp-Name header is missing")),
        ("Mcp-Name vs duplicate name", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"a"}}"#.into(), vec![("mcp-method", "tools/call"), ("mcp-name", "a")], 400, error("1", -32020, "Header mismatch: the body value Mcp-Name mirrors is absent, duplicated or not a string")),
        ("Mcp-Method twice", call("echo"), vec![("mcp-method", "tools/call"), ("mcp-method", "tools/list"), ("mcp-name", "echo")], 400, error("1", -32020, "Header mismatch: Mcp-Method header appears more than once")),
        ("2026 body without headers", r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.into(), vec![], 400, error("1", -32020, "Header mismatch: Mcp-Method header is missing")),
        ("protocol version differs", r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.into(), vec![("mcp-method", "ping"), ("mcp-protocol-version", "2025-06-18")], 400, error("1", -32020, "Header mismatch: MCP-Protocol-Version header does not match the body")),
        ("body over the limit", big.clone(), vec![], 413, error("null", -32600, "Invalid Request: body too large")),
        ("Content-Length over the limit", "{}".into(), vec![("content-length", "100000")], 413, error("null", -32600, "Invalid Request: body too large")),
        ("headers over the limit", OK.into(), vec![("x-pad", &pad)], 431, error("null", -32600, "Invalid Request: headers too large")),
    ];
    let observer = Arc::new(Recorder::default());
    let layer =
        McpLayer::new().max_body_size(128).max_header_size(256).observer(Arc::clone(&observer));
    for (name, body, headers, status, want) in &cases {
        let (got_status, got, calls) = send(&layer, post(body.clone(), headers)).await;
        assert_eq!(
            (got_status.as_u16(), &*String::from_utf8_lossy(&got), calls),
            (*status, want.as_str(), 0),
            "{name}"
        );
    }
    let not_utf8 = &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}"[..];
    assert_eq!(
        send(&layer, post(not_utf8, &[])).await,
        (StatusCode::BAD_REQUEST, Bytes::from(error("null", -32700, "Parse error")), 0)
    );
    {
        let seen = observer.messages.lock().unwrap();
        assert_eq!(seen.len(), cases.len() + 1);
        assert!(seen
            .iter()
            .all(|m| m.direction == Direction::ClientToServer && m.rejected.is_some()));
        // Each rejection comes with the answer the client got.
        for ((name, _, _, status, want), m) in cases.iter().zip(seen.iter()) {
            assert_eq!(m.answer, Some((*status, want.clone())), "{name}");
        }
        let header = cases.iter().position(|c| c.0.starts_with("header says")).unwrap();
        assert_eq!(seen[header].rejected, Some(Rejection::HeaderMismatch));
        assert_eq!(
            (seen[header].method.as_deref(), seen[header].tool.as_deref()),
            (Some("tools/call"), Some("echo"))
        );
    }

    // Envelope mode reads the same members the same way: every case gets the same answer.
    let envelope = McpLayer::new()
        .validation(rpcscan::Validation::Envelope)
        .max_body_size(128)
        .max_header_size(256);
    for (name, body, headers, status, want) in &cases {
        let (got_status, got, calls) = send(&envelope, post(body.clone(), headers)).await;
        assert_eq!(
            (got_status.as_u16(), &*String::from_utf8_lossy(&got), calls),
            (*status, want.as_str(), 0),
            "envelope: {name}"
        );
    }
}

#[tokio::test]
async fn a_body_in_many_frames_is_scanned_and_forwarded_unchanged() {
    let body = br#"{"jsonrpc":"2.0","id":"r\u002d1","method":"tools/call","params":{"name":"ech\u006f","arguments":{"n":1}}}"#;
    let seen = Seen::default();
    let service = McpLayer::new()
        .layer(upstream(&seen, || json(200, r#"{"jsonrpc":"2.0","id":"r-1","result":{}}"#)));
    let chunks = body.iter().map(|b| Bytes::copy_from_slice(&[*b])).collect();
    let request = Request::post("/mcp").body(chunked(chunks)).unwrap();
    let (status, answer) = read(service.oneshot(request).await.unwrap()).await;
    assert_eq!(
        (status, &answer[..]),
        (StatusCode::OK, &br#"{"jsonrpc":"2.0","id":"r-1","result":{}}"#[..])
    );
    let requests = seen.requests.lock().unwrap();
    let (forwarded, scan) = &requests[0];
    assert_eq!(&forwarded[..], &body[..]);
    let scan = scan.as_ref().expect("the scan travels in the extensions");
    assert_eq!(scan.bytes(), forwarded);
    assert!(scan.mcp().tool_name().unwrap() == "echo");
}

#[tokio::test]
async fn a_body_in_many_frames_over_the_limit_is_413() {
    let chunks = (0..100).map(|_| Bytes::from_static(b"          ")).collect();
    let request = Request::post("/mcp").body(chunked(chunks)).unwrap();
    let (status, body, calls) = send(&McpLayer::new().max_body_size(999), request).await;
    assert_eq!(
        (status.as_u16(), body, calls),
        (413, Bytes::from(error("null", -32600, "Invalid Request: body too large")), 0)
    );
}

#[tokio::test]
async fn headers_that_match_are_forwarded_base64_and_escapes_included() {
    let layer = McpLayer::new();
    #[rustfmt::skip]
    let cases: &[(&str, &[(&str, &str)])] = &[
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#, &[("mcp-method", "tools/call"), ("mcp-name", "=?base64?ZWNobw==?=")]),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/c\u0061ll","params":{"name":"\u0065cho"}}"#, &[("mcp-method", "tools/call"), ("mcp-name", "echo")]),
        (r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///r\u00e9sum\u00e9.txt"}}"#, &[("mcp-method", "resources/read"), ("mcp-name", "=?base64?ZmlsZTovLy9yw6lzdW3DqS50eHQ=?=")]),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[]), // an earlier protocol version: no headers
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[("mcp-protocol-version", "2025-06-18")]),
    ];
    for (body, headers) in cases {
        let (status, answer, calls) = send(&layer, post(*body, headers)).await;
        assert_eq!((status, &answer[..], calls), (StatusCode::OK, OK.as_bytes(), 1), "{body}");
    }
}

#[tokio::test]
async fn allow_lists_compare_decoded_names() {
    for validation in [rpcscan::Validation::Strict, rpcscan::Validation::Envelope] {
        allow_lists_compare_decoded_names_with(validation).await;
    }
}

async fn allow_lists_compare_decoded_names_with(validation: rpcscan::Validation) {
    let layer = McpLayer::new()
        .validation(validation)
        .allow_methods(["initialize", "tools/call", "notifications/initialized"])
        .allow_tools(["echo"]);
    #[rustfmt::skip]
    let cases: &[(&str, u16, Option<String>)] = &[
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#, 200, None),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0065ch\u006f"}}"#, 200, None),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/c\u0061ll","params":{"name":"echo"}}"#, 200, None),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm_rf"}}"#, 200, Some(error("1", -32602, "Invalid params: unknown tool"))),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo\u0000"}}"#, 200, Some(error("1", -32602, "Invalid params: unknown tool"))),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\ud800"}}"#, 200, Some(error("1", -32602, "Invalid params: unknown tool"))),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#, 200, Some(error("1", -32602, "Invalid params: unknown tool"))),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#, 200, Some(error("1", -32602, "Invalid params: unknown tool"))),
        (r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#, 200, Some(error(r#""p""#, -32601, "Method not found"))),
        (r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#, 400, Some(error("null", -32601, "Method not found"))),
        (r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, 202, Some(String::new())), // responses are not methods
    ];
    for (body, status, denied) in cases {
        let (got_status, got, calls) = send(&layer, post(*body, &[])).await;
        let want = denied.clone().unwrap_or_else(|| OK.to_owned());
        let want_calls = usize::from(denied.as_deref().is_none_or(str::is_empty));
        assert_eq!(
            (got_status.as_u16(), &*String::from_utf8_lossy(&got), calls),
            (*status, want.as_str(), want_calls),
            "{validation:?}: {body}"
        );
    }
}

#[tokio::test]
async fn policy_decides_on_the_borrowed_message_and_its_keys() {
    let layer =
        McpLayer::new().policy(|msg: &rpcscan::Message<'_>, mcp: &rpcscan::mcp::Mcp<'_>| {
            if mcp.tool_name().is_some_and(|t| t == "drop_table") {
                Decision::Deny(
                    Denial::new(-32001, "Forbidden by policy").status(StatusCode::FORBIDDEN),
                )
            } else if msg.method().is_some_and(|m| m == "notifications/secret") {
                Decision::Deny(Denial::new(-32001, "no"))
            } else {
                Decision::Forward
            }
        });
    let drop =
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"drop_t\u0061ble"}}"#;
    assert_eq!(
        send(&layer, post(drop, &[])).await,
        (StatusCode::FORBIDDEN, Bytes::from(error("9", -32001, "Forbidden by policy")), 0)
    );
    let secret = r#"{"jsonrpc":"2.0","method":"notifications/secret"}"#;
    assert_eq!(
        send(&layer, post(secret, &[])).await,
        (StatusCode::BAD_REQUEST, Bytes::from(error("null", -32001, "no")), 0)
    );
    let fine = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"select"}}"#;
    assert_eq!(send(&layer, post(fine, &[])).await, (StatusCode::OK, Bytes::from(OK), 1));
}

#[tokio::test]
async fn origin_allow_list() {
    let layer = McpLayer::new().allow_origins(["http://localhost:3000"]);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let forbidden = (
        StatusCode::FORBIDDEN,
        Bytes::from(error("null", -32600, "Forbidden: Origin not allowed")),
        0,
    );
    assert_eq!(send(&layer, post(ping, &[("origin", "http://evil.example")])).await, forbidden);
    assert_eq!(
        send(
            &layer,
            post(ping, &[("origin", "http://localhost:3000"), ("origin", "http://evil.example")])
        )
        .await,
        forbidden
    );
    assert_eq!(
        send(&layer, post(ping, &[("origin", "http://localhost:3000")])).await,
        (StatusCode::OK, Bytes::from(OK), 1)
    );
    assert_eq!(send(&layer, post(ping, &[])).await, (StatusCode::OK, Bytes::from(OK), 1));
    // GET streams are checked too.
    let get = Request::get("/mcp").header("origin", "http://evil.example").body(full("")).unwrap();
    assert_eq!(send(&layer, get).await, forbidden);
}

#[tokio::test]
async fn accepted_notifications_and_responses_get_202_and_no_body() {
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"s1","error":{"code":-1,"message":"no"}}"#,
    ] {
        let seen = Seen::default();
        let service = McpLayer::new().layer(upstream(&seen, || json(200, "{}")));
        let response = service.oneshot(post(body, &[])).await.unwrap();
        assert!(response.headers().get("content-type").is_none());
        assert_eq!(read(response).await, (StatusCode::ACCEPTED, Bytes::new()), "{body}");
        assert_eq!(seen.calls.load(Ordering::SeqCst), 1);
    }
    // An upstream error status passes as it is.
    let seen = Seen::default();
    let service = McpLayer::new().layer(upstream(&seen, || json(404, "{}")));
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        read(service.oneshot(post(notification, &[])).await.unwrap()).await,
        (StatusCode::NOT_FOUND, Bytes::from("{}"))
    );
}

#[tokio::test]
async fn json_answers_must_answer_the_request() {
    let bad_gateway =
        error("7", -32603, "Bad Gateway: the upstream's answer is not a response to this request");
    #[rustfmt::skip]
    let cases: &[(&'static str, u16, &str)] = &[
        (r#"{"jsonrpc":"2.0","id":7,"result":{}}"#, 200, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
        (r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}}"#, 200, r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}}"#),
        (r#"{"jsonrpc":"2.0","id":8,"result":{}}"#, 502, &bad_gateway),
        (r#"{"jsonrpc":"2.0","id":"7","result":{}}"#, 502, &bad_gateway),
        (r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, 502, &bad_gateway),
        (r#"{"jsonrpc":"2.0","id":7,"result":{}"#, 502, &bad_gateway),
    ];
    for (answer, status, want) in cases {
        let seen = Seen::default();
        let answer = *answer;
        let service = McpLayer::new().layer(upstream(&seen, move || json(200, answer)));
        let got = read(
            service
                .oneshot(post(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, &[]))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (got.0.as_u16(), &*String::from_utf8_lossy(&got.1)),
            (*status, *want),
            "{answer}"
        );
    }
}

/// Issue 31: what the client gets on an error status, or from the layer instead of the
/// upstream, is observed with the request it answers (HTTP binds them, whatever the body's
/// id); an error status passes unchanged.
#[tokio::test]
async fn error_statuses_and_the_layers_own_answers_are_observed() {
    let null_id = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#;
    let bad_gateway =
        error("7", -32603, "Bad Gateway: the upstream's answer is not a response to this request");
    let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let text_400 = || {
        Response::builder()
            .status(400)
            .header("content-type", "text/plain")
            .body(full("no"))
            .unwrap()
    };
    type Answer = fn() -> Response<TestBody>;
    /// The server-side event: kind, error code, status, request id, the layer's own answer.
    type Observed<'a> = (Kind, Option<i64>, Option<u16>, Option<&'a str>, Option<(u16, &'a str)>);
    // What the client sends, what the upstream answers, what the client gets, what is seen.
    type Case<'a> = (&'a str, &'a str, Answer, (u16, &'a str), Option<Observed<'a>>);
    #[rustfmt::skip]
    let cases: &[Case<'_>] = &[
        ("ended session", ping, || json(400, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#),
            (400, null_id), Some((Kind::Error, Some(-32000), Some(400), Some("7"), None))),
        ("to a notification", note, || json(404, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#),
            (404, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#), Some((Kind::Error, Some(-32001), Some(404), None, None))),
        ("not JSON-RPC", ping, || json(500, r#"{"error":"boom"}"#),
            (500, r#"{"error":"boom"}"#), Some((Kind::Invalid, Some(-32600), Some(500), Some("7"), None))),
        ("not JSON", ping, text_400, (400, "no"), None),
        ("another id", ping, || json(200, r#"{"jsonrpc":"2.0","id":8,"result":{}}"#),
            (502, &bad_gateway), Some((Kind::Result, None, None, Some("7"), Some((502, &bad_gateway))))),
    ];
    for (name, body, answer, (status, want), event) in cases {
        let observer = Arc::new(Recorder::default());
        let seen = Seen::default();
        let service =
            McpLayer::new().observer(Arc::clone(&observer)).layer(upstream(&seen, *answer));
        let got = read(service.oneshot(post(body.to_string(), &[])).await.unwrap()).await;
        assert_eq!((got.0.as_u16(), &*String::from_utf8_lossy(&got.1)), (*status, *want), "{name}");
        let observed = observer.messages.lock().unwrap();
        let server: Vec<_> = observed
            .iter()
            .filter(|m| m.direction == Direction::ServerToClient)
            .map(|m| {
                let answer = m.answer.as_ref().map(|(s, b)| (*s, b.as_str()));
                (m.kind, m.code, m.status, m.request_id.as_deref(), answer)
            })
            .collect();
        assert_eq!(server, event.iter().copied().collect::<Vec<_>>(), "{name}");
    }
}

const STREAM: &[u8] = b"event: endpoint\ndata: /message?sessionId=abc\n\n\
: keep-alive\n\n\
id: 1\ndata:\n\n\
data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n\
event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\r\ndata: \"method\":\"sampling/createMessage\",\"params\":{}}\r\n\r\n\
data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n";

fn stream_kinds(observer: &Recorder) -> Vec<(Kind, Option<String>, Option<String>)> {
    let seen = observer.messages.lock().unwrap();
    seen.iter()
        .filter(|m| m.direction == Direction::ServerToClient)
        .map(|m| (m.kind, m.method.clone(), m.session.clone()))
        .collect()
}

#[tokio::test]
async fn an_sse_answer_split_at_every_byte_boundary_passes_unchanged_and_is_classified() {
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
    let s = || Some("s-1".to_owned());
    let want = vec![
        (Kind::Notification, Some("notifications/progress".to_owned()), s()),
        (Kind::Request, Some("sampling/createMessage".to_owned()), s()),
        (Kind::Result, Some("tools/call".to_owned()), s()), // the request's method
    ];
    let mut splits: Vec<Vec<Bytes>> = (0..=STREAM.len())
        .map(|k| vec![Bytes::from_static(&STREAM[..k]), Bytes::from_static(&STREAM[k..])])
        .collect();
    splits.push(STREAM.iter().map(|b| Bytes::copy_from_slice(&[*b])).collect());
    for chunks in splits {
        let observer = Arc::new(Recorder::default());
        let seen = Seen::default();
        let layer = McpLayer::new().observer(Arc::clone(&observer));
        let answer = chunks.clone();
        let service = layer.layer(upstream(&seen, move || sse(chunked(answer.clone()))));
        let response = service.oneshot(post(call, &[("mcp-session-id", "s-1")])).await.unwrap();
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let (status, body) = read(response).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, STREAM), "{chunks:?}");
        assert_eq!(stream_kinds(&observer), want, "{chunks:?}");
        assert_eq!(*observer.non_message.lock().unwrap(), ["endpoint"], "{chunks:?}");
    }
}

#[tokio::test]
async fn a_slow_upstream_stream_passes_each_chunk_on_at_once() {
    let (tx, body) = channel();
    let body = Arc::new(Mutex::new(Some(body)));
    let seen = Seen::default();
    let observer = Arc::new(Recorder::default());
    let service = McpLayer::new()
        .observer(Arc::clone(&observer))
        .layer(upstream(&seen, move || sse(body.lock().unwrap().take().unwrap())));
    let response =
        service.oneshot(post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[])).await.unwrap();
    let mut body = response.into_body();
    let first = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n";
    tx.send(Bytes::from_static(first)).unwrap();
    let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(&frame[..], first);
    // Classified as soon as its blank line passed, before anything else was sent.
    assert_eq!(
        stream_kinds(&observer),
        [(Kind::Notification, Some("notifications/message".to_owned()), Some("s-1".to_owned()))]
    );
    let second = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,";
    tx.send(Bytes::from_static(second)).unwrap();
    assert_eq!(&body.frame().await.unwrap().unwrap().into_data().unwrap()[..], second);
    tx.send(Bytes::from_static(b"\"result\":{}}\n\n")).unwrap();
    drop(tx);
    assert!(body.frame().await.unwrap().is_ok());
    assert!(body.frame().await.is_none());
    assert_eq!(stream_kinds(&observer).len(), 2);
}

#[tokio::test]
async fn get_streams_pass_through_and_are_observed() {
    let seen = Seen::default();
    let observer = Arc::new(Recorder::default());
    let service = McpLayer::new()
        .observer(Arc::clone(&observer))
        .layer(upstream(&seen, || sse(full(&b"event: endpoint\ndata: /m\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\ndata: [\n\n"[..]))));
    let request = Request::get("/mcp").body(full("")).unwrap();
    let (status, _) = read(service.oneshot(request).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let kinds: Vec<_> = stream_kinds(&observer).into_iter().map(|k| k.0).collect();
    assert_eq!(kinds, [Kind::Notification, Kind::Invalid]);
    assert_eq!(*observer.non_message.lock().unwrap(), ["endpoint"]);
}

#[tokio::test]
async fn timeouts() {
    // A body that never finishes: 408 at the request timeout, upstream never called.
    let (tx, body) = channel();
    tx.send(Bytes::from_static(b"{\"jsonrpc\":")).unwrap();
    let layer = McpLayer::new().request_timeout(Some(Duration::from_millis(50)));
    let request = Request::post("/mcp").body(body).unwrap();
    let timeout = (
        StatusCode::REQUEST_TIMEOUT,
        Bytes::from(error("null", -32600, "Invalid Request: body not received in time")),
        0,
    );
    assert_eq!(send(&layer, request).await, timeout);

    // The idle timeout: the gap between two chunks.
    let (tx2, body) = channel();
    tx2.send(Bytes::from_static(b"{\"jsonrpc\":")).unwrap();
    let layer = McpLayer::new().request_timeout(None).idle_timeout(Some(Duration::from_millis(50)));
    assert_eq!(send(&layer, Request::post("/mcp").body(body).unwrap()).await, timeout);
    drop((tx, tx2));

    // An upstream that does not answer: 504 with the request's id.
    let slow = service_fn(|_: Request<RequestBody<TestBody>>| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok::<_, Infallible>(json(200, OK))
    });
    let service = McpLayer::new().request_timeout(Some(Duration::from_millis(50))).layer(slow);
    let got = read(
        service.oneshot(post(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#, &[])).await.unwrap(),
    )
    .await;
    assert_eq!(
        got,
        (
            StatusCode::GATEWAY_TIMEOUT,
            Bytes::from(error("3", -32603, "Gateway Timeout: no answer from upstream"))
        )
    );

    // An upstream stream that goes quiet ends with an error after the idle timeout.
    let (tx3, body) = channel();
    let body = Arc::new(Mutex::new(Some(body)));
    let seen = Seen::default();
    let service = McpLayer::new()
        .idle_timeout(Some(Duration::from_millis(50)))
        .layer(upstream(&seen, move || sse(body.lock().unwrap().take().unwrap())));
    let response = service.oneshot(Request::get("/mcp").body(full("")).unwrap()).await.unwrap();
    let mut body = response.into_body();
    tx3.send(Bytes::from_static(b": hi\n\n")).unwrap();
    assert!(body.frame().await.unwrap().is_ok());
    let err = body.frame().await.unwrap().unwrap_err();
    assert!(err.is::<rpcscan_tower::IdleTimeout>());
}

#[tokio::test]
async fn envelope_mode_forwards_what_it_does_not_read() {
    // A broken escape inside params.arguments: strict rejects, envelope mode skips it.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"s":"\x"}}}"#;
    let strict = send(&McpLayer::new(), post(body, &[])).await;
    assert_eq!(
        strict,
        (StatusCode::BAD_REQUEST, Bytes::from(error("null", -32700, "Parse error")), 0)
    );
    let envelope = McpLayer::new().validation(rpcscan::Validation::Envelope);
    assert_eq!(send(&envelope, post(body, &[])).await, (StatusCode::OK, Bytes::from(OK), 1));
}

#[tokio::test]
async fn prometheus_renders_what_it_saw() {
    let metrics = Arc::new(PrometheusObserver::new());
    let layer = McpLayer::new().allow_tools(["echo"]).observer(Arc::clone(&metrics));
    let call = |name: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#)
    };
    send(&layer, post(call("echo"), &[])).await;
    send(&layer, post(call(r#"x\"y"#), &[])).await;
    send(&layer, post("{", &[])).await;
    let seen = Seen::default();
    let ended =
        || json(400, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"x"}}"#);
    let service = layer.layer(upstream(&seen, ended));
    read(service.oneshot(post(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, &[])).await.unwrap())
        .await;
    let text = metrics.render();
    for line in [
        "# TYPE rpcscan_messages_total counter",
        r#"rpcscan_messages_total{direction="client",kind="request",method="tools/call"} 2"#,
        r#"rpcscan_messages_total{direction="client",kind="invalid",method=""} 1"#,
        r#"rpcscan_messages_total{direction="server",kind="result",method="tools/call"} 1"#,
        r#"rpcscan_tool_calls_total{tool="echo"} 1"#,
        r#"rpcscan_messages_total{direction="server",kind="error",method="ping"} 1"#,
        r#"rpcscan_error_responses_total{direction="server",code="-32000"} 1"#,
        r#"rpcscan_tool_calls_total{tool="x\"y"} 1"#,
        r#"rpcscan_rejections_total{reason="invalid"} 1"#,
        r#"rpcscan_rejections_total{reason="tool_not_allowed"} 1"#,
        "# TYPE rpcscan_response_latency_seconds histogram",
        r#"rpcscan_response_latency_seconds_bucket{method="tools/call",le="+Inf"} 1"#,
        r#"rpcscan_response_latency_seconds_count{method="tools/call"} 1"#,
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
}

#[tokio::test]
async fn the_service_is_a_tower_service_with_readiness() {
    let seen = Seen::default();
    let mut service = McpLayer::new().layer(upstream(&seen, || json(200, OK)));
    let ready = service.ready().await.unwrap();
    let response =
        ready.call(post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[])).await.unwrap();
    assert_eq!(read(response).await, (StatusCode::OK, Bytes::from(OK)));
}

#[tokio::test]
async fn header_check_modes() {
    use rpcscan_tower::HeaderCheck;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let missing = (
        StatusCode::BAD_REQUEST,
        Bytes::from(error("1", -32020, "Header mismatch: Mcp-Method header is missing")),
        0,
    );
    let lying = [("mcp-method", "tools/list")];
    let differs = (
        StatusCode::BAD_REQUEST,
        Bytes::from(error(
            "1",
            -32020,
            "Header mismatch: Mcp-Method header does not match the body",
        )),
        0,
    );
    let forwarded = (StatusCode::OK, Bytes::from(OK), 1);
    let always = McpLayer::new().header_check(HeaderCheck::Always);
    assert_eq!(send(&always, post(ping, &[])).await, missing);
    assert_eq!(send(&always, post(ping, &[("mcp-method", "ping")])).await, forwarded);
    assert_eq!(send(&McpLayer::new(), post(ping, &lying)).await, differs);
    let off = McpLayer::new().header_check(HeaderCheck::Off);
    assert_eq!(send(&off, post(ping, &lying)).await, forwarded);
}

#[tokio::test]
async fn a_json_answer_over_the_limit_is_502() {
    let seen = Seen::default();
    let service = McpLayer::new().max_response_size(10).layer(upstream(&seen, || json(200, OK)));
    let got = read(
        service.oneshot(post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[])).await.unwrap(),
    )
    .await;
    let want =
        error("1", -32603, "Bad Gateway: the upstream's answer is not a response to this request");
    assert_eq!(got, (StatusCode::BAD_GATEWAY, Bytes::from(want)));
}

#[tokio::test]
async fn timeouts_too_long_to_represent_are_no_timeouts() {
    let layer =
        McpLayer::new().request_timeout(Some(Duration::MAX)).idle_timeout(Some(Duration::MAX));
    let (status, _, calls) =
        send(&layer, post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[])).await;
    assert_eq!((status, calls), (StatusCode::OK, 1));
    const EVENT: &[u8] = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
    let seen = Seen::default();
    let service = layer.layer(upstream(&seen, || {
        sse(full(&b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"[..]))
    }));
    let (status, body) = read(
        service.oneshot(post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[])).await.unwrap(),
    )
    .await;
    assert_eq!((status, &body[..]), (StatusCode::OK, EVENT));
}

/// A forwarded request carries its routing keys, decoded, beside the scan; the body's
/// `_meta` version wins over the header's, which stands in when the body has none.
#[tokio::test]
async fn routing_keys_travel_in_the_extensions() {
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    let service =
        McpLayer::new().layer(service_fn(move |request: Request<RequestBody<TestBody>>| {
            seen.lock()
                .unwrap()
                .push(request.extensions().get::<rpcscan_tower::RoutingKeys>().cloned());
            async { Ok::<_, Infallible>(json(200, OK)) }
        }));
    let calls = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get\u005fweather","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            vec![
                ("mcp-session-id", "s-1"),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "get_weather"),
            ],
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///a b"}}"#,
            vec![("mcp-protocol-version", "2025-11-25")],
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet"}}"#, vec![]),
    ];
    for (body, headers) in calls {
        let (status, _) = read(service.clone().oneshot(post(body, &headers)).await.unwrap()).await;
        assert_eq!(status, 200);
    }
    let keys = keys.lock().unwrap();
    let got: Vec<_> = keys
        .iter()
        .map(|k| {
            let k = k.as_ref().expect("keys in the extensions");
            [
                k.method(),
                k.tool(),
                k.prompt(),
                k.resource_uri(),
                k.session_id(),
                k.protocol_version(),
                k.target(),
            ]
        })
        .collect();
    assert_eq!(
        got,
        [
            [
                Some("tools/call"),
                Some("get_weather"),
                None,
                None,
                Some("s-1"),
                Some("2026-07-28"),
                Some("get_weather")
            ],
            [
                Some("resources/subscribe"),
                None,
                None,
                Some("file:///a b"),
                None,
                Some("2025-11-25"),
                None
            ],
            [Some("prompts/get"), None, Some("greet"), None, None, None, Some("greet")],
        ]
    );
}
