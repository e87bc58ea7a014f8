//! The `rpcscan` binary, run for real: files, pipes, every subcommand, every exit code.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rpcscan_oracle::corpus::{generate, Mix};

const BIN: &str = env!("CARGO_BIN_EXE_rpcscan");

/// What a run printed and returned.
struct Out {
    code: Option<i32>,
    /// Exactly the bytes printed (filter echoes messages that may not be UTF-8).
    raw: Vec<u8>,
    /// The same, lossily as text.
    stdout: String,
    stderr: String,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head: String = self.stdout.chars().take(2000).collect();
        write!(f, "exit {:?}, stdout {head:?}, stderr {:?}", self.code, self.stderr)
    }
}

impl Out {
    fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

/// Where stdin comes from.
enum In<'a> {
    Null,
    /// Through a pipe (the streaming road).
    Pipe(&'a [u8]),
    /// A regular file as stdin (mappable).
    File(&'a Path),
}

fn run(args: &[&str], input: In<'_>) -> Out {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    match input {
        In::Null => {
            cmd.stdin(Stdio::null());
        }
        In::Pipe(_) => {
            cmd.stdin(Stdio::piped());
        }
        In::File(path) => {
            cmd.stdin(fs::File::open(path).unwrap());
        }
    }
    let mut child = cmd.spawn().unwrap();
    let feeder = match input {
        In::Pipe(bytes) => {
            let mut stdin = child.stdin.take().unwrap();
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let output = child.wait_with_output().unwrap();
    if let Some(feeder) = feeder {
        feeder.join().unwrap();
    }
    let out = Out {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        raw: output.stdout,
        stderr: String::from_utf8(output.stderr).unwrap(),
    };
    assert!(!out.stderr.contains("panicked"), "rpcscan {args:?} panicked: {}", out.stderr);
    out
}

fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rpcscan-cli-tests");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// One message of every sort, with a blank line, CRLF and no final newline.
const SAMPLE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":"abc","method":"resources/read","params":{}}"#,
    "\n\n  \t\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\r\n",
    r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"nope"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    "\n",
    r#"{"a":}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":8,"method":"tools\/call","params":{"name":"echo"}}"#,
);

const SAMPLE_KINDS: [&str; 10] = [
    "request",
    "request",
    "notification",
    "request",
    "result",
    "error",
    "invalid",
    "invalid",
    "invalid",
    "request",
];

fn sample() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| file("sample.ndjson", SAMPLE.as_bytes())).clone()
}

/// A few MB of generated MCP traffic (about 1% invalid), written once.
fn big() -> &'static (PathBuf, Vec<u8>) {
    static BIG: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
    BIG.get_or_init(|| {
        let bytes = generate(Mix::Mixed, 6_000_000, 7);
        (file("big.ndjson", &bytes), bytes)
    })
}

#[test]
fn classify_prints_one_kind_per_message_from_files_and_pipes() {
    let path = sample();
    for out in [
        run(&["classify", p(&path)], In::Null),
        run(&["classify", "--no-mmap", p(&path)], In::Null),
        run(&["classify"], In::Pipe(SAMPLE.as_bytes())),
        run(&["classify", "-"], In::Pipe(SAMPLE.as_bytes())),
        run(&["classify"], In::File(&path)),
    ] {
        assert_eq!(out.code, Some(0), "{out:?}");
        assert_eq!(out.lines(), SAMPLE_KINDS);
    }
}

