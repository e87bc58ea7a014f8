//! The gateway on loopback: a minimal hyper upstream, [`gateway::serve`] with the layer in
//! front, and clients speaking HTTP/1.1 to it. Valid traffic (POST answered with JSON or
//! SSE, notifications, GET streams, DELETE) passes both ways; hostile input is answered by
//! the gateway with the documented status and body, the upstream never sees it, and the
//! gateway stays up.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rpcscan::Kind;
use rpcscan_tower::{gateway, McpLayer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower::{service_fn, Layer};

/// One hostile case: name, body, headers, status, answer.
type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], u16, Bytes);

/// What the upstream received: method and body of every request.
type Log = Arc<Mutex<Vec<(Method, Bytes)>>>;

const SSE: &str = "event: endpoint\ndata: /message?sessionId=s-1\n\n\
data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";

/// A tiny MCP-shaped upstream: requests get `{"result":{}}` for their id (as an event
/// stream for the `stream` tool), notifications 202, GET an event stream, DELETE 200.
async fn upstream() -> (SocketAddr, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Log::default();
    let seen = Arc::clone(&log);
    let service = service_fn(move |request: Request<Incoming>| {
        let seen = Arc::clone(&seen);
        async move {
            let method = request.method().clone();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            seen.lock().unwrap().push((method.clone(), body.clone()));
            let response = Response::builder().header("mcp-session-id", "s-1");
            let response = match method {
                Method::GET => response
                    .header("content-type", "text/event-stream")
                    .body(Full::new(Bytes::from(SSE))),
                Method::DELETE => response.body(Full::new(Bytes::new())),
                _ => match rpcscan::parse(&body) {
                    Ok(msg) if msg.kind() == Kind::Request => {
                        let id = String::from_utf8_lossy(msg.id().unwrap().raw()).into_owned();
                        let result = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
                        if msg.mcp().tool_name().is_some_and(|t| t == "stream") {
                            let events = format!("{SSE}data: {result}\n\n");
                            response
                                .header("content-type", "text/event-stream")
                                .body(Full::new(Bytes::from(events)))
                        } else {
                            response
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from(result)))
                        }
                    }
                    _ => response.status(202).body(Full::new(Bytes::new())),
                },
            };
            Ok::<_, Infallible>(response.unwrap())
        }
    });
    tokio::spawn(gateway::serve(listener, service));
    (addr, log)
}

async fn gateway_to(upstream: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let uri = format!("http://{upstream}/mcp").parse().unwrap();
    let service = McpLayer::new()
        .allow_tools(["echo", "stream"])
        .max_body_size(1024)
        .request_timeout(Some(Duration::from_millis(300)))
        .layer(gateway::Upstream::new(uri).unwrap());
    tokio::spawn(gateway::serve(listener, service));
    addr
}

async fn send(
    to: SocketAddr,
    method: Method,
    body: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, http::HeaderMap, Bytes) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut request = Request::builder().method(method).uri(format!("http://{to}/mcp"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Full::new(Bytes::from(body.to_owned()))).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    (parts.status, parts.headers, body.collect().await.unwrap().to_bytes())
}

