//! `rpcscan pair`, run for real: the summary, `--json`, `--unanswered` and its exit codes,
//! framed streams, and a multi-block log checked against the oracle's pairing reference.

use std::io::Write;
use std::path::PathBuf;

use rpcscan_oracle::pair::{pair as reference, Entry, PairEvent};
use rpcscan_oracle::pairlog;

mod common;

/// Exit code and stdout of `rpcscan ARGS` with `stdin` piped in.
fn run(args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let (code, stdout, _) = common::run(args, stdin);
    (code, String::from_utf8(stdout).unwrap())
}

fn file(name: &str, bytes: &[u8]) -> PathBuf {
    common::file("rpcscan-pair-tests", name, bytes)
}

const LOG: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":4,"method":"slow"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
    "\n",
    r#"{"not json"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
    "\n",
);

#[test]
fn summary() {
    let (code, out) = run(&["pair"], LOG.as_bytes());
    assert_eq!(code, Some(0));
    #[rustfmt::skip]
    let expected: &[(&str, &str)] = &[
        ("pairs", "2"),
        ("unanswered", "2"),
        ("orphans", "1  first lines 5"),
        ("duplicate ids", "1  first lines 7"),
        ("cancelled", "1  first lines 9"),
        ("null-id errors", "1  first lines 8"),
        ("stray notes", "0"),
    ];
    for (name, value) in expected {
        let line = out.lines().find(|l| l.starts_with(name)).unwrap();
        assert!(line[name.len()..].trim_start().starts_with(value), "{line}");
    }
    assert!(out.contains("\ntools/call "), "{out}");
    assert!(out.contains("-32602×1"), "{out}");
    let unanswered = out.lines().skip_while(|l| !l.starts_with("unanswered method"));
    let ping = unanswered.clone().find(|l| l.starts_with("ping")).unwrap();
    assert!(ping.ends_with("2  2, 7"), "{ping}");
}

