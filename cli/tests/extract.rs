//! Messages inside log lines, run for real: `--line-format`, `--json-field` (objects and
//! strings), lines that hold no message, non-UTF-8 prefixes, `rpcscan proxy --log` files
//! recognised without options, offsets into the original file, `filter` printing the
//! original line, and `rpcscan pair` on wrapped logs (timestamps, directions) checked
//! against the oracle's pairing reference.

use std::path::PathBuf;

use rpcscan_oracle::pair::{pair as reference, Entry, PairEvent};
use rpcscan_oracle::pairlog::{self, Wrapper};
use serde_json::Value;

mod common;

use common::run;

/// `rpcscan ARGS` whose stdout is JSON lines, with exit code 0.
fn objects(args: &[&str], stdin: &[u8]) -> Vec<Value> {
    let (code, out, err) = run(args, stdin);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn file(name: &str, bytes: &[u8]) -> PathBuf {
    common::file("rpcscan-extract-tests", name, bytes)
}

/// The issue's example lines.
const STDIO: &str = concat!(
    r#"2025-05-14T22:53:22.480Z [STDIN] {"method":"initialize","params":{},"jsonrpc":"2.0","id":0}"#,
    "\n",
    r#"2025-05-14T22:53:23.101Z [STDOUT] {"jsonrpc":"2.0","id":0,"result":{}}"#,
    "\n",
);
const STDIO_FORMAT: &str = r"^(?<ts>\S+) \[(?<dir>STDIN|STDOUT)\] (?<msg>.*)$";
const HOST: &str = concat!(
    r#"2024-11-28T10:00:00.000Z [weather] [info] Message from client: {"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    "\n",
);
const HOST_FORMAT: &str =
    r"^(?<ts>\S+) \[[^\]]*\] \[[^\]]*\] Message from (?<dir>client|server): (?<msg>.*)$";
const RECORD: &str = concat!(
    r#"{"ts":"2026-11-29T10:00:00.120Z","dir":"c2s","session":"a1","msg":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}}"#,
    "\n",
);
const PAYLOAD: &str = concat!(
    r#"{"time":1764410400.12,"direction":"out","payload":"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"}"#,
    "\n",
);

/// Kind, line and offset of a message.
type Seen = (String, u64, u64);

/// Kind, line and offset of every message `classify --json` finds.
fn classified(args: &[&str], input: &str) -> Vec<Seen> {
    let mut all = vec!["classify", "--json"];
    all.extend_from_slice(args);
    objects(&all, input.as_bytes())
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_owned(),
                o["line"].as_u64().unwrap(),
                o["offset"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn each_example_form() {
    let at = |text: &str, needle: &str| text.find(needle).unwrap() as u64;
    let kind = |k: &str| k.to_owned();
    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, &str, Vec<Seen>)> = vec![
        (vec!["--line-format", STDIO_FORMAT], STDIO, vec![
            (kind("request"), 1, at(STDIO, r#"{"method""#)),
            (kind("result"), 2, at(STDIO, r#"{"jsonrpc":"2.0","id":0,"result""#)),
        ]),
        (vec!["--line-format", HOST_FORMAT], HOST, vec![(kind("request"), 1, at(HOST, "{"))]),
        (vec!["--json-field", "msg"], RECORD, vec![(kind("request"), 1, at(RECORD, r#"{"jsonrpc""#))]),
        // A message held in a string: the offset is its opening quote's.
        (vec!["--json-field", "payload"], PAYLOAD, vec![(kind("result"), 1, at(PAYLOAD, r#""{\"jsonrpc"#))]),
    ];
    for (args, input, expected) in cases {
        assert_eq!(classified(&args, input), expected, "{args:?}");
    }
}

#[test]
fn lines_without_a_message_are_counted_and_skipped() {
    let log = format!(
        "# started\n{STDIO}2025-05-14T22:53:23.200Z [STDERR] {{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n\n   \nnot even close\n"
    );
    let stats = objects(&["stats", "--json", "--line-format", STDIO_FORMAT], log.as_bytes());
    assert_eq!(stats[0]["messages"], 2);
    assert_eq!(stats[0]["skipped_lines"]["no_match"], 3); // blank lines are no records
    assert_eq!(stats[0]["kinds"]["invalid"], 0);
    let (code, table, _) = run(&["stats", "--line-format", STDIO_FORMAT], log.as_bytes());
    assert_eq!(code, Some(0));
    let table = String::from_utf8(table).unwrap();
    assert!(table.contains("skipped lines   3 (no match 3"), "{table}");
    // Classified lines keep their line numbers.
    let kinds = classified(&["--line-format", STDIO_FORMAT], &log);
    assert_eq!((kinds[0].1, kinds[1].1), (2, 3));
    // Bare NDJSON counts nothing skipped.
    let bare = objects(&["stats", "--json"], b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
    assert_eq!(bare[0]["skipped_lines"]["no_match"], 0);
}

#[test]
fn a_message_field_that_is_a_string_with_escapes() {
    let record = concat!(
        r#"{"msg":"{\"jsonrpc\":\"2.0\",\"id\":\"\\u00e9\",\"method\":\"t\\u006fols\/list\"}"}"#,
        "\n",
        r#"{"msg":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\u00e9\u0000\"}"}"#,
        "\n",
        r#"{"msg":"not json at all"}"#,
        "\n",
    );
    let out = objects(&["classify", "--json", "--json-field", "msg"], record.as_bytes());
    assert_eq!(out[0]["kind"], "request");
    assert_eq!(out[0]["id"], "é"); // `"\u00e9"` decodes to é
    assert_eq!(out[0]["method"], "tools/list");
    // The outer string's \u0000 decodes to a raw control character inside the message's
    // string: invalid JSON, reported (not skipped).
    assert_eq!((out[1]["kind"].as_str(), out[1]["code"].as_i64()), (Some("invalid"), Some(-32700)));
    assert_eq!(out[2]["kind"], "invalid");
    // Nested paths, and `filter` prints the original record.
    let nested = r#"{"event":{"payload":"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}"}}"#;
    let (code, printed, _) = run(
        &["filter", "--kind", "result", "--json-field", "event.payload"],
        format!("{nested}\n").as_bytes(),
    );
    assert_eq!((code, printed), (Some(0), format!("{nested}\n").into_bytes()));
}

#[test]
fn a_missing_field_is_counted_and_skipped() {
    let log = concat!(
        r#"{"ts":"2026-11-29T10:00:00Z","level":"info"}"#,
        "\n",
        r#"{"msg":null}"#,
        "\n",
        r#"{"msg":{"jsonrpc":"2.0","method":"a"},"msg":{"jsonrpc":"2.0","method":"b"}}"#,
        "\n",
        r#"["not","an","object"]"#,
        "\n",
        r#"{"msg":{"jsonrpc":"2.0","method":"ok"}}"#,
        "\n",
    );
    let stats = objects(&["stats", "--json", "--json-field", "msg"], log.as_bytes());
    assert_eq!(stats[0]["messages"], 1);
    // A duplicated member is no message (which one would count?), an array no record.
    let skipped = &stats[0]["skipped_lines"];
    assert_eq!((&skipped["no_message_field"], &skipped["no_match"]), (&3.into(), &1.into()));
    let (code, _, _) = run(&["filter", "--json-field", "msg", "--method", "nope"], log.as_bytes());
    assert_eq!(code, Some(1));
}

#[test]
fn non_utf8_bytes_in_the_prefix() {
    let mut log = b"\xff\xfe2025 [STDIN] ".to_vec();
    log.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    log.extend_from_slice(b"\n\xc3( no message here\n");
    let path = file("latin.log", &log);
    let format = r"(?-u)^(?<ts>\S+) \[(?<dir>\w+)\] (?<msg>\{.*)";
    for extra in [&[][..], &["--no-mmap"]] {
        let mut args = vec!["filter", "--line-format", format];
        args.extend_from_slice(extra);
        args.push(path.to_str().unwrap());
        let (code, out, _) = run(&args, b"");
        assert_eq!(code, Some(0));
        assert_eq!(
            out,
            log.split(|&b| b == b'\n')
                .next()
                .unwrap()
                .iter()
                .chain(b"\n")
                .copied()
                .collect::<Vec<u8>>()
        );
    }
    // Without `(?-u)`, `\S` is a Unicode class: the line does not match.
    let stats = objects(&["stats", "--json", "--line-format", r"^(?<ts>\S+) (?<msg>\{.*)"], &log);
    assert_eq!(stats[0]["messages"], 0);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["stats", "--line-format", r"^\S+ (\{.*)"][..],
        &["stats", "--line-format", "(?<msg>"],
        &["stats", "--json-field", "a..b"],
        &["stats", "--ts-field", "ts"],
        &["stats", "--json-field", "msg", "--line-format", "(?<msg>.*)"],
    ] {
        let (code, _, err) = run(args, b"");
        assert_eq!(code, Some(2), "{args:?}: {err}");
    }
}

/// A `rpcscan proxy --log` file, as the proxy writes it.
const PROXY_LOG: &str = concat!(
    r#"{"ts":"2026-12-01T15:24:31.123456Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":"a","method":"tools/list"}}"#,
    "\n",
    r#"{"ts":"2026-12-01T15:24:31.130001Z","dir":"proxy","event":"denied","from":"client","id":7,"reason":"no","msg":{"jsonrpc": "2.0", "id": 7, "error": {"code":-32601,"message":"x"}}}"#,
    "\n",
    r#"{"ts":"2026-12-01T15:24:31.124012Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}}"#,
    "\n",
    r#"{"ts":"2026-12-01T15:24:32.000000Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}}"#,
    "\n",
    r#"{"ts":"2026-12-01T15:24:32.250000Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":0,"result":{}}}"#,
    "\n",
);

#[test]
fn proxy_logs_are_recognised_without_options() {
    let path = file("proxy.log", PROXY_LOG.as_bytes());
    let path = path.to_str().unwrap();
    for args in [
        &["stats", "--json", path][..],
        &["stats", "--json", "--no-mmap", path],
        &["stats", "--json"],
    ] {
        let stats = objects(args, PROXY_LOG.as_bytes());
        assert_eq!(stats[0]["messages"], 4, "{args:?}");
        assert_eq!(stats[0]["skipped_lines"]["proxy_records"], 1, "{args:?}");
        assert_eq!(stats[0]["kinds"]["result"], 2, "{args:?}");
    }
    let events = objects(&["pair", "--json", path], b"");
    let pairs: Vec<(&str, f64)> = events
        .iter()
        .filter(|o| o["event"] == "pair")
        .map(|o| (o["method"].as_str().unwrap(), o["latency_ms"].as_f64().unwrap()))
        .collect();
    assert_eq!(pairs, [("tools/list", 0.556), ("sampling/createMessage", 250.0)]);
    let summary = events.last().unwrap();
    assert_eq!(summary["directions"], serde_json::json!(["c2s", "s2c"]));
    // Offsets point into the file: at the embedded message.
    let first = &events[0];
    assert_eq!(
        first["request_offset"],
        PROXY_LOG.find(r#"{"jsonrpc":"2.0","id":"a","method""#).unwrap()
    );
    // A log may start with one of the proxy's own records.
    let signal = format!(
        "{}\n{PROXY_LOG}",
        r#"{"ts":"2026-12-01T15:24:30.000000Z","dir":"proxy","event":"signal","reason":"SIGTERM"}"#
    );
    let stats = objects(&["stats", "--json"], signal.as_bytes());
    assert_eq!(stats[0]["messages"], 4);
    assert_eq!(stats[0]["skipped_lines"]["proxy_records"], 2);
    // Bare NDJSON is not mistaken for one.
    let bare = objects(&["stats", "--json"], b"{\"jsonrpc\":\"2.0\",\"method\":\"ts\"}\n");
    assert_eq!(bare[0]["messages"], 1);
}

#[test]
fn pair_latencies_and_timeouts_from_timestamps() {
    let log = concat!(
        r#"{"time":1764410400.0,"direction":"in","payload":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}"}"#,
        "\n",
        r#"{"time":1764410400120,"direction":"out","payload":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}"#,
        "\n",
        r#"{"time":"2025-11-29T10:00:01Z","direction":"in","payload":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"}"#,
        "\n",
        r#"{"time":1764410405,"direction":"in","payload":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"}"#,
        "\n",
        r#"{"time":1764410405.5,"direction":"out","payload":"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}"}"#,
        "\n",
    );
    let args = ["--json-field", "payload", "--ts-field", "time", "--dir-field", "direction"];
    let mut all = vec!["pair", "--json", "--timeout", "2s"];
    all.extend_from_slice(&args);
    let events = objects(&all, log.as_bytes());
    let got: Vec<(String, Value)> = events
        .iter()
        .filter(|o| o["event"] != "summary")
        .map(|o| (o["event"].as_str().unwrap().to_owned(), o["latency_ms"].clone()))
        .collect();
    // Request 2 (in 2025: the ISO time is a year before) times out when request 3 comes.
    let expected =
        [("pair", Value::from(120.0)), ("unanswered", Value::Null), ("pair", Value::from(500.0))];
    assert_eq!(got.len(), expected.len(), "{events:?}");
    for ((event, latency), (want_event, want_latency)) in got.iter().zip(expected) {
        assert_eq!((event.as_str(), latency.as_f64()), (want_event, want_latency.as_f64()));
    }
    assert_eq!(events[1]["ending"], "timed_out");
    let summary = events.last().unwrap();
    assert_eq!(summary["directions"], serde_json::json!(["in", "out"]));
    assert_eq!(summary["timed_out"], 1);
    // The table shows percentiles and the labels.
    let mut all = vec!["pair"];
    all.extend_from_slice(&args);
    let (code, table, _) = run(&all, log.as_bytes());
    assert_eq!(code, Some(0));
    let table = String::from_utf8(table).unwrap();
    assert!(table.contains("directions       in / out"), "{table}");
    assert!(table.contains("p99") && table.contains("120.0ms"), "{table}");
}

/// One event of the reference or of `rpcscan pair --json`, as text: its kind, its line
/// (the request's, or the response's for orphans and null-id errors), and for pairs the
/// response line, progress count and latency.
fn expected_events(log: &[Entry], lines: &[u64], timeout_ms: Option<u64>) -> Vec<String> {
    let line = |i: &usize| lines[*i];
    reference(log, 1000, timeout_ms)
        .iter()
        .map(|e| match e {
            PairEvent::Paired { request, response, progress, latency_ms, .. } => {
                let latency = latency_ms.map_or("null".to_owned(), |ms| format!("{ms}"));
                format!("pair {} {} {progress} {latency}", line(request), line(response))
            }
            PairEvent::Orphan(at) => format!("orphan {}", line(at)),
            PairEvent::Duplicate { at, .. } => format!("duplicate {}", line(at)),
            PairEvent::NullIdError(at) => format!("null_id_error {}", line(at)),
            PairEvent::Unanswered { at, ending } => format!("unanswered {} {ending}", line(at)),
            PairEvent::Cancelled { at, ending } => format!("cancelled {} {ending}", line(at)),
            PairEvent::StrayProgress(at) => format!("stray_progress {}", line(at)),
            PairEvent::StrayCancel(at) => format!("stray_cancel {}", line(at)),
        })
        .collect()
}

fn got_events(out: &[Value]) -> Vec<String> {
    out.iter()
        .filter(|o| o["event"] != "summary")
        .map(|o| {
            let event = o["event"].as_str().unwrap();
            let line = match event {
                "orphan" | "null_id_error" => &o["response_line"],
                _ => &o["request_line"],
            };
            match event {
                "pair" => {
                    let latency = o["latency_ms"]
                        .as_f64()
                        .map_or("null".to_owned(), |ms| format!("{}", ms.round() as u64));
                    format!("pair {line} {} {} {latency}", o["response_line"], o["progress"])
                }
                "unanswered" | "cancelled" => {
                    format!("{event} {line} {}", o["ending"].as_str().unwrap())
                }
                _ => format!("{event} {line}"),
            }
        })
        .collect()
}

/// Generated logs with known pairs, wrapped every way the issue lists, big enough for
/// several parallel blocks: `rpcscan pair` with extraction (mapped, piped, one thread)
/// reports exactly the reference's events, latencies included.
#[test]
fn wrapped_logs_match_the_pairing_reference() {
    for wrapper in Wrapper::ALL {
        for (seed, timeout_ms) in [(11u64, None), (12, Some(2000))] {
            let mut log: Vec<Entry> =
                (0..6).flat_map(|s| pairlog::log(seed * 100 + s, 4000)).collect();
            if wrapper == Wrapper::ProxyLog {
                // Proxy logs say which way and when for every message.
                let mut now = 1_764_410_400_000;
                for (i, entry) in log.iter_mut().enumerate() {
                    entry.direction = Some(entry.direction.unwrap_or(i % 3 != 0));
                    now = entry.time_ms.unwrap_or(now);
                    entry.time_ms = Some(now);
                }
            }
            let wrapped = pairlog::wrap(&log, wrapper, seed);
            assert!(wrapped.bytes.len() > 2 << 20, "several blocks: {}", wrapped.bytes.len());
            let expected = expected_events(&log, &wrapped.lines, timeout_ms);
            let path = file(&format!("wrapped-{wrapper:?}-{seed}.log"), &wrapped.bytes);
            let path = path.to_str().unwrap();
            let timeout = timeout_ms.map(|ms| format!("{ms}ms"));
            // Every reading path once; the timeout run on the default one.
            let modes: &[&[&str]] = match timeout_ms {
                None => &[&[], &["-j", "1"], &["--no-mmap"]],
                Some(_) => &[&[]],
            };
            for mode in modes {
                let mut args = vec!["pair", "--json", "--max-in-flight", "1000"];
                if let Some(t) = &timeout {
                    args.extend_from_slice(&["--timeout", t]);
                }
                args.extend_from_slice(wrapped.args);
                args.extend_from_slice(mode);
                args.push(path);
                let got = got_events(&objects(&args, b""));
                assert_eq!(got.len(), expected.len(), "{wrapper:?} {args:?}");
                assert!(
                    got == expected,
                    "{wrapper:?} {args:?}: first difference at {:?}",
                    got.iter().zip(&expected).find(|(a, b)| a != b)
                );
            }
            // And stats counts the lines without a message.
            let mut args = vec!["stats", "--json"];
            args.extend_from_slice(wrapped.args);
            args.push(path);
            let stats = objects(&args, b"");
            let skipped = &stats[0]["skipped_lines"];
            let no_message = skipped["no_match"].as_u64().unwrap()
                + skipped["no_message_field"].as_u64().unwrap();
            assert_eq!(
                (no_message, skipped["proxy_records"].as_u64().unwrap()),
                wrapped.skipped,
                "{wrapper:?}"
            );
            assert_eq!(stats[0]["messages"], log.len(), "{wrapper:?}");
        }
    }
}
