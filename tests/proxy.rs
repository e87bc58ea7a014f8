//! Drives `examples/stdio_proxy.rs` over real pipes, with `examples/fake_mcp_server.rs` as
//! the child: requests, notifications, out-of-order responses, invalid and oversized
//! lines, server noise, cancellation, and the child exiting. Nothing lost, nothing
//! misrouted, ids restored byte for byte.
//!
//! The two examples are built by `cargo build --example ...` from the test (a no-op when
//! `cargo test` already built them), into the target directory and profile of this test.
#![cfg(feature = "tokio")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rpcscan::Kind;

const TIMEOUT: Duration = Duration::from_secs(20);
const MAX_LINE: usize = 1000;
const ALLOW: &str = "echo,hold,release,progress,ask_client,noise,log,exit,initialize";

/// Builds both examples once; returns (proxy, fake server).
fn binaries() -> &'static (PathBuf, PathBuf) {
    static BINS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINS.get_or_init(|| {
        // target/<profile>/deps/proxy-HASH → target/<profile>
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("target/<profile>/deps")
            .to_path_buf();
        let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev".to_owned(),
            Some(other) => other.to_owned(),
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--features", "tokio", "--profile", &profile])
            .args(["--example", "stdio_proxy", "--example", "fake_mcp_server"])
            .arg("--manifest-path")
            // The package at run time (cargo sets it), not where this test was compiled.
            .arg(
                std::path::PathBuf::from(
                    std::env::var_os("CARGO_MANIFEST_DIR")
                        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
                )
                .join("Cargo.toml"),
            )
            .arg("--target-dir")
            .arg(&target_dir)
            .status()
            .expect("run cargo build --example");
        assert!(status.success(), "building the examples failed");
        let bin = |name: &str| {
            profile_dir.join("examples").join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
        };
        (bin("stdio_proxy"), bin("fake_mcp_server"))
    })
}

struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Proxy {
    fn start() -> Proxy {
        let (proxy, server) = binaries();
        let mut child = Command::new(proxy)
            .args(["--allow", ALLOW, "--max-line", &MAX_LINE.to_string(), "--"])
            .arg(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the proxy");
        let stdout = child.stdout.take().expect("proxy stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(line) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        Proxy { stdin: child.stdin.take(), child, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write to proxy");
        stdin.write_all(b"\n").expect("write to proxy");
        stdin.flush().expect("flush");
    }

    /// The next `n` lines from the proxy (fails after the timeout).
    fn recv(&mut self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + TIMEOUT;
        (0..n)
            .map(|i| {
                let left = deadline.saturating_duration_since(Instant::now());
                match self.lines.recv_timeout(left) {
                    Ok(line) => line,
                    Err(e) => panic!("line {} of {n}: {e:?}", i + 1),
                }
            })
            .collect()
    }

    /// The responses to the next `n` lines, by raw id (several lines may share one).
    fn responses(&mut self, n: usize) -> BTreeMap<String, Vec<String>> {
        let mut by_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in self.recv(n) {
            let msg = rpcscan::parse(line.as_bytes()).unwrap_or_else(|e| panic!("{e}: {line}"));
            let id = msg.id().map_or("<none>".to_owned(), |id| id.to_string());
            by_id.entry(id).or_default().push(line);
        }
        by_id
    }

    /// Asserts nothing more arrives for a short while.
    fn quiet(&mut self) {
        match self.lines.recv_timeout(Duration::from_millis(300)) {
            Err(RecvTimeoutError::Timeout) => {}
            other => panic!("unexpected output: {other:?}"),
        }
    }

    fn log(&mut self, id: u32) -> serde_json::Value {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"log"}}"#));
        let line = self.recv(1).remove(0);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], id);
        v["result"].clone()
    }

    fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits for the proxy to exit; its exit code.
    fn wait(&mut self) -> Option<i32> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the proxy did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request(id: &str, method: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"k":[1,"two"]}}}}"#)
}

#[test]
fn ids_come_back_byte_for_byte() {
    let mut p = Proxy::start();
    let ids = [
        "18446744073709551617",
        "-0",
        "0",
        "9007199254740993",
        "-12",
        r#""a\u0062\"c""#,
        r#""""#,
        r#""\ud83d\ude00""#,
        "\"é\"",
        r#""1""#,
    ];
    for id in ids {
        p.send(&request(id, "echo"));
    }
    let got = p.responses(ids.len());
    assert_eq!(got.len(), ids.len(), "{got:?}");
    let mut downstream = Vec::new();
    for id in ids {
        let lines = &got[id];
        assert_eq!(lines.len(), 1);
        let msg = rpcscan::parse(lines[0].as_bytes()).unwrap();
        assert_eq!(msg.kind(), Kind::Result);
        assert_eq!(msg.id().unwrap().raw(), id.as_bytes());
        // Everything after the id is what the server sent, untouched.
        let v: serde_json::Value =
            serde_json::from_slice(msg.result().unwrap().as_bytes()).unwrap();
        assert_eq!(v["params"], serde_json::json!({"k": [1, "two"]}));
        downstream.push(v["seen_id"].as_u64().expect("the server saw an integer id"));
    }
    downstream.sort_unstable();
    downstream.dedup();
    assert_eq!(downstream.len(), ids.len(), "downstream ids are distinct");
    p.close();
    assert_eq!(p.wait(), Some(0));
}

