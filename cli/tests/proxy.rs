//! `rpcscan proxy` end to end: the built binary between this test (the client) and small
//! `sh` servers over real pipes. Downstream ids count up from 1, so a server of a few lines
//! of `sh`/`sed` knows exactly which ids it gets. One test per finding of issue 19, then
//! the rest of the contract (policy, invalid lines, limits, the log, `--help`).
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

const TIMEOUT: Duration = Duration::from_secs(20);

/// Answers every request with `{"method": METHOD}` (ids are the proxy's integers).
const ECHO: &str = r#"exec sed -u -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\),"method":"\([^"]*\)".*/{"jsonrpc":"2.0","id":\1,"result":{"method":"\2"}}/p'"#;

/// Tells its pid, then ignores SIGTERM (SIGINT, SIGHUP) and the end of its stdin; says
/// `got` for each line it reads, and never answers.
const STUBBORN: &str = r#"trap "" TERM INT HUP; echo "{\"jsonrpc\":\"2.0\",\"method\":\"pid\",\"params\":{\"pid\":$$}}"; while :; do if read -r line; then echo '{"jsonrpc":"2.0","method":"got"}'; else sleep 1; fi; done"#;

struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Proxy {
    fn start(options: &[&str], server: &str) -> Proxy {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rpcscan"))
            .arg("proxy")
            .args(options)
            .args(["--", "sh", "-c", server])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rpcscan proxy");
        let stdout = child.stdout.take().expect("proxy stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
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

    fn recv(&self) -> String {
        self.lines.recv_timeout(TIMEOUT).expect("a line from the proxy in time")
    }

    /// Nothing more within `wait`.
    fn silent_for(&self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the proxy to exit; returns its status and every line left.
    fn finish(mut self) -> (ExitStatus, Vec<String>) {
        self.close_stdin();
        let status = wait_timeout(&mut self.child, TIMEOUT).expect("the proxy exits in time");
        let rest = self.lines.iter().collect();
        (status, rest)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn json(line: &str) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// The raw id of a line, as it is written.
fn raw_id(line: &str) -> String {
    let msg = rpcscan::parse(line.as_bytes()).unwrap_or_else(|e| panic!("{e}: {line}"));
    String::from_utf8_lossy(msg.id().expect("an id").raw()).into_owned()
}

/// Pids of live (not zombie) processes whose process group is `group`.
fn group_members(group: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'.
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let fields: Vec<&str> = after.split_whitespace().collect();
            fields.first() != Some(&"Z") && fields.get(2) == Some(&group.to_string().as_str())
        })
        .collect()
}

fn assert_group_gone(group: i32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = group_members(group);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "left running: {left:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn server_pid(proxy: &Proxy) -> i32 {
    let hello = json(&proxy.recv());
    assert_eq!(hello["method"], "pid");
    hello["params"]["pid"].as_i64().expect("pid") as i32
}

/// A path named `name` in a directory of the test's own, removed when the directory (the
/// first half, kept alive by the test) is dropped.
fn temp_path(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix("rpcscan-proxy-test-").tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

// Finding 1: tasks/* must reach the server, whatever the policy.
#[test]
fn tasks_methods_are_forwarded_even_under_a_strict_policy() {
    for options in [&[][..], &["--allow-method", "tools/*", "--deny-tool", "*"][..]] {
        let mut proxy = Proxy::start(options, ECHO);
        let methods = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];
        for (i, m) in methods.iter().enumerate() {
            proxy.send(&format!(
                r#"{{"jsonrpc":"2.0","id":"t{i}","method":"{m}","params":{{"taskId":"x"}}}}"#
            ));
        }
        for (i, m) in methods.iter().enumerate() {
            let line = proxy.recv();
            assert_eq!(raw_id(&line), format!("\"t{i}\""), "{line}");
            assert_eq!(json(&line)["result"]["method"], *m, "{options:?}");
        }
        let (status, rest) = proxy.finish();
        assert!(status.success() && rest.is_empty(), "{status:?} {rest:?}");
    }
}

// Finding 2: SIGTERM to the proxy must not orphan a server that ignores it.
#[test]
fn sigterm_reaches_the_server_and_a_stubborn_one_is_killed() {
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        let mut proxy = Proxy::start(&["--grace", "300ms"], STUBBORN);
        let server = server_pid(&proxy);
        proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(json(&proxy.recv())["method"], "got", "the request is in flight");
        let started = Instant::now();
        kill(Pid::from_raw(proxy.child.id() as i32), sig).expect("signal the proxy");
        let status = wait_timeout(&mut proxy.child, TIMEOUT).expect("the proxy exits");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(status.code(), Some(128 + 9), "killed after the grace period");
        assert_group_gone(server);
        // The server died without answering: now (and only now) -32603.
        let line = proxy.recv();
        assert_eq!(
            (raw_id(&line).as_str(), json(&line)["error"]["code"].as_i64()),
            ("1", Some(-32603))
        );
    }
}

#[test]
fn closing_stdin_ends_a_server_that_ignores_it_and_sigterm() {
    let (_dir, log) = temp_path("kill.ndjson");
    let proxy = Proxy::start(&["--grace", "200ms", "--log", log.to_str().unwrap()], STUBBORN);
    let server = server_pid(&proxy);
    let started = Instant::now();
    let (status, rest) = proxy.finish();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status.code(), Some(137));
    assert!(rest.is_empty(), "{rest:?}");
    assert_group_gone(server);
    let log = std::fs::read_to_string(&log).expect("log");
    let kills: Vec<&str> = log.lines().filter(|l| l.contains(r#""event":"kill""#)).collect();
    assert_eq!(kills.len(), 2, "SIGTERM, then SIGKILL: {log}");
    assert!(log.contains(r#""event":"server_exit","code":137"#), "{log}");
}

#[test]
fn a_server_that_exits_on_eof_is_waited_for() {
    let proxy = Proxy::start(&[], "cat >/dev/null; exit 3");
    let started = Instant::now();
    let (status, _) = proxy.finish();
    assert_eq!(status.code(), Some(3));
    assert!(started.elapsed() < Duration::from_secs(4), "no grace period needed");
}

// Finding 3: a cancelled request is never answered; its late response is dropped.
#[test]
fn cancelled_requests_are_not_answered_and_leave_the_table() {
    let (_dir, log) = temp_path("cancel.ndjson");
    // Reads a request (1) and its cancellation, shows the cancellation it got, answers
    // 1 late, answers the next request (2), reads a third (3) and exits without answering.
    let server = r#"read a; read c; echo "{\"jsonrpc\":\"2.0\",\"method\":\"seen\",\"params\":$c}"; read b; echo '{"jsonrpc":"2.0","id":1,"result":{"late":true}}'; echo '{"jsonrpc":"2.0","id":2,"result":{"ok":true}}'; read d; exit 0"#;
    let mut proxy = Proxy::start(&["--log", log.to_str().unwrap()], server);
    proxy.send(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"user"}}"#);
    let seen = json(&proxy.recv());
    assert_eq!(seen["params"]["params"]["requestId"], 1, "rewritten to the downstream id");
    proxy.send(r#"{"jsonrpc":"2.0","id":"b","method":"tools/list"}"#);
    let b = proxy.recv();
    assert_eq!(raw_id(&b), r#""b""#, "the late response to \"a\" was dropped: {b}");
    proxy.send(r#"{"jsonrpc":"2.0","id":"c","method":"tools/list"}"#);
    let c = proxy.recv();
    assert_eq!((raw_id(&c).as_str(), json(&c)["error"]["code"].as_i64()), (r#""c""#, Some(-32603)));
    let (status, rest) = proxy.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "nothing for the cancelled request: {rest:?}");
    let log = std::fs::read_to_string(&log).expect("log");
    assert!(log.contains(r#""event":"cancelled","from":"client","id":"a""#), "{log}");
    assert!(log.contains(r#""reason":"response to a cancelled request","msg":{"jsonrpc":"2.0","id":1,"result":{"late":true}}"#), "{log}");
}

#[test]
fn a_cancellation_of_nothing_in_flight_is_not_forwarded() {
    let mut proxy = Proxy::start(&[], ECHO);
    proxy.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}"#,
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_eq!(json(&proxy.recv())["result"]["method"], "ping");
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty());
}

// Finding 4: an oversized response is answered at once, not when the server exits.
#[test]
fn an_oversized_server_response_is_answered_at_once_with_the_id() {
    let server = r#"read a; printf '{"jsonrpc":"2.0","id":1,"result":{"blob":"%s"}}\n' "$(head -c 5000 /dev/zero | tr '\0' x)"; read b; echo '{"jsonrpc":"2.0","id":2,"result":{}}'; sleep 30"#;
    let mut proxy = Proxy::start(&["--max-message-size", "1000", "--grace", "100ms"], server);
    proxy.send(r#"{"jsonrpc":"2.0","id":"big\u002d1","method":"resources/read"}"#);
    let started = Instant::now();
    let line = proxy.recv();
    assert!(started.elapsed() < Duration::from_secs(5));
    let v = json(&line);
    assert_eq!(raw_id(&line), r#""big\u002d1""#, "the raw id, byte for byte");
    assert_eq!(v["error"]["code"], -32603);
    assert_eq!(v["error"]["data"]["size"], 5000 + 45);
    assert!(v["error"]["data"]["reason"].as_str().unwrap().contains("--max-message-size"));
    proxy.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    assert_eq!(raw_id(&proxy.recv()), "2", "the stream goes on");
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty(), "nothing more for \"big-1\": {rest:?}");
}

#[test]
fn an_oversized_client_request_is_answered_with_its_id_and_not_forwarded() {
    let mut proxy = Proxy::start(&["--max-message-size", "200"], ECHO);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{{"x":"{}"}}}}"#,
        "y".repeat(300)
    );
    proxy.send(&big);
    let line = proxy.recv();
    assert_eq!(
        (raw_id(&line).as_str(), json(&line)["error"]["code"].as_i64()),
        ("-0", Some(-32700))
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(json(&proxy.recv())["result"]["method"], "ping");
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty());
}

#[test]
fn policy_denies_with_the_raw_id_and_the_server_never_sees_it() {
    let mut proxy = Proxy::start(
        &["--deny-method", "resources/*", "--allow-tool", "echo", "--allow-tool", "time*"],
        ECHO,
    );
    proxy.send(r#"{"jsonrpc":"2.0","id":1e0,"method":"x"}"#); // invalid: -32600, id null
    proxy.send(r#"{"jsonrpc":"2.0","id":"r","method":"resources/read"}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"rm"}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo"}}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}"#);
    let lines: Vec<String> = (0..5).map(|_| proxy.recv()).collect();
    let find = |id: &str| {
        lines
            .iter()
            .find(|l| raw_id(l) == id)
            .map(|l| json(l))
            .unwrap_or_else(|| panic!("{id} in {lines:?}"))
    };
    assert_eq!(find("null")["error"]["code"], -32600);
    assert_eq!(find(r#""r""#)["error"]["code"], -32601);
    assert_eq!(find("12345678901234567890")["error"]["code"], -32602);
    assert_eq!(find(r#""e""#)["result"]["method"], "tools/call");
    assert_eq!(find(r#""i""#)["result"]["method"], "initialize");
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty());
}

#[test]
fn duplicate_ids_in_flight_are_kept_apart() {
    let server = r#"read a; read b; echo '{"jsonrpc":"2.0","id":2,"result":{"n":2}}'; echo '{"jsonrpc":"2.0","id":1,"result":{"n":1}}'; cat >/dev/null"#;
    let mut proxy = Proxy::start(&[], server);
    proxy.send(r#"{"jsonrpc":"2.0","id":7,"method":"a"}"#);
    proxy.send(r#"{"jsonrpc":"2.0","id":7,"method":"b"}"#);
    let (x, y) = (proxy.recv(), proxy.recv());
    assert_eq!((raw_id(&x), raw_id(&y)), ("7".into(), "7".into()));
    assert_eq!(
        (json(&x)["result"]["n"].as_i64(), json(&y)["result"]["n"].as_i64()),
        (Some(2), Some(1))
    );
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty());
}

#[test]
fn beyond_max_in_flight_requests_are_answered_not_queued() {
    let mut proxy = Proxy::start(&["--max-in-flight", "2"], "cat >/dev/null");
    for id in 1..=3 {
        proxy.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"slow"}}"#));
    }
    let line = proxy.recv();
    assert_eq!(
        (raw_id(&line).as_str(), json(&line)["error"]["code"].as_i64()),
        ("3", Some(-32000))
    );
    let (_, rest) = proxy.finish();
    let mut ids: Vec<String> = rest.iter().map(|l| raw_id(l)).collect();
    ids.sort();
    assert_eq!(ids, ["1", "2"], "the two in flight get -32603 when the server is gone");
}

#[test]
fn invalid_server_lines_are_dropped_and_server_requests_pass() {
    let server = r#"read a; echo 'garbage'; echo '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}'; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read r; echo "{\"jsonrpc\":\"2.0\",\"method\":\"got\",\"params\":$r}"; cat >/dev/null"#;
    let mut proxy = Proxy::start(&[], server);
    proxy.send(r#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"x"}}"#);
    assert_eq!(raw_id(&proxy.recv()), r#""s1""#);
    assert_eq!(raw_id(&proxy.recv()), r#""q""#);
    proxy.send(r#"{"jsonrpc":"2.0","id":"s1","result":{"content":"hi"}}"#);
    assert_eq!(json(&proxy.recv())["params"]["id"], "s1", "the response reached the server as is");
    assert_eq!(proxy.silent_for(Duration::from_millis(100)), None);
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty());
}

#[test]
fn the_log_embeds_messages_verbatim() {
    let (_dir, log) = temp_path("log.ndjson");
    let mut proxy = Proxy::start(&["--log", log.to_str().unwrap(), "--deny-tool", "x"], ECHO);
    let request = r#"{"jsonrpc":"2.0","id":1.0e0,"method":"ping"}"#; // invalid
    let good = r#"{"jsonrpc":"2.0","id":-0,"method":"tools/list","params":{"a":"\u00e9"}}"#;
    proxy.send(request);
    proxy.send(good);
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#);
    for _ in 0..3 {
        proxy.recv();
    }
    let (status, _) = proxy.finish();
    assert!(status.success());
    let text = std::fs::read_to_string(&log).expect("log");
    let records: Vec<serde_json::Value> = text.lines().map(json).collect();
    for r in &records {
        let ts = r["ts"].as_str().expect("ts");
        assert_eq!((ts.len(), &ts[10..11], &ts[26..]), (27, "T", "Z"), "{ts}");
        assert!(["c2s", "s2c", "proxy"].contains(&r["dir"].as_str().unwrap()));
    }
    assert!(text.contains(&format!(r#""dir":"c2s","msg":{good}}}"#)), "{text}");
    assert!(text.contains(r#""event":"invalid","from":"client","reason":"bad_id""#), "{text}");
    assert!(
        text.contains(
            r#""dir":"s2c","msg":{"jsonrpc":"2.0","id":-0,"result":{"method":"tools/list"}}"#
        ),
        "{text}"
    );
    assert!(text.contains(r#""event":"denied","from":"client","id":3"#), "{text}");
    assert!(text.contains(r#""event":"server_exit","code":0"#), "{text}");
}

#[test]
fn help_and_usage() {
    let bin = Path::new(env!("CARGO_BIN_EXE_rpcscan"));
    let help = Command::new(bin).args(["proxy", "--help"]).output().expect("run");
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("SERVER_CMD") && text.contains("--max-in-flight"), "{text}");
    let missing = Command::new(bin).arg("proxy").output().expect("run");
    assert_eq!(missing.status.code(), Some(2));
    let bad = Command::new(bin)
        .args(["proxy", "--", "/nonexistent/server"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn answers_are_not_held_back_by_blank_lines_or_batching() {
    let mut proxy = Proxy::start(&[], ECHO);
    // One write: two requests and a blank line, then nothing until the answers are in.
    proxy.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n  \r");
    let ids: Vec<String> = (0..2).map(|_| raw_id(&proxy.recv())).collect();
    assert_eq!(ids, ["1", "2"]);
    proxy.send("nope\n");
    assert_eq!(raw_id(&proxy.recv()), "null");
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty());
}

#[test]
fn lines_are_framed_alike_whatever_the_reads_cut() {
    // Lines shorter and longer than the proxy's reads (128 KiB; the 400 KB line is framed
    // by the decoder, which then hands back what follows), CRLF, blank lines, an oversized
    // line, written in pieces that end anywhere.
    let mut proxy = Proxy::start(&["--max-message-size", "1000000"], ECHO);
    let request = |id: u32, n: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"m{id}","params":{{"x":"{}"}}}}"#,
            "y".repeat(n)
        )
    };
    let mut stream = String::new();
    for (id, n, end) in
        [(1, 10, "\r\n\n \t\r\n"), (2, 400_000, "\n"), (3, 1_100_000, "\n"), (4, 20, "\r\n")]
    {
        stream += &request(id, n);
        stream += end;
    }
    // Then short lines again, framed after the long ones.
    for id in 5..=200 {
        stream += &request(id, 30);
        stream += "\n";
    }
    let stdin = proxy.stdin.as_mut().expect("stdin open");
    for piece in stream.as_bytes().chunks(7_919) {
        stdin.write_all(piece).expect("write to proxy");
        stdin.flush().expect("flush");
    }
    let mut answers: Vec<(u32, serde_json::Value)> = (0..200)
        .map(|_| {
            let line = proxy.recv();
            (raw_id(&line).parse().expect("an integer id"), json(&line))
        })
        .collect();
    answers.sort_by_key(|(id, _)| *id);
    let ids: Vec<u32> = answers.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, (1..=200).collect::<Vec<_>>());
    for (id, answer) in &answers {
        match id {
            3 => assert_eq!(answer["error"]["code"], -32700, "oversized: {answer}"),
            _ => assert_eq!(answer["result"]["method"], format!("m{id}"), "{answer}"),
        }
    }
    let (_, rest) = proxy.finish();
    assert!(rest.is_empty(), "{rest:?}");
}

/// `rpcscan pair` over a log: the requests it lists as never answered (`--unanswered
/// --json`), and its summary (`--json`'s last line).
fn pair_log(log: &Path) -> (Vec<serde_json::Value>, serde_json::Value) {
    let bin = env!("CARGO_BIN_EXE_rpcscan");
    let run = |args: &[&str]| {
        let out = Command::new(bin).args(args).arg(log).output().expect("run rpcscan pair");
        assert!(out.status.code().is_some(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let unanswered = run(&["pair", "--unanswered", "--json"]).lines().map(json).collect();
    let all = run(&["pair", "--json"]);
    let summary = json(all.lines().last().expect("a summary"));
    assert_eq!(summary["event"], "summary", "{all}");
    (unanswered, summary)
}

/// What a session does: send a line, or wait for a line from the proxy.
enum Step {
    Send(String),
    Recv,
}

fn send(line: &str) -> Step {
    Step::Send(line.to_owned())
}

/// A session through the proxy, and what `pair` must make of its log: `answers` is every
/// answer the client got, plus those the proxy gave the server for the client.
struct Session {
    name: &'static str,
    options: &'static [&'static str],
    server: &'static str,
    steps: Vec<Step>,
    to_server: u64,
    pairs: u64,
    orphans: u64,
    null_ids: u64,
    cancelled: u64,
}

// Issue 31: the proxy's own answers are in its log as `s2c` (or `c2s`) records, so that
// `pair` finds an answer for every request that got one.
#[test]
fn pair_finds_every_answer_of_a_proxy_session_in_its_log() {
    let big = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"x":"{}"}}}}"#,
            "y".repeat(300)
        )
    };
    let asks = r#"echo '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}'; read r; echo "{\"jsonrpc\":\"2.0\",\"method\":\"got\",\"params\":$r}"; cat >/dev/null"#;
    let sessions = [
        Session {
            name: "denied",
            options: &["--deny-tool", "echo", "--deny-method", "resources/*"],
            server: ECHO,
            steps: vec![
                send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#),
                send(r#"{"jsonrpc":"2.0","id":2,"method":"resources/read"}"#),
                send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#),
                send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#),
                Step::Recv,
                Step::Recv,
                Step::Recv,
                Step::Recv,
            ],
            to_server: 0,
            pairs: 4,
            orphans: 0,
            null_ids: 0,
            cancelled: 0,
        },
        Session {
            // What the proxy could not read is no request: its answer pairs with nothing.
            name: "invalid",
            options: &[],
            server: ECHO,
            steps: vec![
                send(r#"{"jsonrpc":"2.0","id":1e0,"method":"x"}"#),
                send(r#"{"jsonrpc":"2.0","id":"i","method":5}"#),
                send("nope"),
                send("\u{0}\u{ff}"),
                send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#),
                Step::Recv,
                Step::Recv,
                Step::Recv,
                Step::Recv,
                Step::Recv,
            ],
            to_server: 0,
            pairs: 1,
            orphans: 1,
            null_ids: 3,
            cancelled: 0,
        },
        Session {
            name: "oversized",
            options: &["--max-message-size", "200"],
            server: ECHO,
            steps: vec![
                Step::Send(big("7")),
                Step::Send("x".repeat(300)),
                send(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#),
                Step::Recv,
                Step::Recv,
                Step::Recv,
            ],
            to_server: 0,
            pairs: 1,
            orphans: 1,
            null_ids: 1,
            cancelled: 0,
        },
        Session {
            // The second request is over --max-in-flight; the first is answered when the
            // server is gone.
            name: "overloaded-and-server-gone",
            options: &["--max-in-flight", "1"],
            server: "cat >/dev/null",
            steps: vec![
                send(r#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#),
                send(r#"{"jsonrpc":"2.0","id":2,"method":"slow"}"#),
                Step::Recv,
            ],
            to_server: 0,
            pairs: 2,
            orphans: 0,
            null_ids: 0,
            cancelled: 0,
        },
        Session {
            // Never answered, and rightly: it is cancelled, not unanswered.
            name: "cancelled",
            options: &[],
            server: r#"read a; read c; echo '{"jsonrpc":"2.0","id":1,"result":{"late":true}}'; cat >/dev/null"#,
            steps: vec![
                send(
                    r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}"#,
                ),
                send(
                    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#,
                ),
            ],
            to_server: 0,
            pairs: 0,
            orphans: 0,
            null_ids: 0,
            cancelled: 1,
        },
        Session {
            // The client's answer to the server's request is too large: the proxy answers
            // the server for it.
            name: "oversized-client-response",
            options: &["--max-message-size", "300"],
            server: asks,
            steps: vec![
                Step::Recv,
                Step::Send(format!(
                    r#"{{"jsonrpc":"2.0","id":"s1","result":{{"x":"{}"}}}}"#,
                    "y".repeat(400)
                )),
                Step::Recv,
            ],
            to_server: 1,
            pairs: 1,
            orphans: 0,
            null_ids: 0,
            cancelled: 0,
        },
        Session {
            // The server's request is too large for the client: the proxy answers it, for
            // a request the log never saw.
            name: "oversized-server-request",
            options: &["--max-message-size", "300"],
            server: r#"printf '{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{"x":"%s"}}\n' "$(head -c 400 /dev/zero | tr '\0' y)"; read r; echo '{"jsonrpc":"2.0","method":"got"}'; cat >/dev/null"#,
            steps: vec![Step::Recv],
            to_server: 1,
            pairs: 0,
            orphans: 1,
            null_ids: 0,
            cancelled: 0,
        },
    ];
    for s in sessions {
        let (_dir, log) = temp_path(&format!("pair-{}.ndjson", s.name));
        let mut options = vec!["--log", log.to_str().unwrap()];
        options.extend(s.options);
        eprintln!("session {}", s.name);
        let mut proxy = Proxy::start(&options, s.server);
        let mut received = Vec::new();
        for step in &s.steps {
            match step {
                Step::Send(line) => proxy.send(line),
                Step::Recv => received.push(proxy.recv()),
            }
        }
        let (_, rest) = proxy.finish();
        received.extend(rest);
        let answers = received
            .iter()
            .filter(|l| rpcscan::parse(l.as_bytes()).is_ok_and(|m| m.kind().is_response()))
            .count() as u64
            + s.to_server;
        let (unanswered, summary) = pair_log(&log);
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let name = s.name;
        assert_eq!(unanswered, Vec::<serde_json::Value>::new(), "{name}: {text}");
        let counts = ["pairs", "orphans", "null_id_errors", "cancelled", "unanswered"]
            .map(|k| summary[k].as_u64().unwrap_or(u64::MAX));
        assert_eq!(counts, [s.pairs, s.orphans, s.null_ids, s.cancelled, 0], "{name}: {text}");
        assert_eq!(s.pairs + s.orphans + s.null_ids, answers, "{name}: {received:?}\n{text}");
    }
}

#[test]
fn the_proxys_own_answers_are_logged_as_the_client_gets_them() {
    let (_dir, log) = temp_path("own-answers.ndjson");
    let mut proxy = Proxy::start(&["--log", log.to_str().unwrap(), "--deny-tool", "x"], ECHO);
    proxy.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}"#);
    let denied = proxy.recv();
    proxy.send(r#"{"jsonrpc":"2.0","id":"i","method":5}"#);
    let invalid = proxy.recv();
    let (status, _) = proxy.finish();
    assert!(status.success());
    let text = std::fs::read_to_string(&log).expect("log");
    let lines: Vec<&str> = text.lines().collect();
    // Each record's direction, and its event or origin.
    let shapes: Vec<String> = lines
        .iter()
        .map(|l| {
            let v = json(l);
            let what = v["event"].as_str().or(v["origin"].as_str()).unwrap_or("-");
            format!("{} {what}", v["dir"].as_str().unwrap())
        })
        .collect();
    #[rustfmt::skip]
    assert_eq!(shapes, [
        "c2s -", "proxy denied", "s2c proxy",
        "c2s -", "proxy invalid", "s2c proxy",
        "proxy server_exit",
    ], "{text}");
    // The answers as the client got them, byte for byte; the invalid line as a string.
    assert!(lines[2].ends_with(&format!(r#""dir":"s2c","origin":"proxy","msg":{denied}}}"#)));
    assert!(
        lines[3]
            .ends_with(r#""dir":"c2s","msg":"{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":5}"}"#),
        "{text}"
    );
    assert!(lines[5].ends_with(&format!(r#""dir":"s2c","origin":"proxy","msg":{invalid}}}"#)));
}

#[test]
fn long_answers_come_back_byte_for_byte() {
    // A server that answers each request with its params as the result, the id first or
    // last, some lines CRLF-terminated, and passes `note` on as a notification (then answers it): the long
    // parts of its lines are written from the proxy's read buffer, the ids spliced between.
    const MIRROR: &str = r#"exec sed -u -n -e 's/^{"jsonrpc":"2.0","id":\([0-9]*\),"method":"first","params":\(.*\)}$/{"jsonrpc":"2.0","id":\1,"result":\2}/p' -e 's/^{"jsonrpc":"2.0","id":\([0-9]*\),"method":"last","params":\(.*\)}$/{"jsonrpc":"2.0","result":\2,"id":\1}/p' -e 's/^{"jsonrpc":"2.0","id":\([0-9]*\),"method":"crlf","params":\(.*\)}$/{"jsonrpc":"2.0","result":\2 ,"id" : \1}\r/p' -e 's/^{"jsonrpc":"2.0","id":\([0-9]*\),"method":"note","params":\(.*\)}$/{"jsonrpc":"2.0","method":"note","params":\2}\n{"jsonrpc":"2.0","id":\1,"result":{}}/p'"#;
    let mut input = String::new();
    let mut want = String::new();
    for i in 0..700usize {
        let size = [5, 1_000, 1_023, 1_024, 1_100, 3_000, 40_000][i % 7] + i % 13;
        let params = format!(r#"{{"k":"{}","n":{i}}}"#, "ab\\\"c".repeat(size / 5));
        // Ids given back byte for byte: a string, an integer past 2^53, an escaped string.
        let id = match i % 3 {
            0 => format!(r#""s-{i}""#),
            1 => format!("{}", 9_007_199_254_740_993_u64 + i as u64),
            _ => format!(r#""é-{i}""#),
        };
        let method = ["first", "last", "crlf", "note"][i % 4];
        input += &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        input += "\n";
        want += &match method {
            "first" => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{params}}}"#),
            "last" => format!(r#"{{"jsonrpc":"2.0","result":{params},"id":{id}}}"#),
            "crlf" => format!(r#"{{"jsonrpc":"2.0","result":{params} ,"id" : {id}}}"#),
            _ => format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":{params}}}\n{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"
            ),
        };
        want += "\n";
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpcscan"))
        .args(["proxy", "--", "sh", "-c", MIRROR])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rpcscan proxy");
    let mut stdin = child.stdin.take().expect("proxy stdin");
    let writer = std::thread::spawn(move || {
        for piece in input.as_bytes().chunks(10_007) {
            stdin.write_all(piece).expect("write to proxy");
        }
    });
    let mut got = String::new();
    child.stdout.take().expect("proxy stdout").read_to_string(&mut got).expect("read the proxy");
    writer.join().expect("the writer");
    assert!(child.wait().expect("the proxy exits").success());
    for (n, (got, want)) in got.split('\n').zip(want.split('\n')).enumerate() {
        assert!(
            got == want,
            "line {n}: {:?} against {:?}",
            &got[..got.len().min(300)],
            &want[..want.len().min(300)]
        );
    }
    assert_eq!(got.len(), want.len());
    assert!(got == want);
}

/// The size of the pipe `file` is an end of (Linux's `F_GETPIPE_SZ`).
#[cfg(target_os = "linux")]
fn pipe_size(file: &impl std::os::fd::AsFd) -> i32 {
    nix::fcntl::fcntl(file.as_fd(), nix::fcntl::FcntlArg::F_GETPIPE_SZ).expect("a pipe")
}

// The proxy grows the four pipes it reads and writes to 256 KiB (or to what the system
// allows an unprivileged process, `pipe-max-size`): fewer blocked writers woken again.
#[cfg(target_os = "linux")]
#[test]
fn the_pipes_on_both_sides_hold_two_reads() {
    let max: i32 = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20);
    let want = (256 * 1024).min(max);
    let server = format!(
        r#"echo "{{\"jsonrpc\":\"2.0\",\"method\":\"pid\",\"params\":{{\"pid\":$$}}}}"; {ECHO}"#
    );
    let mut proxy = Proxy::start(&[], &server);
    let pid = server_pid(&proxy);
    proxy.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_eq!(raw_id(&proxy.recv()), "1");
    // The client's side: the pipe this test writes the proxy's standard input through.
    assert!(pipe_size(proxy.stdin.as_ref().expect("stdin")) >= want);
    // The server's side: its standard input and output, opened again through /proc.
    for fd in [0, 1] {
        let pipe = std::fs::OpenOptions::new()
            .read(fd == 1)
            .write(fd == 0)
            .open(format!("/proc/{pid}/fd/{fd}"))
            .expect("the server's pipe");
        assert!(pipe_size(&pipe) >= want, "server fd {fd}: {}", pipe_size(&pipe));
    }
    let (status, rest) = proxy.finish();
    assert!(status.success() && rest.is_empty(), "{status:?} {rest:?}");
}