fn error(id: &str, code: i64, message: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": {code}, "message": "{message}"}}}}"#
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valid_traffic_passes_both_ways() {
    let (up, log) = upstream().await;
    let gw = gateway_to(up).await;

    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
    let (status, headers, body) = send(gw, Method::POST, call, &[("mcp-session-id", "s-1")]).await;
    assert_eq!(
        (status, &body[..]),
        (StatusCode::OK, &br#"{"jsonrpc":"2.0","id":1,"result":{}}"#[..])
    );
    assert_eq!(headers["mcp-session-id"], "s-1");

    let stream = r#"{"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"stream"}}"#;
    let (status, headers, body) = send(gw, Method::POST, stream, &[]).await;
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(
        (status, &*String::from_utf8_lossy(&body)),
        (
            StatusCode::OK,
            &*format!("{SSE}data: {{\"jsonrpc\":\"2.0\",\"id\":\"2\",\"result\":{{}}}}\n\n")
        )
    );

    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(send(gw, Method::POST, notification, &[]).await.0, StatusCode::ACCEPTED);
    let (status, _, body) = send(gw, Method::GET, "", &[("mcp-session-id", "s-1")]).await;
    assert_eq!((status, &body[..]), (StatusCode::OK, SSE.as_bytes()));
    assert_eq!(send(gw, Method::DELETE, "", &[("mcp-session-id", "s-1")]).await.0, StatusCode::OK);

    let methods: Vec<_> = log.lock().unwrap().iter().map(|(m, _)| m.clone()).collect();
    assert_eq!(methods, [Method::POST, Method::POST, Method::POST, Method::GET, Method::DELETE]);
    assert_eq!(&log.lock().unwrap()[0].1[..], call.as_bytes()); // the body unchanged
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_never_reaches_the_upstream_and_the_gateway_stays_up() {
    let (up, log) = upstream().await;
    let gw = gateway_to(up).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2000)
    );
    #[rustfmt::skip]
    let cases: &[Case<'_>] = &[
        ("duplicate method", r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"rm"}}"#, &[], 400, error("1", -32600, "Invalid Request")),
        ("duplicate id", r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#, &[], 400, error("null", -32600, "Invalid Request")),
        ("escaped duplicate name", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","n\u0061me":"rm"}}"#, &[], 400, error("1", -32600, "Invalid Request: duplicate routing key in params")),
        ("header says tools/list", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#, &[("mcp-method", "tools/list"), ("mcp-name", "echo")], 400, error("1", -32020, "Header mismatch: Mcp-Method header does not match the body")),
        ("tool not allowed", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm"}}"#, &[], 200, error("1", -32602, "Invalid params: unknown tool")),
        ("oversized", &big, &[], 413, error("null", -32600, "Invalid Request: body too large")),
        ("not JSON", "GET / HTTP/1.1", &[], 400, error("null", -32700, "Parse error")),
    ];
    for (name, body, headers, status, want) in cases {
        let (got_status, _, got) = send(gw, Method::POST, body, headers).await;
        assert_eq!((got_status.as_u16(), &got), (*status, want), "{name}");
    }

    // A slow-drip body: the head, a few bytes, then silence past the request timeout.
    let mut tcp = TcpStream::connect(gw).await.unwrap();
    tcp.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 60\r\n\r\n{\"jsonrpc\":")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer)).await.ok();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.ends_with(r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request: body not received in time"}}"#), "{answer}");

    assert!(log.lock().unwrap().is_empty(), "the upstream saw {:?}", log.lock().unwrap());
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    assert_eq!(send(gw, Method::POST, ping, &[]).await.0, StatusCode::OK);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_upstream_is_502() {
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let gw = gateway_to(closed).await;
    let (status, _, body) =
        send(gw, Method::POST, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[]).await;
    assert_eq!(
        (status, body),
        (StatusCode::BAD_GATEWAY, error("1", -32603, "Bad Gateway: upstream unreachable"))
    );
}

/// An upstream that answers one request per connection with keep-alive framing (no
/// `Connection: close`), then closes the connection once the test says so; it counts the
/// connections it accepted, and says when it has closed one.
fn closing_upstream() -> (SocketAddr, Closer, Arc<Mutex<usize>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (close, closes) = std::sync::mpsc::channel::<()>();
    let (closed_tx, closed) = std::sync::mpsc::channel::<()>();
    let accepted = Arc::new(Mutex::new(0));
    let count = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            *count.lock().unwrap() += 1;
            // The request's head and its body (its length from the head).
            let mut seen = Vec::new();
            let mut chunk = [0u8; 4096];
            let complete = |seen: &[u8]| {
                let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else {
                    return false;
                };
                let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                seen.len() >= end + 4 + length
            };
            while !complete(&seen) {
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&chunk[..n]),
                }
            }
            let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body);
            // Idle, kept alive as far as the gateway knows, until the test closes it.
            if closes.recv().is_err() {
                return;
            }
            drop(stream);
            let _ = closed_tx.send(());
        }
    });
    (addr, (close, closed), accepted)
}

/// Tells [`closing_upstream`] to close its connection, and hears that it did.
type Closer = (std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>);

#[tokio::test(flavor = "current_thread")]
async fn a_pooled_connection_the_upstream_closed_while_idle_is_replaced() {
    let (up, close, accepted) = closing_upstream();
    let gw = gateway_to(up).await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let answer = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    for round in 1..=3 {
        let (status, _, body) = send(gw, Method::POST, ping, &[]).await;
        assert_eq!((status, body), (StatusCode::OK, answer.clone()), "round {round}");
        // The upstream closes the idle connection; the gateway's next request must not
        // fail on it but go out on a new connection.
        close.0.send(()).unwrap();
        close.1.recv().unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(*accepted.lock().unwrap(), 3);
}

/// Reads one answer with a `content-length` from `stream`: its status and body.
async fn read_answer(stream: &mut TcpStream) -> (u16, Vec<u8>) {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
            if seen.len() >= end + 4 + length {
                let status = head[9..12].parse().unwrap();
                return (status, seen[end + 4..end + 4 + length].to_vec());
            }
        }
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the gateway closed the connection");
        seen.extend_from_slice(&chunk[..n]);
    }
}

/// The race hyper's pooled client retries for: the gateway takes a pooled connection for a
/// request in the same turn as the upstream's close of it arrives, so the request is handed
/// to a connection that then finds itself closed before writing any of it. On one thread,
/// the request and the close reach the runtime together, the request first: the gateway
/// sends it on the pooled connection, which gives it back unsent; it goes out again on a
/// new connection.
#[tokio::test(flavor = "current_thread")]
async fn a_request_given_back_unsent_by_a_closed_pooled_connection_is_sent_again() {
    let (up, close, accepted) = closing_upstream();
    let gw = gateway_to(up).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let answer = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
    let mut client = TcpStream::connect(gw).await.unwrap();
    client.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(read_answer(&mut client).await, (200, answer.clone()));
    // Without yielding to the runtime: the next request goes to the gateway's socket
    // first, then the upstream closes the pooled connection.
    assert_eq!(client.try_write(request.as_bytes()).unwrap(), request.len());
    close.0.send(()).unwrap();
    close.1.recv().unwrap();
    assert_eq!(read_answer(&mut client).await, (200, answer));
    assert_eq!(*accepted.lock().unwrap(), 2);
    close.0.send(()).unwrap();
}