#[test]
fn json_objects() {
    let (code, out) = run(&["pair", "--json"], LOG.as_bytes());
    assert_eq!(code, Some(0));
    let objects: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let events: Vec<&str> = objects.iter().map(|o| o["event"].as_str().unwrap()).collect();
    #[rustfmt::skip]
    assert_eq!(events, ["pair", "orphan", "duplicate", "null_id_error", "pair", "unanswered", "unanswered", "cancelled", "summary"]);
    let first = &objects[0];
    #[rustfmt::skip]
    let fields: &[(&str, serde_json::Value)] = &[
        ("request_line", 1.into()),
        ("request_offset", 0.into()),
        ("response_line", 4.into()),
        ("id", 1.into()),
        ("method", "tools/call".into()),
        ("tool", "echo".into()),
        ("outcome", "error".into()),
        ("error_code", (-32602).into()),
        ("latency_ms", serde_json::Value::Null),
        ("progress", 1.into()),
    ];
    for (name, value) in fields {
        assert_eq!(&first[*name], value, "{name}");
    }
    let offset = LOG.find(r#"{"jsonrpc":"2.0","id":1,"error""#).unwrap();
    assert_eq!(first["response_offset"], offset);
    assert_eq!(objects[5]["id"], "1"); // the string id, raw
    assert_eq!(objects[8]["pairs"], 2);
}

#[test]
fn unanswered_only() {
    #[rustfmt::skip]
    let cases: &[(&[&str], &str, Option<i32>, &str)] = &[
        (&["pair", "--unanswered"], LOG, Some(0), "2\t102\t\"1\"\tping\t\n7\t384\t3\tping\t\n"),
        (&["pair", "--unanswered"], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", Some(1), ""),
        (&["pair", "--unanswered", "--max-in-flight", "1"], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n", Some(0), "1\t0\t1\ta\t\n"),
        (&["pair", "--unanswered", "--timeout", "1s"], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n", Some(0), "1\t0\t1\ta\t\n"),
        (&["pair", "--unanswered"], "", Some(1), ""),
    ];
    for (args, input, code, expected) in cases {
        assert_eq!(run(args, input.as_bytes()), (*code, expected.to_string()), "{args:?} {input}");
    }
    let (code, _) = run(&["pair", "--timeout", "soon"], b"");
    assert_eq!(code, Some(2));
}

#[test]
fn framed_streams_pair_too() {
    let mut framed = Vec::new();
    for line in LOG.lines() {
        write!(framed, "Content-Length: {}\r\n\r\n{line}", line.len()).unwrap();
    }
    let (code, out) = run(&["pair", "--json"], &framed);
    assert_eq!(code, Some(0));
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["event"], "pair");
    assert_eq!(first["request_line"], serde_json::Value::Null); // no lines in this framing
    assert_eq!(first["progress"], 1);
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!((&summary["pairs"], &summary["orphans"]), (&2.into(), &1.into()));
}

/// A log of several blocks, mapped and piped, with one and several threads: the events
/// are the reference's, in the reference's order.
#[test]
fn big_log_matches_the_reference() {
    let mut log: Vec<Entry> = (0..8).flat_map(|seed| pairlog::log(seed, 5000)).collect();
    let mut ndjson = Vec::new();
    for entry in &mut log {
        // NDJSON says neither which way nor when.
        entry.direction = None;
        entry.time_ms = None;
        ndjson.extend_from_slice(&entry.bytes);
        ndjson.push(b'\n');
    }
    assert!(ndjson.len() > 2 << 20, "several blocks: {}", ndjson.len());
    let expected: Vec<String> = reference(&log, 1000, None)
        .iter()
        .map(|e| match e {
            PairEvent::Paired { request, response, progress, .. } => {
                format!("pair {} {} {progress}", request + 1, response + 1)
            }
            PairEvent::Orphan(at) => format!("orphan {}", at + 1),
            PairEvent::Duplicate { at, .. } => format!("duplicate {}", at + 1),
            PairEvent::NullIdError(at) => format!("null_id_error {}", at + 1),
            PairEvent::Unanswered { at, .. } => format!("unanswered {}", at + 1),
            PairEvent::Cancelled { at, .. } => format!("cancelled {}", at + 1),
            PairEvent::StrayProgress(at) => format!("stray_progress {}", at + 1),
            PairEvent::StrayCancel(at) => format!("stray_cancel {}", at + 1),
        })
        .collect();
    let path = file("big.ndjson", &ndjson);
    let path = path.to_str().unwrap();
    for args in [
        &["pair", "--json", "--max-in-flight", "1000", path][..],
        &["pair", "--json", "--max-in-flight", "1000", "-j", "1", path],
        &["pair", "--json", "--max-in-flight", "1000", "--no-mmap", path],
    ] {
        let (code, out) = run(args, b"");
        assert_eq!(code, Some(0));
        let got: Vec<String> = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|o| o["event"] != "summary")
            .map(|o| {
                let event = o["event"].as_str().unwrap();
                let line = match event {
                    "orphan" | "null_id_error" => &o["response_line"],
                    _ => &o["request_line"],
                };
                match event {
                    "pair" => format!("pair {line} {} {}", o["response_line"], o["progress"]),
                    _ => format!("{event} {line}"),
                }
            })
            .collect();
        assert_eq!(got.len(), expected.len(), "{args:?}");
        assert!(
            got == expected,
            "{args:?}: first difference at {:?}",
            got.iter().zip(&expected).position(|(a, b)| a != b)
        );
    }
}

/// `tail -f server.log | rpcscan pair`: the pipe stays open, Ctrl-C (SIGINT) ends the
/// input; the report is printed, and the exit status is 130. Returns stdout.
fn interrupted(args: &[&str]) -> String {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;

    let mut child = Command::new(common::BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Request 1, request "1", progress, the answer to 1; then nothing more, pipe open.
    let mut stdin = child.stdin.take().unwrap();
    let head: Vec<&str> = LOG.lines().take(4).collect();
    stdin.write_all(format!("{}\n", head.join("\n")).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let (lines, inbox) = mpsc::channel();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let reader = std::thread::spawn(move || {
        for line in stdout.lines() {
            let _ = lines.send(line.unwrap());
        }
    });
    // Interrupt once the handler is in place (its thread is started after it), and with
    // --json once the pair is out (the table prints nothing before the end).
    handler_ready(child.id(), Duration::from_secs(30));
    if args.contains(&"--json") {
        let first = inbox.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(first.contains(r#""event":"pair""#), "{first}");
    }
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), Signal::SIGINT).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("rpcscan {args:?} did not end at Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    inbox.try_iter().collect::<Vec<_>>().join("\n")
}

/// Waits until process `pid` runs its `ctrl-c` thread (Linux: its threads' names in
/// /proc; elsewhere a pause).
fn handler_ready(pid: u32, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    if !cfg!(target_os = "linux") {
        std::thread::sleep(std::time::Duration::from_millis(500));
        return;
    }
    let tasks = PathBuf::from(format!("/proc/{pid}/task"));
    while std::time::Instant::now() < deadline {
        let names = std::fs::read_dir(&tasks).into_iter().flatten().flatten();
        if names
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .any(|n| n.trim() == "ctrl-c")
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no ctrl-c thread in {pid}");
}

#[test]
fn ctrl_c_on_an_open_pipe_prints_the_report() {
    // The table: whatever was read by then (the input may still be on its way).
    let out = interrupted(&["pair"]);
    for name in ["pairs", "unanswered", "orphans"] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name}: {out}");
    }
    let out = interrupted(&["pair", "--json"]);
    let summary = out.lines().last().unwrap_or_default();
    assert!(summary.contains(r#""event":"summary","pairs":1,"unanswered":1,"#), "{out}");
    assert!(out.contains(r#""event":"unanswered""#), "{out}");
}

/// The summary's `directions` and `undirected` count the labels of the messages whose
/// direction the matcher reads (requests, responses, cancels, progress), never an invalid
/// line's or another notification's, whatever `--timeout` says and however the input is
/// read: issue 31's log (labels A and B on valid messages, C only on an invalid line) said
/// `null` without `--timeout` and `["A","C"]` with it.
#[test]
fn directions_do_not_depend_on_timeout() {
    let fmt = r"^(?<ts>\S+) (?<dir>\S+) (?<msg>.*)$";
    #[rustfmt::skip]
    let cases: &[(&str, serde_json::Value, u64)] = &[
        // Only plain notifications and an invalid line carry labels: fed to the matcher
        // with --timeout (for their time), they still take no side.
        (concat!(
            "2026-01-01T00:00:00Z A {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n",
            "2026-01-01T00:00:01Z C {\"not json\n",
            "2026-01-01T00:00:02Z B {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n",
        ), serde_json::Value::Null, 0),
        // The invalid line comes between A and B: it must not take B's place.
        (concat!(
            "2026-01-01T00:00:00Z A {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            "2026-01-01T00:00:01Z C [\n",
            "2026-01-01T00:00:02Z B {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
            "2026-01-01T00:00:03Z D {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
            "2026-01-01T00:00:04Z D {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
        ), serde_json::json!(["A", "B"]), 1),
        // Invalid lines alone: no direction at all.
        ("2026-01-01T00:00:00Z C [\n", serde_json::Value::Null, 0),
    ];
    for (i, (log, directions, undirected)) in cases.iter().enumerate() {
        let path = file(&format!("directions-{i}.log"), log.as_bytes());
        let path = path.to_str().unwrap();
        for timeout in [&[][..], &["--timeout", "1h"]] {
            for (stdin, operand) in [(log.as_bytes(), "-"), (&b""[..], path)] {
                let mut args = vec!["pair", "--json", "--line-format", fmt, operand];
                args.extend_from_slice(timeout);
                let (_, out) = run(&args, stdin);
                let summary: serde_json::Value =
                    serde_json::from_str(out.lines().last().unwrap()).unwrap();
                let what = format!("case {i}, {timeout:?}, {operand}");
                assert_eq!(&summary["directions"], directions, "{what}");
                assert_eq!(summary["undirected"], *undirected, "{what}");
            }
        }
    }
}

/// An invalid first line's label takes no side, with and without `--timeout` (which feeds
/// invalid lines for their time), and a duplicate `tools/call` names its tool.
#[test]
fn an_invalid_first_line_takes_no_side() {
    let log = concat!(
        "2025-01-01T00:00:00Z junk {oops\n",
        "2025-01-01T00:00:01Z c2s {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n",
        "2025-01-01T00:00:01Z c2s {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n",
        "2025-01-01T00:00:02Z s2c {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
    );
    let format = r"^(?<ts>\S+) (?<dir>\S+) (?<msg>.*)$";
    for timeout in [&[][..], &["--timeout", "1h"]] {
        let args: Vec<&str> =
            ["pair", "--json", "--line-format", format].iter().chain(timeout).copied().collect();
        let (code, out) = run(&args, log.as_bytes());
        assert_eq!(code, Some(0), "{timeout:?}");
        let objects: Vec<serde_json::Value> =
            out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let summary = objects.last().unwrap();
        assert_eq!(summary["directions"], serde_json::json!(["c2s", "s2c"]), "{timeout:?}");
        assert_eq!(summary["undirected"], 0, "{timeout:?}");
        let duplicate = objects.iter().find(|o| o["event"] == "duplicate").unwrap();
        assert_eq!(duplicate["tool"], "a", "{timeout:?}");
        assert_eq!(summary["pairs"], 1, "{timeout:?}");
    }
}

/// A proxy or gateway log's `request_id` names the request an answer answers: an HTTP
/// error answer is bound to its POST even when its body says `"id": null` (issue 31). Only
/// those logs' records carry it; elsewhere the message's own id decides.
#[test]
fn a_records_request_id_pairs_the_answer_it_holds() {
    const REQUEST: &str = r#"{"ts":"2026-01-01T00:00:00Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":6,"method":"ping"}}"#;
    const NULL_ID: &str =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#;
    #[rustfmt::skip]
    let cases: &[(&str, &[&str], [u64; 4])] = &[
        // pairs, unanswered, orphans, null-id errors
        ("linked", &[REQUEST, &format!(r#"{{"ts":"2026-01-01T00:00:01Z","dir":"s2c","status":400,"request_id":6,"msg":{NULL_ID}}}"#)], [1, 0, 0, 0]),
        ("not linked", &[REQUEST, &format!(r#"{{"ts":"2026-01-01T00:00:01Z","dir":"s2c","status":400,"msg":{NULL_ID}}}"#)], [0, 1, 0, 1]),
        // The link wins over the body's own id.
        ("linked over another id", &[REQUEST, r#"{"ts":"2026-01-01T00:00:01Z","dir":"s2c","request_id":6,"msg":{"jsonrpc":"2.0","id":7,"result":{}}}"#], [1, 0, 0, 0]),
        ("linked to nothing", &[REQUEST, r#"{"ts":"2026-01-01T00:00:01Z","dir":"s2c","request_id":8,"msg":{"jsonrpc":"2.0","id":6,"result":{}}}"#], [0, 1, 1, 0]),
        // A request's own `request_id` member means nothing.
        ("on a request", &[r#"{"ts":"2026-01-01T00:00:00Z","dir":"c2s","request_id":5,"msg":{"jsonrpc":"2.0","id":6,"method":"ping"}}"#, r#"{"ts":"2026-01-01T00:00:01Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":6,"result":{}}}"#], [1, 0, 0, 0]),
    ];
    for (name, lines, expected) in cases {
        let log = format!("{}\n", lines.join("\n"));
        let (_, out) = run(&["pair", "--json"], log.as_bytes());
        let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        let got = ["pairs", "unanswered", "orphans", "null_id_errors"]
            .map(|k| summary[k].as_u64().unwrap_or(u64::MAX));
        assert_eq!(&got, expected, "{name}: {out}");
    }
    // `--json-field` logs name no link: the member is just another member.
    let log = format!(
        "{REQUEST}\n{}\n",
        r#"{"ts":"2026-01-01T00:00:01Z","dir":"s2c","request_id":6,"msg":{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}}"#
    );
    let args = ["pair", "--json", "--json-field", "msg", "--dir-field", "dir"];
    let (_, out) = run(&args, log.as_bytes());
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!((summary["pairs"].as_u64(), summary["null_id_errors"].as_u64()), (Some(0), Some(1)));
}

/// A gateway log carries many MCP sessions, each numbering its requests on its own: the
/// same id in two sessions is no duplicate, and an answer pairs only within its session
/// (the official SDK clients of the interop suite both count from 0 through one gateway).
#[test]
fn a_gateway_logs_sessions_are_id_spaces_of_their_own() {
    let rec = |ts: &str, dir: &str, session: &str, msg: &str| {
        format!(
            r#"{{"ts":"2026-01-01T00:00:0{ts}Z","dir":"{dir}","session":"{session}","msg":{msg}}}"#
        )
    };
    let log = [
        rec(
            "0",
            "c2s",
            "A",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#,
        ),
        rec(
            "1",
            "c2s",
            "B",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fast"}}"#,
        ),
        rec("2", "s2c", "B", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        rec(
            "3",
            "c2s",
            "B",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        ),
        rec("4", "s2c", "A", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
    ]
    .join("\n");
    let (code, out) = run(&["pair", "--json"], format!("{log}\n").as_bytes());
    assert_eq!(code, Some(0));
    let objects: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let pairs: Vec<(u64, u64, &str)> = objects
        .iter()
        .filter(|o| o["event"] == "pair")
        .map(|o| {
            let tool = o["tool"].as_str().unwrap();
            (o["request_line"].as_u64().unwrap(), o["response_line"].as_u64().unwrap(), tool)
        })
        .collect();
    assert_eq!(pairs, [(2, 3, "fast"), (1, 5, "slow")]);
    let summary = objects.last().unwrap();
    assert_eq!(summary["duplicates"], 0);
    assert_eq!(summary["unanswered"], 0);
    // B's cancel names B's request, already answered: a stray cancel, A's stays answered.
    assert_eq!(summary["cancelled"], 0);
}