#[test]
fn out_of_order_responses_and_repeated_client_ids() {
    let mut p = Proxy::start();
    p.send(&request("1", "hold"));
    p.send(&request(r#""x""#, "hold"));
    p.send(&request("1", "hold")); // the same client id twice in flight
    p.send(&request("7", "echo")); // answered while the others wait
    let first = p.responses(1);
    assert!(first.contains_key("7"), "{first:?}");
    p.send(&request("2", "release")); // answers the held ones newest first
    let got = p.responses(4);
    assert_eq!(got["1"].len(), 2);
    assert_eq!(got[r#""x""#].len(), 1);
    assert!(got["2"][0].contains(r#""released":3"#), "{got:?}");
    for line in got["1"].iter().chain(&got[r#""x""#]) {
        assert!(line.contains(r#""held":true"#), "{line}");
    }
    p.quiet();
}

#[test]
fn invalid_and_oversized_lines_are_answered_and_the_stream_goes_on() {
    let mut p = Proxy::start();
    let cases: [(String, &str); 7] = [
        (
            "{bad".into(),
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"q-1","method":"echo","params":null}"#.into(),
            r#"{"jsonrpc": "2.0", "id": "q-1", "error": {"code": -32600, "message": "Invalid Request"}}"#,
        ),
        (
            r#"{"jsonrpc":"1.0","id":18446744073709551617,"method":"echo"}"#.into(),
            r#"{"jsonrpc": "2.0", "id": 18446744073709551617, "error": {"code": -32600, "message": "Invalid Request"}}"#,
        ),
        (
            "[]".into(),
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"echo"}"#.into(),
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}"#,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"echo","params":["{}"]}}"#,
                "x".repeat(MAX_LINE)
            ),
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"ok","method":"tools/delete_everything"}"#.into(),
            r#"{"jsonrpc": "2.0", "id": "ok", "error": {"code": -32601, "message": "Method not found"}}"#,
        ),
    ];
    for (line, want) in &cases {
        p.send(line);
        assert_eq!(p.recv(1), [want.to_string()], "{line:.80}");
    }
    p.send("   ");
    p.send("");
    p.send(&request("9", "echo"));
    let got = p.responses(1);
    assert!(got.contains_key("9"));
    // The server saw only the one valid, allowed request (and now `log`).
    let log = p.log(10);
    assert_eq!(log["requests"], serde_json::json!(["echo", "log"]));
}

#[test]
fn notifications_server_requests_and_progress_pass_through() {
    let mut p = Proxy::start();
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    p.send(r#"{"jsonrpc":"2.0","id":"ask","method":"ask_client"}"#);
    let got = p.recv(2);
    assert_eq!(
        got[0],
        r#"{"id":"srv-1","jsonrpc":"2.0","method":"sampling/createMessage","params":{}}"#
    );
    assert_eq!(got[1], r#"{"id":"ask","jsonrpc":"2.0","result":{"asked":true}}"#);
    // The client answers the server's request: forwarded untouched.
    p.send(r#"{"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant"}}"#);
    p.send(r#"{"jsonrpc":"2.0","id":5,"method":"progress","params":{"_meta":{"progressToken":"tok-\u00e9"}}}"#);
    let got = p.recv(2);
    assert_eq!(
        got[0],
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"tok-é"}}"#
    );
    assert_eq!(got[1], r#"{"id":5,"jsonrpc":"2.0","result":{"done":true}}"#);
    let log = p.log(6);
    assert_eq!(log["notifications"], serde_json::json!(["notifications/initialized"]));
    assert_eq!(log["client_responses"], serde_json::json!(["srv-1"]));
}

#[test]
fn cancellations_name_the_downstream_id() {
    let mut p = Proxy::start();
    p.send(&request(r#""h\u0031""#, "hold"));
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h1","reason":"user"}}"#);
    // Not in flight: dropped, not forwarded with an id the server may have given another request.
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"gone"}}"#);
    let log = p.log(2);
    let cancelled = log["cancelled"].as_array().unwrap();
    assert_eq!(cancelled.len(), 1, "{log}");
    assert!(cancelled[0].is_u64(), "the server got its own id back: {log}");
    p.send(&request("3", "release"));
    let got = p.responses(2);
    assert_eq!(got[r#""h\u0031""#].len(), 1, "{got:?}");
}

#[test]
fn server_noise_is_dropped() {
    let mut p = Proxy::start();
    p.send(&request("1", "noise")); // garbage, an oversized line, a stray response, then the answer
    assert_eq!(p.recv(1), [r#"{"id":1,"jsonrpc":"2.0","result":{"noisy":true}}"#]);
    p.send(&request("2", "echo"));
    assert!(p.responses(1).contains_key("2"));
    p.quiet();
}

#[test]
fn child_exit_answers_every_pending_request() {
    let mut p = Proxy::start();
    p.send(&request("10", "hold"));
    p.send(&request(r#""p\"q""#, "hold"));
    p.send(&request("18446744073709551617", "hold"));
    p.send(&request("11", "exit"));
    let got = p.responses(4);
    for id in ["10", r#""p\"q""#, "18446744073709551617", "11"] {
        assert_eq!(
            got[id],
            [format!(
                r#"{{"jsonrpc": "2.0", "id": {id}, "error": {{"code": -32603, "message": "Internal error", "data": {{"reason": "the MCP server exited before responding"}}}}}}"#
            )],
        );
    }
    assert_eq!(p.wait(), Some(0));
}

#[test]
fn client_eof_closes_the_server_and_the_proxy_exits() {
    let mut p = Proxy::start();
    p.send(&request("1", "echo"));
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo"}"#);
    let got = p.responses(2);
    assert_eq!(got.len(), 2);
    p.close();
    assert_eq!(p.wait(), Some(0));
}