#[test]
fn classify_json_is_one_object_per_message() {
    let path = sample();
    let out = run(&["classify", "--json", p(&path)], In::Null);
    assert_eq!(out.code, Some(0));
    let lines = out.lines();
    assert_eq!(lines.len(), SAMPLE_KINDS.len());
    let objects: Vec<serde_json::Value> =
        lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (o, kind) in objects.iter().zip(SAMPLE_KINDS) {
        assert_eq!(o["kind"], kind);
        // The offset is where the message starts in the file.
        let at = o["offset"].as_u64().unwrap() as usize;
        assert_eq!(&SAMPLE[at..at + 1], "{");
    }
    let line_numbers: Vec<u64> = objects.iter().map(|o| o["line"].as_u64().unwrap()).collect();
    assert_eq!(line_numbers, [1, 2, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert_eq!(objects[0]["method"], "tools/list");
    assert_eq!(objects[1]["id"], "abc");
    assert_eq!(objects[2]["id"], serde_json::Value::Null);
    assert_eq!(objects[5]["error_code"], -32700);
    assert_eq!(objects[6]["reason"], "syntax");
    assert_eq!(objects[6]["code"], -32700);
    assert_eq!(objects[6]["error_offset"], 5);
    assert_eq!(objects[7]["reason"], "bad_id");
    assert_eq!((&objects[8]["reason"], &objects[8]["id"]), (&"bad_params".into(), &7.into()));
    assert!(objects[0].get("reason").is_none());
    // Ids are echoed verbatim: no rounding of big integers, escapes kept.
    assert!(lines[3].contains(r#""id":123456789012345678901234567890,"#));
    assert!(lines[9].contains(r#""method":"tools\/call""#));
}

#[test]
fn classify_json_names_files_when_given_several() {
    let path = sample();
    let out = run(&["classify", "--json", p(&path), "-"], In::Pipe(SAMPLE.as_bytes()));
    let lines = out.lines();
    assert_eq!(lines.len(), 2 * SAMPLE_KINDS.len());
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    let last: serde_json::Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    assert_eq!(first["file"], p(&path));
    assert_eq!(last["file"], "<stdin>");
    assert_eq!(last["line"], 12);
}

#[test]
fn classify_check_sets_the_exit_code() {
    let valid = file(
        "valid.ndjson",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
    );
    assert_eq!(run(&["classify", "--check", p(&valid)], In::Null).code, Some(0));
    let out = run(&["classify", "--check", p(&sample())], In::Null);
    assert_eq!(out.code, Some(1));
    assert_eq!(out.lines().len(), SAMPLE_KINDS.len());
    let quiet = run(&["classify", "--check", "-q", p(&sample())], In::Null);
    assert_eq!((quiet.code, quiet.stdout.as_str()), (Some(1), ""));
    // Without --check, invalid messages are not an error.
    assert_eq!(run(&["classify", p(&sample())], In::Null).code, Some(0));
}

#[test]
fn stats_counts_kinds_methods_codes_and_reasons() {
    let path = sample();
    let out = run(&["stats", "--json", p(&path)], In::Null);
    assert_eq!(out.code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["messages"], 10);
    assert_eq!(v["bytes"], SAMPLE.len());
    assert_eq!(
        v["kinds"],
        serde_json::json!({"request":4,"notification":1,"result":1,"error":1,"invalid":3})
    );
    // `tools\/call` counts as `tools/call`.
    assert_eq!(v["distinct_methods"], 5);
    assert_eq!(v["methods"][0], serde_json::json!({"method":"nope","count":1}));
    assert_eq!(v["error_codes"], serde_json::json!([{"code":-32700,"count":1}]));
    assert_eq!(v["invalid_reasons"], serde_json::json!({"syntax":1,"bad_id":1,"bad_params":1}));
    assert!(v["elapsed_seconds"].is_number() && v["bytes_per_second"].is_number());

    let top = run(&["stats", "--json", "--top", "2", p(&path)], In::Null);
    let v: serde_json::Value = serde_json::from_str(&top.stdout).unwrap();
    assert_eq!(v["methods"].as_array().unwrap().len(), 2);

    let table = run(&["stats"], In::Pipe(SAMPLE.as_bytes()));
    assert_eq!(table.code, Some(0));
    for needle in ["messages", "throughput", "tools/call", "-32700", "bad_params", "invalid"] {
        assert!(table.stdout.contains(needle), "{needle} missing:\n{}", table.stdout);
    }
}

#[test]
fn filter_prints_matching_messages_verbatim() {
    let path = sample();
    let lines: Vec<&str> = SAMPLE.lines().filter(|l| !l.trim().is_empty()).collect();
    let cases: &[(&[&str], &[usize])] = &[
        (&["--kind", "request"], &[0, 1, 3, 9]),
        (&["--kind", "result,error"], &[4, 5]),
        (&["--kind", "result", "--kind", "error"], &[4, 5]),
        (&["--method", "tools/*"], &[0, 9]),
        (&["--method", "nope", "--method", "notifications/*"], &[2, 3]),
        (&["--method", "t??ls/call"], &[9]),
        (&["--invalid"], &[6, 7, 8]),
        (&["--id", "7"], &[8]),
        (&["--id", "1"], &[0, 4]),
        (&["--id", "abc"], &[1]),
        (&["--id", "\"abc\""], &[1]),
        (&["--id", "null"], &[5]),
        (&["--id", "1", "--kind", "result"], &[4]),
        (&["-v", "--kind", "request", "--kind", "invalid"], &[2, 4, 5]),
        (&[], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
    ];
    for (args, want) in cases {
        let mut argv = vec!["filter"];
        argv.extend_from_slice(args);
        argv.push(p(&path));
        let out = run(&argv, In::Null);
        let expected: Vec<&str> = want.iter().map(|&i| lines[i].trim_end_matches('\r')).collect();
        assert_eq!(out.lines(), expected, "{args:?}");
        assert_eq!(out.code, Some(0), "{args:?}");

        argv.insert(1, "-c");
        let count = run(&argv, In::Null);
        assert_eq!(count.stdout, format!("{}\n", want.len()), "{args:?}");
    }
}

#[test]
fn filter_exits_1_when_nothing_matches() {
    let path = sample();
    let out = run(&["filter", "--method", "absent/*", p(&path)], In::Null);
    assert_eq!((out.code, out.stdout.as_str()), (Some(1), ""));
    let count = run(&["filter", "-c", "--id", "999"], In::Pipe(SAMPLE.as_bytes()));
    assert_eq!((count.code, count.stdout.as_str()), (Some(1), "0\n"));
    let empty = run(&["filter"], In::Pipe(b""));
    assert_eq!(empty.code, Some(1));
}

const NOT_FOUND: &str = r#""error": {"code": -32601, "message": "Method not found"}}"#;

#[test]
fn respond_answers_like_a_gateway() {
    let cases: &[(&str, &str)] = &[
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, "supported"),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{}}"#, "supported"),
        (
            r#"{"jsonrpc":"2.0","id":"req-1","method":"resources/list"}"#,
            r#"{"jsonrpc": "2.0", "id": "req-1", "error": {"code": -32601, "message": "Method not found"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a\u0062","method":"x"}"#,
            r#"{"jsonrpc": "2.0", "id": "a\u0062", "error": {"code": -32601, "message": "Method not found"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"nope"}"#,
            r#"{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "error": {"code": -32601, "message": "Method not found"}}"#,
        ),
        (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, ""),
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, ""),
        (r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#, ""),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "Invalid Request"}}"#,
        ),
        (
            r#"[]"#,
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}"#,
        ),
    ];
    let mut all = String::new();
    let mut expected = Vec::new();
    for (message, answer) in cases {
        let out = run(&["respond"], In::Pipe(format!("{message}\n").as_bytes()));
        assert_eq!(out.code, Some(0));
        let want = if answer.is_empty() { String::new() } else { format!("{answer}\n") };
        assert_eq!(out.stdout, want, "{message}");
        all.push_str(message);
        all.push('\n');
        if !answer.is_empty() {
            expected.push(*answer);
        }
    }
    // All at once, from a file: the same answers, in order.
    let path = file("respond.ndjson", all.as_bytes());
    let out = run(&["respond", p(&path)], In::Null);
    assert_eq!(out.lines(), expected);
}

#[test]
fn respond_supported_list_is_configurable() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n"
    );
    let out = run(&["respond", "--supported", "ping,initialize"], In::Pipe(input.as_bytes()));
    assert_eq!(out.lines(), ["supported", &format!(r#"{{"jsonrpc": "2.0", "id": 2, {NOT_FOUND}"#)]);
    let none = run(&["respond", "--supported", ""], In::Pipe(input.as_bytes()));
    assert_eq!(none.lines().len(), 2);
    assert!(none.lines().iter().all(|l| l.ends_with(NOT_FOUND)));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let missing = run(&["classify", "/nonexistent/rpcscan.ndjson"], In::Null);
    assert_eq!(missing.code, Some(2));
    assert!(missing.stderr.contains("/nonexistent/rpcscan.ndjson"), "{}", missing.stderr);
    // The other inputs are still scanned.
    let partial = run(&["classify", "/nonexistent/x", p(&sample())], In::Null);
    assert_eq!((partial.code, partial.lines().len()), (Some(2), SAMPLE_KINDS.len()));
    let empty = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-logs-here");
    fs::create_dir_all(&empty).unwrap();
    let dir = run(&["stats", p(&empty)], In::Null);
    assert_eq!(dir.code, Some(2));
    assert!(dir.stderr.contains("no file in this folder matches"), "{}", dir.stderr);

    for args in [
        &["classify", "--bogus"][..],
        &["frobnicate"],
        &[],
        &["classify", "--framing", "xml"],
        &["classify", "--mode", "lenient"],
        &["filter", "--kind", "response"],
        &["stats", "--max-message-size", "lots"],
        &["stats", "--max-message-size", "0"],
        &["filter", "--id", "\"open"],
    ] {
        let out = run(args, In::Null);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn help_and_version() {
    let version = run(&["--version"], In::Null);
    assert_eq!(version.code, Some(0));
    assert!(version.stdout.starts_with("rpcscan "));
    let help = run(&["--help"], In::Null);
    assert_eq!(help.code, Some(0));
    for needle in ["classify", "stats", "filter", "respond", "Examples", "Exit status"] {
        assert!(help.stdout.contains(needle), "{needle}");
    }
    let sub = run(&["filter", "--help"], In::Null);
    for needle in ["--framing", "--mode", "--max-message-size", "--threads", "--no-mmap"] {
        assert!(sub.stdout.contains(needle), "{needle}");
    }
}

#[test]
fn broken_pipe_exits_quietly() {
    let (path, _) = big();
    for args in [vec!["classify", "--json", p(path)], vec!["filter", "--no-mmap", p(path)]] {
        let mut child = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(first.starts_with('{'));
        drop(stdout);
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(stderr, "", "{args:?}");
        assert_eq!(status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn oversized_messages_are_invalid_too_large_and_skipped() {
    let long =
        format!(r#"{{"jsonrpc":"2.0","id":5,"method":"m","params":["{}"]}}"#, "x".repeat(300_000));
    let small = r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#;
    let input = format!("{small}\n{long}\n{small}\n{long}");
    let path = file("oversized.ndjson", input.as_bytes());
    let limit = ["--max-message-size", "1K"];
    let roads: [(&[&str], In<'_>); 3] = [
        (&[p(&path)], In::Null),
        (&["--no-mmap", p(&path)], In::Null),
        (&[], In::Pipe(input.as_bytes())),
    ];
    for (args, input) in roads {
        let argv = |sub: &'static str| {
            let mut v = vec![sub];
            v.extend_from_slice(&limit);
            v.extend_from_slice(args);
            v
        };
        let classify = run(&[&argv("classify")[..], &["--json"]].concat(), clone(&input));
        let objects: Vec<serde_json::Value> =
            classify.lines().iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(objects.len(), 4, "{args:?}");
        for i in [1, 3] {
            assert_eq!(objects[i]["reason"], "too_large", "{args:?}");
            assert_eq!(objects[i]["code"], -32700);
            assert_eq!(objects[i]["line"], i + 1);
            assert_eq!(
                objects[i]["offset"],
                if i == 1 { small.len() + 1 } else { 2 * small.len() + long.len() + 3 }
            );
        }
        let respond = run(&argv("respond"), clone(&input));
        let parse_error = r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#;
        assert_eq!(respond.lines(), ["supported", parse_error, "supported", parse_error]);
        let filter = run(&[&argv("filter")[..], &["--invalid"]].concat(), clone(&input));
        assert_eq!((filter.code, filter.stdout.as_str()), (Some(0), ""));
        assert!(filter.stderr.contains("too_large"), "{}", filter.stderr);
        // The default limit (16 MiB) lets them through.
        let mut plain = vec!["classify"];
        plain.extend_from_slice(args);
        assert_eq!(run(&plain, clone(&input)).lines(), ["request"; 4]);
    }
}

fn clone<'a>(input: &In<'a>) -> In<'a> {
    match input {
        In::Null => In::Null,
        In::Pipe(b) => In::Pipe(b),
        In::File(p) => In::File(p),
    }
}

/// The same three messages in every framing.
fn framed() -> Vec<(&'static str, Vec<u8>)> {
    let msgs = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
    ];
    let mut ndjson = Vec::new();
    let mut content_length = Vec::new();
    let mut sse = Vec::new();
    let mut json_seq = Vec::new();
    for m in msgs {
        ndjson.extend_from_slice(format!("{m}\n").as_bytes());
        content_length.extend_from_slice(
            format!("Content-Length: {}\r\nContent-Type: application/json\r\n\r\n{m}", m.len())
                .as_bytes(),
        );
        sse.extend_from_slice(format!("event: message\ndata: {m}\n\n").as_bytes());
        json_seq.extend_from_slice(format!("\x1e{m}\n").as_bytes());
    }
    vec![
        ("ndjson", ndjson),
        ("content-length", content_length),
        ("sse", sse),
        ("json-seq", json_seq),
    ]
}

#[test]
fn every_framing_explicit_or_sniffed() {
    let want = ["request", "notification", "result"];
    for (name, bytes) in framed() {
        let path = file(&format!("framed.{name}"), &bytes);
        for args in [
            vec!["classify", "--framing", name, p(&path)],
            vec!["classify", p(&path)],
            vec!["classify", "--no-mmap", p(&path)],
        ] {
            let out = run(&args, In::Null);
            assert_eq!(
                (out.code, out.lines()),
                (Some(0), want.to_vec()),
                "{args:?}: {}",
                out.stderr
            );
        }
        for args in [vec!["classify", "--framing", name], vec!["classify"]] {
            let out = run(&args, In::Pipe(&bytes));
            assert_eq!(out.lines(), want, "{args:?} (pipe)");
        }
        let json = run(&["classify", "--json", p(&path)], In::Null);
        for line in json.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let at = v["offset"].as_u64().unwrap() as usize;
            assert!(at < bytes.len());
            assert_eq!(v["line"].is_null(), name != "ndjson", "{name}");
        }
        let respond = run(&["respond", p(&path)], In::Null);
        assert_eq!(respond.lines(), ["supported"], "{name}");
    }
}

fn stats_without_timing(out: &Out) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let o = v.as_object_mut().unwrap();
    for timing in ["elapsed_seconds", "bytes_per_second", "messages_per_second"] {
        assert!(o.remove(timing).is_some());
    }
    v
}

#[test]
fn parallel_mmap_and_single_threaded_streaming_agree() {
    let (path, bytes) = big();
    let commands: [&[&str]; 5] = [
        &["classify", "--json"],
        &["classify", "--json", "--mode", "envelope"],
        &["respond"],
        &["filter", "--method", "tools/*", "--kind", "request"],
        &["filter", "-v", "--kind", "notification"],
    ];
    for cmd in commands {
        let args = |extra: &[&'static str]| [cmd, extra].concat();
        let parallel = run(&args(&["--threads", "4", p(path)]), In::Null);
        assert_eq!(parallel.code, Some(0));
        assert!(parallel.stdout.lines().count() > 100, "{cmd:?}");
        let serial = run(&args(&["--threads", "1", "--no-mmap", p(path)]), In::Null);
        assert!(parallel.raw == serial.raw, "{cmd:?}: mmap+threads differs from --no-mmap");
        let piped = run(&args(&[]), In::Pipe(bytes));
        assert!(parallel.raw == piped.raw, "{cmd:?}: mmap differs from a pipe");
        let stdin_file = run(&args(&[]), In::File(path));
        assert!(parallel.raw == stdin_file.raw, "{cmd:?}: mmap differs from stdin file");
    }
    let stats = |extra: &[&str]| {
        stats_without_timing(&run(&[&["stats", "--json", "--top", "0"], extra].concat(), In::Null))
    };
    let parallel = stats(&["-j", "3", p(path)]);
    assert_eq!(parallel, stats(&["-j", "1", "--no-mmap", p(path)]));
    assert_eq!(parallel, stats(&["-j", "1", p(path)]));
    assert_eq!(parallel["bytes"], bytes.len());
    assert!(parallel["kinds"]["invalid"].as_u64().unwrap() > 0);
    // Two copies of a file, in parallel, count twice.
    let twice = stats(&[p(path), p(path)]);
    assert_eq!(twice["messages"], 2 * parallel["messages"].as_u64().unwrap());
}

#[test]
fn verdicts_match_the_oracle() {
    let (path, bytes) = big();
    let out = run(&["classify", p(path)], In::Null);
    let want: Vec<&str> = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| rpcscan_oracle::classify(l).kind.as_str())
        .collect();
    assert_eq!(out.lines().len(), want.len());
    assert!(out.lines() == want, "kinds differ from the oracle");
    let filtered = run(&["filter", "-c", "--invalid", p(path)], In::Null);
    let invalid = want.iter().filter(|&&k| k == "invalid").count();
    assert_eq!(filtered.stdout.trim(), invalid.to_string());
}

#[test]
fn respond_answers_a_live_stream_before_it_ends() {
    let mut child = Command::new(BIN)
        .args(["respond", "--supported", "ping"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    // Lines arrive on a channel, so that a missing answer fails the test instead of
    // hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    for (message, answer) in [
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "supported".to_owned()),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            format!("{{\"jsonrpc\": \"2.0\", \"id\": 2, {NOT_FOUND}"),
        ),
    ] {
        // The answer arrives while stdin is still open: one message at a time, as a gateway.
        stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let line = rx.recv_timeout(std::time::Duration::from_secs(60));
        if line.is_err() {
            let _ = child.kill();
        }
        assert_eq!(line.expect("no answer while the stream is open"), answer);
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn content_length_framing_errors_are_invalid_and_the_stream_goes_on() {
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#;
    let input = format!(
        "Content-Length: {n}\r\n\r\n{body}garbage\r\nContent-Length: x\r\n\r\nContent-Length: {n}\r\n\r\n{body}",
        n = body.len()
    );
    let path = file("errors.lsp", input.as_bytes());
    let classify = run(&["classify", "--json", p(&path)], In::Null);
    assert_eq!(classify.code, Some(0));
    let objects: Vec<serde_json::Value> =
        classify.lines().iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(objects.first().unwrap()["kind"], "request");
    assert_eq!(objects.last().unwrap()["kind"], "request");
    assert!(objects.len() > 2);
    for bad in &objects[1..objects.len() - 1] {
        assert_eq!(
            (&bad["kind"], &bad["reason"], &bad["code"]),
            (&"invalid".into(), &"syntax".into(), &(-32700).into())
        );
    }
    let respond = run(&["respond", p(&path)], In::Null);
    let lines = respond.lines();
    assert_eq!(lines.first(), Some(&"supported"));
    assert_eq!(lines.last(), Some(&"supported"));
    assert!(lines[1..lines.len() - 1]
        .iter()
        .all(|l| *l == r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#));
}

#[test]
fn empty_and_blank_inputs_have_no_messages() {
    for bytes in [&b""[..], b"\n\n  \r\n\t\n"] {
        let path = file("blank.ndjson", bytes);
        for input in [In::Pipe(bytes), In::Null] {
            let args: &[&str] = match input {
                In::Null => &["stats", "--json", p(&path)],
                _ => &["stats", "--json"],
            };
            let stats = run(args, input);
            assert_eq!(stats.code, Some(0));
            let v: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
            assert_eq!(
                (v["messages"].as_u64(), v["bytes"].as_u64()),
                (Some(0), Some(bytes.len() as u64))
            );
        }
        assert_eq!(run(&["classify", "--check", p(&path)], In::Null).code, Some(0));
        assert_eq!(run(&["filter", p(&path)], In::Null).code, Some(1));
    }
}

#[test]
fn an_oversized_blank_line_is_reported_like_the_library_decoder_does() {
    let msg = r#"{"jsonrpc":"2.0","method":"a"}"#;
    let input = format!("{msg}\n{}\n{msg}\n{}", " ".repeat(3000), "\t".repeat(5000));
    let path = file("blank-oversized.ndjson", input.as_bytes());
    let want = ["notification", "invalid", "notification", "invalid"];
    for (args, input) in [
        (vec!["classify", "--max-message-size", "1k", p(&path)], In::Null),
        (vec!["classify", "--max-message-size", "1k"], In::Pipe(input.as_bytes())),
    ] {
        assert_eq!(run(&args, input).lines(), want, "{args:?}");
    }
}

#[test]
fn a_failing_stdout_is_an_error() {
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let out = Command::new(BIN)
        .args(["classify", p(&sample())])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("write error") && !stderr.contains("panicked"), "{stderr}");
}

#[test]
fn stdin_twice_reads_it_once() {
    let path = sample();
    let out = run(&["classify", "-", "-"], In::File(&path));
    assert_eq!(out.lines(), SAMPLE_KINDS);
}

#[test]
fn pipe_chunking_does_not_matter() {
    let (_, bytes) = big();
    let cut = bytes[..1_500_000].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let data = &bytes[..cut];
    let path = file("chunky.ndjson", data);
    // Small limit: some lines are dropped as they stream by, across reads.
    let args = ["classify", "--json", "--max-message-size", "1500"];
    let want = run(&[&args[..], &[p(&path)]].concat(), In::Null);
    assert!(want.stdout.contains("too_large"));
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = data.to_vec();
    let feeder = std::thread::spawn(move || {
        // Deterministic odd sizes, each write flushed to the pipe on its own.
        let sizes = [1usize, 2, 3, 7, 100, 1000, 5000, 70_000];
        let (mut at, mut i) = (0, 0);
        while at < data.len() {
            let n = sizes[i % sizes.len()].min(data.len() - at);
            stdin.write_all(&data[at..at + n]).unwrap();
            stdin.flush().unwrap();
            at += n;
            i = (i * 7 + 3) % 8191;
        }
    });
    let mut got = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut got).unwrap();
    feeder.join().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(got == want.raw, "a chunked pipe gives other answers than the file");
}

#[test]
fn a_directory_without_logs_is_an_error_not_a_read_error() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-logs-here");
    fs::create_dir_all(&dir).unwrap();
    let dir = p(&dir);
    let why = "no file in this folder matches *.log*, *.ndjson*, *.jsonl*";
    for args in [&["classify", dir][..], &["classify", "--mmap", dir], &["respond", dir]] {
        let out = run(args, In::Null);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert_eq!(out.stderr, format!("rpcscan: {dir}: {why}\n"), "{args:?}");
        assert!(out.raw.is_empty(), "{args:?}: {out:?}");
    }
    // The other inputs are still scanned.
    let both = run(&["classify", dir, p(&sample())], In::Null);
    assert_eq!((both.code, both.lines()), (Some(2), SAMPLE_KINDS.to_vec()));
    let on_stdin = run(&["classify"], In::File(Path::new(dir)));
    assert_eq!(on_stdin.code, Some(2));
    assert_eq!(on_stdin.stderr, "rpcscan: <stdin>: is a directory\n");
}

#[test]
fn stats_prints_no_report_of_zeros_after_an_input_failed() {
    for args in [
        &["stats", "/nonexistent/rpcscan.ndjson"][..],
        &["stats", "--json", "/nonexistent/rpcscan.ndjson"],
        &["stats", env!("CARGO_TARGET_TMPDIR")],
    ] {
        let out = run(args, In::Null);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert!(out.raw.is_empty(), "{args:?}: {out:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {out:?}");
    }
    // What the inputs that could be read add up to is still reported.
    let partial = run(&["stats", "--json", "/nonexistent/rpcscan.ndjson", p(&sample())], In::Null);
    assert_eq!(partial.code, Some(2));
    let report: serde_json::Value = serde_json::from_str(&partial.stdout).unwrap();
    assert_eq!(report["messages"], SAMPLE_KINDS.len());
    // No input failed: an empty input gets its report of zeros.
    let empty = run(&["stats", "--json"], In::Pipe(b""));
    assert_eq!(empty.code, Some(0));
    let report: serde_json::Value = serde_json::from_str(&empty.stdout).unwrap();
    assert_eq!(report["messages"], 0);
}

#[test]
fn binary_looking_input_gets_one_warning_and_is_still_scanned() {
    let mut bytes = SAMPLE.as_bytes().to_vec();
    bytes.extend_from_slice(b"\n\0\0\0\x1f\x8b\0\n");
    bytes.extend_from_slice(br#"{"jsonrpc":"2.0","method":"after"}"#);
    let path = file("binary.ndjson", &bytes);
    let at = SAMPLE.len() + 1;
    let warning = |name: &str| {
        format!("rpcscan: {name}: looks binary (a NUL byte at byte {at}); scanning it anyway\n")
    };
    let mut kinds = SAMPLE_KINDS.to_vec();
    kinds.extend(["invalid", "notification"]);
    for (args, input, name) in [
        (&["classify", p(&path)][..], In::Null, p(&path)),
        (&["classify", "--no-mmap", p(&path)], In::Null, p(&path)),
        (&["classify"], In::Pipe(&bytes), "<stdin>"),
        (&["classify"], In::File(&path), "<stdin>"),
    ] {
        let out = run(args, input);
        assert_eq!(out.code, Some(0), "{args:?}: {out:?}");
        assert_eq!(out.lines(), kinds, "{args:?}");
        assert_eq!(out.stderr, warning(name), "{args:?}");
    }
    // Other framings too.
    let framed = b"Content-Length: 3\r\n\r\n\0{}Content-Length: 2\r\n\r\n{}";
    let out = run(&["classify"], In::Pipe(framed));
    assert_eq!(out.lines(), ["invalid", "invalid"]);
    assert_eq!(
        out.stderr,
        "rpcscan: <stdin>: looks binary (a NUL byte at byte 21); scanning it anyway\n"
    );
    // Text never warns, and a NUL past the first 8 KiB is not looked for.
    let mut late = vec![b'\n'; 8 * 1024];
    late.extend_from_slice(b"\0\n");
    let out = run(&["stats"], In::Pipe(SAMPLE.as_bytes()));
    assert_eq!((out.code, out.stderr.as_str()), (Some(0), ""));
    // (The late NUL's line is the input's only message, and invalid: that is said.)
    let out = run(&["stats"], In::Pipe(&late));
    assert_eq!(out.code, Some(0));
    assert!(!out.stderr.contains("looks binary"), "{}", out.stderr);
    assert!(out.stderr.contains("1 of 1 lines held no message or an invalid one"));
}

#[test]
fn shared_options_have_their_own_help_heading() {
    for sub in ["classify", "stats", "filter", "respond"] {
        let help = run(&[sub, "--help"], In::Null).stdout;
        let (own, shared) =
            help.split_once("\nInput options:\n").unwrap_or_else(|| panic!("{sub}: {help}"));
        for option in ["--framing", "--mode", "--max-message-size", "--threads", "--no-mmap"] {
            assert!(shared.contains(option) && !own.contains(option), "{sub} {option}");
        }
        assert!(own.contains("--help") && !shared.contains("--help"), "{sub}");
        assert!(own.contains("Arguments:\n  [FILE]..."), "{sub}");
        assert!(shared.contains("(not given, or 0: one per core)"), "{sub}");
        for values in [
            "[possible values: auto, ndjson, content-length, sse, json-seq]",
            "[possible values: strict, envelope]",
        ] {
            assert!(shared.contains(values), "{sub}: {values}");
        }
    }
    let filter = run(&["filter", "--help"], In::Null).stdout;
    assert!(filter.contains("[possible values: request, notification, result, error, invalid]"));
}

/// A capture of the legacy HTTP+SSE transport: its `endpoint` event and a custom event
/// carry no JSON-RPC message (docs/spec.md §7), so they are skipped and counted, never
/// `invalid`.
#[test]
fn sse_non_message_events_are_skipped_and_counted() {
    let capture = concat!(
        "event: endpoint\ndata: /message?sessionId=abc\n\n",
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
        "event: custom\ndata: not json\n\n",
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n",
    );
    let path = file("legacy.sse", capture.as_bytes());
    for args in [
        vec!["classify", "--check", p(&path)],
        vec!["classify", "--check", "--framing", "sse", p(&path)],
    ] {
        let out = run(&args, In::Null);
        assert_eq!(out.code, Some(0), "{args:?}: {out:?}");
        assert_eq!(out.lines(), ["result", "notification"], "{args:?}");
    }
    let piped = run(&["classify", "--check"], In::Pipe(capture.as_bytes()));
    assert_eq!((piped.code, piped.lines()), (Some(0), vec!["result", "notification"]));

    let stats = run(&["stats", "--json", p(&path)], In::Null);
    let v: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(v["messages"], 2, "{stats:?}");
    assert_eq!(v["kinds"]["invalid"], 0);
    assert_eq!(v["sse_non_message_events"], 2);
    let table = run(&["stats", p(&path)], In::Null);
    assert!(table.stdout.contains("non-message     2"), "{table:?}");

    let invalid = run(&["filter", "--invalid", "-c", p(&path)], In::Null);
    assert_eq!(invalid.lines(), ["0"], "{invalid:?}");
    let all = run(&["filter", "--kind", "result", p(&path)], In::Null);
    assert_eq!(all.lines(), [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]);
}

/// Every flag that takes a DURATION reads the one grammar (issue 31: `pair --timeout 1h`
/// was accepted, `proxy --grace 1h` and `gateway --request-timeout 1h` were not).
#[test]
fn every_duration_flag_reads_the_same_grammar() {
    // Each command stops right after its arguments are read: an empty log, a server that
    // exits at once, an address that does not parse.
    #[rustfmt::skip]
    let commands: &[&[&str]] = &[
        &["pair", "--timeout", "DUR", "-"],
        &["proxy", "--grace", "DUR", "--", "true"],
        &["gateway", "--request-timeout", "DUR", "--listen", "not-an-address", "--upstream", "http://127.0.0.1:9/mcp"],
    ];
    for command in commands {
        for (duration, good) in [
            ("1h", true),
            ("1h30m", true),
            ("250ms", true),
            ("1.5", true),
            ("soon", false),
            ("1h30", false),
        ] {
            let args: Vec<&str> =
                command.iter().map(|a| if *a == "DUR" { duration } else { a }).collect();
            let out = run(&args, In::Null);
            let refused = out.stderr.contains("is not a duration");
            assert_eq!(refused, !good, "{args:?}: {}", out.stderr);
            if !good {
                assert_eq!(out.code, Some(2), "{args:?}");
            }
        }
    }
}
