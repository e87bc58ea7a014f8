//! `rpcscan gateway` end to end: the built binary between this test (a raw HTTP/1.1
//! client over loopback) and a small hyper upstream in this process that records every
//! request it gets, so a test can say what the upstream never saw.
#![cfg(unix)]

use std::convert::Infallible;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tower_service::Service;

const TIMEOUT: Duration = Duration::from_secs(20);

/// What the upstream saw: `METHOD session body` per request. A POST in a session it saw
/// ended (DELETE) gets 400 and a JSON-RPC error with `"id": null`, as the MCP SDKs'
/// servers answer; `tools/call` of the tool `slow` is answered after 2 s.
type Seen = Arc<Mutex<Vec<String>>>;

#[derive(Clone)]
struct Upstream(Seen);

const ENDPOINT_EVENT: &str = "event: endpoint\ndata: /message?sessionId=abc\n\n";

impl Service<Request<Incoming>> for Upstream {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let seen = Arc::clone(&self.0);
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let session = parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned();
            let ended = {
                let mut seen = seen.lock().unwrap();
                let ended = seen.iter().any(|s| s.starts_with(&format!("DELETE {session} ")));
                seen.push(format!("{} {session} {}", parts.method, String::from_utf8_lossy(&body)));
                ended
            };
            if ended && parts.method == "POST" {
                let mut r = Response::new(Full::new(Bytes::from(
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#,
                )));
                *r.status_mut() = StatusCode::BAD_REQUEST;
                r.headers_mut().insert("content-type", "application/json".parse().unwrap());
                return Ok(r);
            }
            let sse = |text: String| {
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .header("mcp-session-id", "s1")
                    .body(Full::new(Bytes::from(text)))
                    .unwrap()
            };
            let response = match parts.method.as_str() {
                "GET" => {
                    sse("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n"
                        .into())
                }
                "DELETE" => Response::new(Full::new(Bytes::new())),
                _ => match rpcscan::parse(&body) {
                    Ok(msg) if msg.kind() == rpcscan::Kind::Request => {
                        let id = String::from_utf8_lossy(msg.id().unwrap().raw()).into_owned();
                        let method = msg.method().unwrap().decode().unwrap().into_owned();
                        let tool = msg.mcp().tool_name().map(|t| t.decode().unwrap().into_owned());
                        let answer = format!(
                            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"method":"{method}"}}}}"#
                        );
                        if tool.as_deref() == Some("slow") {
                            tokio::time::sleep(Duration::from_secs(2)).await;
                        }
                        if tool.as_deref() == Some("stream") {
                            sse(format!(
                                "{ENDPOINT_EVENT}event: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progress\":1}}}}\n\ndata: {answer}\n\n"
                            ))
                        } else {
                            Response::builder()
                                .header("content-type", "application/json")
                                .header("mcp-session-id", "s1")
                                .body(Full::new(Bytes::from(answer)))
                                .unwrap()
                        }
                    }
                    _ => {
                        let mut r = Response::new(Full::new(Bytes::new()));
                        *r.status_mut() = StatusCode::ACCEPTED;
                        r
                    }
                },
            };
            Ok(response)
        })
    }
}

struct Gateway {
    child: Child,
    addr: SocketAddr,
    metrics: Option<SocketAddr>,
    seen: Seen,
    _runtime: tokio::runtime::Runtime,
}

impl Gateway {
    fn start(options: &[&str]) -> Gateway {
        Gateway::start_to(options, None)
    }

    /// A gateway in front of the test's upstream, or of `upstream` when given.
    fn start_to(options: &[&str], upstream: Option<SocketAddr>) -> Gateway {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let seen = Seen::default();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let upstream = upstream.unwrap_or_else(|| listener.local_addr().unwrap());
        runtime.spawn(rpcscan_tower::gateway::serve(listener, Upstream(Arc::clone(&seen))));
        let mut child = Command::new(env!("CARGO_BIN_EXE_rpcscan"))
            .args(["gateway", "--listen", "127.0.0.1:0", "--upstream"])
            .arg(format!("http://{upstream}/mcp"))
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start rpcscan gateway");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let wants_metrics = options.contains(&"--metrics");
        let (mut addr, mut metrics) = (None, None);
        while addr.is_none() || (wants_metrics && metrics.is_none()) {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap() == 0 {
                panic!("the gateway ended before listening");
            }
            if let Some(rest) = line.strip_prefix("rpcscan gateway: listening on ") {
                addr = rest.split(',').next().and_then(|a| a.parse().ok());
            } else if let Some(rest) = line.strip_prefix("rpcscan gateway: metrics on http://") {
                metrics = rest.trim().trim_end_matches("/metrics").parse().ok();
            }
        }
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Gateway { child, addr: addr.unwrap(), metrics, seen, _runtime: runtime }
    }

    fn post(&self, body: &str, headers: &[(&str, &str)]) -> Answer {
        request(self.addr, "POST", body.as_bytes(), headers)
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// Stops the gateway with SIGTERM; it exits 0.
    fn stop(self) {
        kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM).unwrap();
        self.stop_waiting();
    }

    /// Waits for the gateway, signalled already, to exit 0.
    fn stop_waiting(mut self) {
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: String,
    body: String,
}

/// One HTTP/1.1 exchange with `Connection: close`; a chunked body is de-chunked.
fn request(addr: SocketAddr, method: &str, body: &[u8], headers: &[(&str, &str)]) -> Answer {
    request_at(addr, "/mcp", method, body, headers)
}

fn request_at(
    addr: SocketAddr,
    path: &str,
    method: &str,
    body: &[u8],
    headers: &[(&str, &str)],
) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_answer(&raw)
}

fn parse_answer(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let headers = head.to_ascii_lowercase();
    let body = if headers.contains("transfer-encoding: chunked") {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if size == 0 {
                break;
            }
            out.push_str(&after[..size]);
            rest = &after[size + 2..];
        }
        out
    } else {
        body.to_owned()
    };
    Answer { status, headers, body }
}

fn call(id: u32, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
}

#[test]
fn post_get_delete_and_session_headers_pass() {
    let gw = Gateway::start(&[]);
    let answer =
        gw.post(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#, &[("Mcp-Session-Id", "s1")]);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body, r#"{"jsonrpc":"2.0","id":"a","result":{"method":"tools/list"}}"#);
    assert!(answer.headers.contains("mcp-session-id: s1"), "{answer:?}");

    let stream = request(gw.addr, "GET", b"", &[("Mcp-Session-Id", "s1")]);
    assert_eq!(stream.status, 200);
    assert!(stream.body.contains("notifications/message"), "{stream:?}");

    let end = request(gw.addr, "DELETE", b"", &[("Mcp-Session-Id", "s1")]);
    assert_eq!(end.status, 200);
    let seen = gw.seen();
    assert!(seen[0].starts_with("POST s1 {"), "{seen:?}");
    assert!(seen[1].starts_with("GET s1"), "{seen:?}");
    assert!(seen[2].starts_with("DELETE s1"), "{seen:?}");

    // A notification accepted upstream: 202, no body.
    let note = gw.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &[]);
    assert_eq!(note.status, 202);
    gw.stop();
}

#[test]
fn sse_answers_pass_with_their_non_message_events_and_are_logged_per_message() {
    let dir = tempdir();
    let log = dir.path().join("gateway.ndjson");
    let gw = Gateway::start(&["--log", log.to_str().unwrap()]);
    let answer = gw.post(&call(7, "stream"), &[]);
    assert_eq!(answer.status, 200);
    assert!(answer.body.starts_with(ENDPOINT_EVENT), "{answer:?}");
    assert!(answer.body.contains(r#""id":7,"result""#), "{answer:?}");
    gw.stop();

    let records = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = records.lines().collect();
    assert_eq!(lines.len(), 4, "{records}");
    for line in &lines {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(value["ts"].as_str().unwrap().ends_with('Z'));
    }
    assert!(
        lines[0].contains(r#""dir":"c2s","msg":{"jsonrpc":"2.0","id":7,"method":"tools/call""#),
        "{records}"
    );
    assert!(
        lines[1]
            .contains(r#""dir":"proxy","event":"non_message","from":"server","reason":"endpoint""#),
        "{records}"
    );
    assert!(
        lines[2].contains(
            r#""dir":"s2c","session":"s1","msg":{"jsonrpc":"2.0","method":"notifications/progress""#
        ),
        "{records}"
    );
    assert!(
        lines[3].contains(r#""dir":"s2c","session":"s1","msg":{"jsonrpc":"2.0","id":7,"result""#),
        "{records}"
    );
}

#[test]
fn the_policy_flags_of_rpcscan_proxy() {
    let dir = tempdir();
    let log = dir.path().join("gateway.ndjson");
    let gw = Gateway::start(&[
        "--deny-tool",
        "exec*",
        "--deny-method",
        "custom/*",
        "--log",
        log.to_str().unwrap(),
    ]);
    let denied = gw.post(&call(1, "exec_shell"), &[]);
    assert_eq!(denied.status, 200);
    assert_eq!(
        denied.body,
        r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool"}}"#
    );
    // Compared decoded: the escape does not slip past the glob.
    let escaped = gw.post(&call(2, r"\u0065xec"), &[]);
    assert!(escaped.body.contains("-32602"), "{escaped:?}");
    let method = gw.post(r#"{"jsonrpc":"2.0","id":3,"method":"custom/x"}"#, &[]);
    assert!(method.body.contains(r#""code": -32601"#), "{method:?}");
    let note = gw.post(r#"{"jsonrpc":"2.0","method":"custom/note"}"#, &[]);
    assert_eq!(note.status, 400);
    // Protocol methods always pass; other tools pass.
    assert_eq!(gw.post(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#, &[]).status, 200);
    let ok = gw.post(&call(5, "echo"), &[]);
    assert!(ok.body.contains(r#""id":5,"result""#), "{ok:?}");
    let seen = gw.seen();
    assert_eq!(seen.len(), 2, "the upstream saw only ping and echo: {seen:?}");
    gw.stop();

    let records = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = records.lines().collect();
    // The request as the client sent it, the decision, the answer the client got.
    assert!(
        lines[0].contains(r#""dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call""#),
        "{records}"
    );
    assert!(lines[1].contains(r#""dir":"proxy","event":"denied","from":"client","id":1,"reason":"tool \"exec_shell\" not allowed""#), "{records}");
    assert!(
        lines[1].contains(r#","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call""#),
        "{records}"
    );
    assert!(
        lines[2].ends_with(&format!(r#""dir":"s2c","origin":"gateway","msg":{}}}"#, denied.body)),
        "{records}"
    );
}

/// A body, its headers, the status and a piece of the body the gateway answers with.
type Case = (String, &'static [(&'static str, &'static str)], u16, &'static str);

#[test]
fn hostile_input_is_rejected_before_the_upstream_and_the_gateway_stays_up() {
    let gw = Gateway::start(&["--max-body-size", "1K", "--metrics", "127.0.0.1:0"]);
    let cases: [Case; 6] = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list"}"#.into(),
            &[],
            400,
            "-32600",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}"#.into(),
            &[],
            400,
            "-32600",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","n\u0061me":"exec"}}"#.into(),
            &[],
            400,
            "duplicate routing key",
        ),
        (call(1, "echo"), &[("Mcp-Method", "tools/list")], 400, "-32020"),
        (format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{}"}}"#, "x".repeat(2000)), &[], 413, "-32600"),
        (r#"{"jsonrpc":"2.0","id":9,"method":"#.into(), &[], 400, "-32700"),
    ];
    for (body, headers, status, needle) in &cases {
        let answer = gw.post(body, headers);
        assert_eq!(answer.status, *status, "{body}: {answer:?}");
        assert!(answer.body.contains(needle), "{body}: {answer:?}");
    }
    // A body that drips in slower than the request timeout allows.
    let slow = Gateway::start(&["--request-timeout", "300ms"]);
    let mut stream = TcpStream::connect(slow.addr).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let body = call(1, "echo");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        &body[..5]
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    assert_eq!(parse_answer(&raw).status, 408);
    assert!(slow.seen().is_empty());
    slow.stop();

    assert!(gw.seen().is_empty(), "{:?}", gw.seen());
    let ok = gw.post(&call(2, "echo"), &[]);
    assert_eq!(ok.status, 200, "still up");
    let metrics = request_at(gw.metrics.unwrap(), "/metrics", "GET", b"", &[]);
    assert!(
        metrics.body.contains("rpcscan_rejections_total{reason=\"header_mismatch\"} 1"),
        "{}",
        metrics.body
    );
    gw.stop();
}

#[test]
fn refuses_a_non_loopback_listen_address() {
    let out = Command::new(env!("CARGO_BIN_EXE_rpcscan"))
        .args(["gateway", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"));
}

/// `rpcscan pair` over a log: the requests it lists as never answered (`--unanswered
/// --json`), and its summary (`--json`'s last line).
fn pair_log(log: &std::path::Path) -> (Vec<serde_json::Value>, serde_json::Value) {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rpcscan")).args(args).arg(log).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let json = |l: &str| serde_json::from_str::<serde_json::Value>(l).unwrap();
    let unanswered = run(&["pair", "--unanswered", "--json"]).lines().map(json).collect();
    let summary = json(run(&["pair", "--json"]).lines().last().unwrap());
    (unanswered, summary)
}

// Issue 31: every answer the client gets is in the log, bound to its request, and counted.
#[test]
fn pair_finds_every_answer_of_a_gateway_session_in_its_log() {
    let dir = tempdir();
    let log = dir.path().join("gateway.ndjson");
    let gw = Gateway::start(&[
        "--deny-tool",
        "exec*",
        "--max-body-size",
        "1K",
        "--request-timeout",
        "500ms",
        "--log",
        log.to_str().unwrap(),
        "--metrics",
        "127.0.0.1:0",
    ]);
    let s1: &[(&str, &str)] = &[("Mcp-Session-Id", "s1")];
    let big = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"{}"}}"#, "x".repeat(2000));
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned();
    let invalid = r#"{"jsonrpc":"2.0","id":3,"method":5}"#.to_owned();
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#.to_owned();
    // Body, headers, and the status the client gets: in order, one session.
    type Post<'a> = (String, &'a [(&'a str, &'a str)], u16);
    #[rustfmt::skip]
    let before_delete: [Post<'_>; 7] = [
        (list, s1, 200),
        (call(2, "exec_shell"), s1, 200),                                  // denied
        (invalid, s1, 400),                                                // invalid, id 3
        (big, s1, 413),                                                    // oversized, id null
        (call(5, "echo"), &[("Mcp-Session-Id", "s1"), ("Mcp-Method", "tools/list")], 400),
        (call(6, "slow"), s1, 504),                                        // upstream too slow
        (note, s1, 202),                                                   // no answer
    ];
    let mut answers = 0;
    for (body, headers, status) in &before_delete {
        let answer = gw.post(body, headers);
        assert_eq!(answer.status, *status, "{body}: {answer:?}");
        answers += u64::from(rpcscan::parse(answer.body.as_bytes()).is_ok());
    }
    assert_eq!(request(gw.addr, "DELETE", b"", s1).status, 200);
    // The session is over: the upstream's own 400 and JSON-RPC error, "id": null.
    let after = gw.post(&ping, s1);
    assert_eq!((after.status, after.body.contains(r#""id":null"#)), (400, true), "{after:?}");
    answers += 1;
    let metrics = request_at(gw.metrics.unwrap(), "/metrics", "GET", b"", &[]).body;
    gw.stop();

    let records = std::fs::read_to_string(&log).unwrap();
    let (unanswered, summary) = pair_log(&log);
    assert_eq!(unanswered, Vec::<serde_json::Value>::new(), "{records}");
    // The invalid request's answer has an id but no request to answer; the oversized
    // body's answer has neither.
    let counts = ["pairs", "orphans", "null_id_errors", "unanswered"]
        .map(|k| summary[k].as_u64().unwrap_or(u64::MAX));
    assert_eq!(counts, [5, 1, 1, 0], "{records}");
    assert_eq!(counts[0] + counts[1] + counts[2], answers);
    let refused =
        format!(r#""dir":"s2c","status":400,"request_id":9,"session":"s1","msg":{}}}"#, after.body);
    assert!(records.lines().any(|l| l.ends_with(&refused)), "{records}");
    for line in [
        "rpcscan_messages_total{direction=\"server\",kind=\"error\",method=\"ping\"} 1",
        "rpcscan_error_responses_total{direction=\"server\",code=\"-32000\"} 1",
        "rpcscan_rejections_total{reason=\"body_too_large\"} 1",
        "rpcscan_rejections_total{reason=\"header_mismatch\"} 1",
        "rpcscan_rejections_total{reason=\"invalid\"} 1",
        "rpcscan_rejections_total{reason=\"policy\"} 1",
        "rpcscan_rejections_total{reason=\"timeout\"} 1",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
}

#[test]
fn an_unreachable_upstream_is_answered_and_logged() {
    let dir = tempdir();
    let log = dir.path().join("gateway.ndjson");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let gw = Gateway::start_to(&["--log", log.to_str().unwrap()], Some(closed));
    let answer = gw.post(r#"{"jsonrpc":"2.0","id":"u","method":"ping"}"#, &[]);
    assert_eq!(answer.status, 502, "{answer:?}");
    gw.stop();
    let records = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = records.lines().collect();
    assert_eq!(lines.len(), 3, "{records}");
    assert!(lines[1].contains(r#""dir":"proxy","event":"upstream_unreachable""#), "{records}");
    let own = format!(
        r#""dir":"s2c","origin":"gateway","status":502,"request_id":"u","msg":{}}}"#,
        answer.body
    );
    assert!(lines[2].ends_with(&own), "{records}");
    let (unanswered, summary) = pair_log(&log);
    assert_eq!((unanswered.len(), summary["pairs"].as_u64()), (0, Some(1)), "{records}");
}

/// A directory of the test's own, removed with everything in it when the test ends.
fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("rpcscan-gateway-test-").tempdir().unwrap()
}

/// The value of one line of the gateway's `/metrics` (`name{labels}`), 0 when absent.
fn metric(gw: &Gateway, line: &str) -> u64 {
    let text = request_at(gw.metrics.unwrap(), "/metrics", "GET", b"", &[]).body;
    text.lines()
        .find_map(|l| l.strip_prefix(line).and_then(|v| v.strip_prefix(' ')))
        .map_or(0, |v| v.trim().parse().unwrap())
}

/// One request on an open keep-alive connection; the answer must have a content-length.
fn exchange(stream: &mut TcpStream, body: &str) -> Answer {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut byte = [0];
    while !raw.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "the connection closed: {raw:?}");
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .expect("a content-length")
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    stream.read_exact(&mut body).unwrap();
    raw.extend_from_slice(&body);
    parse_answer(&raw)
}

/// A connection from `source` (any 127.0.0.0/8 address reaches loopback).
fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&format!("{source}:0").parse::<SocketAddr>().unwrap().into()).unwrap();
    socket.connect(&to.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream
}

#[test]
fn slow_headers_get_408_and_silent_connections_are_closed_when_idle() {
    let gw = Gateway::start(&[
        "--header-timeout",
        "2s",
        "--idle-timeout",
        "1s",
        "--metrics",
        "127.0.0.1:0",
    ]);
    // A header block dripped a byte every 200 ms: busy, so not idle, but never complete.
    let mut slow = TcpStream::connect(gw.addr).unwrap();
    slow.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut writer = slow.try_clone().unwrap();
    let started = std::time::Instant::now();
    let drip = std::thread::spawn(move || {
        writer.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\n").unwrap();
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(200));
            if writer.write_all(b"x").is_err() {
                break;
            }
        }
    });
    // A connection that sends nothing at all.
    let mut silent = TcpStream::connect(gw.addr).unwrap();
    silent.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut got = Vec::new();
    silent.read_to_end(&mut got).unwrap();
    let idle_after = started.elapsed();
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    assert!(idle_after < Duration::from_millis(1900), "closed after {idle_after:?}");

    let mut answer = Vec::new();
    let _ = slow.read_to_end(&mut answer);
    let after = started.elapsed();
    let answer = parse_answer(&answer);
    assert_eq!(answer.status, 408, "{answer:?}");
    assert_eq!(
        answer.body,
        r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request: header not received in time"}}"#
    );
    assert!(after >= Duration::from_millis(1900) && after < Duration::from_secs(5), "{after:?}");
    drip.join().unwrap();
    assert_eq!(metric(&gw, r#"rpcscan_connections_closed_total{reason="header_timeout"}"#), 1);
    assert_eq!(metric(&gw, r#"rpcscan_connections_closed_total{reason="idle_timeout"}"#), 1);
    // Connections serving a request are not idle: `slow` takes 2 s, twice the idle time.
    let answer = gw.post(&call(1, "slow"), &[]);
    assert_eq!(answer.status, 200, "{answer:?}");
    gw.stop();
}

#[test]
fn connection_caps_are_answered_503_and_counted() {
    let gw = Gateway::start(&[
        "--max-connections",
        "3",
        "--max-connections-per-client",
        "2",
        "--metrics",
        "127.0.0.1:0",
    ]);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut a = connect_from("127.0.0.1", gw.addr);
    let _b = connect_from("127.0.0.1", gw.addr);
    assert_eq!(exchange(&mut a, ping).status, 200);
    // A third from the same address: 503 and closed.
    let refused = gw.post(ping, &[]);
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.headers.contains("connection: close"), "{refused:?}");
    // Another address is admitted, up to the cap of three in all.
    let mut c = connect_from("127.0.0.2", gw.addr);
    assert_eq!(exchange(&mut c, ping).status, 200);
    let mut d = connect_from("127.0.0.3", gw.addr);
    let mut raw = Vec::new();
    d.write_all(b"GET /mcp HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    d.read_to_end(&mut raw).unwrap();
    assert_eq!(parse_answer(&raw).status, 503);
    // A place freed is a place taken.
    drop(a);
    let mut admitted = None;
    for _ in 0..100 {
        let mut e = connect_from("127.0.0.1", gw.addr);
        let mut raw = Vec::new();
        e.write_all(format!("POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{ping}", ping.len()).as_bytes()).unwrap();
        e.read_to_end(&mut raw).unwrap();
        if parse_answer(&raw).status == 200 {
            admitted = Some(());
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(admitted.is_some(), "the freed place was not given again");
    assert!(
        metric(&gw, r#"rpcscan_connections_refused_total{reason="max_connections_per_client"}"#)
            >= 1
    );
    assert!(metric(&gw, r#"rpcscan_connections_refused_total{reason="max_connections"}"#) >= 1);
    gw.stop();
}

#[test]
fn sigterm_lets_a_request_in_flight_finish_and_refuses_new_connections() {
    let gw = Gateway::start(&["--drain", "5s"]);
    let addr = gw.addr;
    let slow = std::thread::spawn(move || request(addr, "POST", call(7, "slow").as_bytes(), &[]));
    std::thread::sleep(Duration::from_millis(500));
    let pid = Pid::from_raw(gw.child.id() as i32);
    kill(pid, Signal::SIGTERM).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(TcpStream::connect(addr).is_err(), "still accepting after SIGTERM");
    let answer = slow.join().unwrap();
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body, r#"{"jsonrpc":"2.0","id":7,"result":{"method":"tools/call"}}"#);
    gw.stop_waiting();
}

#[test]
fn sigterm_closes_what_is_still_open_after_the_drain() {
    let gw = Gateway::start(&["--drain", "1s", "--request-timeout", "0"]);
    // An idle kept-alive connection ends at once; a request still waiting is cut at 1 s.
    let _idle = TcpStream::connect(gw.addr).unwrap();
    let addr = gw.addr;
    let waiting = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        // A body never finished: the request is in flight until the drain ends it.
        stream.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n{").unwrap();
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
    });
    std::thread::sleep(Duration::from_millis(300));
    let started = std::time::Instant::now();
    kill(Pid::from_raw(gw.child.id() as i32), Signal::SIGTERM).unwrap();
    gw.stop_waiting();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(4), "{took:?}");
    waiting.join().unwrap();
}

#[test]
fn sighup_reads_the_config_again_without_dropping_a_connection() {
    let dir = tempdir();
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, "deny-tool = [\"other\"]\n").unwrap();
    let gw = Gateway::start(&["--config", config.to_str().unwrap()]);
    let mut stream = TcpStream::connect(gw.addr).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    assert_eq!(exchange(&mut stream, &call(1, "rm")).status, 200);
    assert!(exchange(&mut stream, &call(2, "rm")).body.contains("result"));

    std::fs::write(&config, "deny-tool = [\"rm\"]\nmax-body-size = \"1K\"\n").unwrap();
    kill(Pid::from_raw(gw.child.id() as i32), Signal::SIGHUP).unwrap();
    let mut denied = None;
    for id in 3..200 {
        let answer = exchange(&mut stream, &call(id, "rm"));
        if answer.body.contains("-32602") {
            denied = Some(answer);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let denied = denied.expect("the reloaded policy never applied");
    assert_eq!(denied.status, 200);
    // A broken file leaves the settings as they were.
    std::fs::write(&config, "deny-tool = [").unwrap();
    kill(Pid::from_raw(gw.child.id() as i32), Signal::SIGHUP).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(exchange(&mut stream, &call(300, "rm")).body.contains("-32602"));
    // The same connection goes on, under the new size limit too (last: after a 413 the
    // unread rest of the body may close the connection).
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "y".repeat(2000)
    );
    assert_eq!(exchange(&mut stream, &big).status, 413);
    gw.stop();
    let _ = std::fs::remove_dir_all(dir);
}
