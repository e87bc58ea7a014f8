//! The named log formats through the command line: recognised by every subcommand without
//! options and said on stderr, `--log-format NAME` and `rpcscan formats`, and reports that
//! say when most of an input could not be read. Every line's verdict on each fixture is
//! checked in `traffic/tests/formats.rs`; here, what a user sees.

use std::path::{Path, PathBuf};

use serde_json::Value;

#[allow(dead_code)] // `common::file`: these logs are committed, not written.
mod common;

fn fixture(name: &str) -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/formats");
    path.join(name).to_str().unwrap().to_owned()
}

/// `rpcscan ARGS` → (exit code, stdout, stderr).
fn rpcscan(args: &[&str]) -> (Option<i32>, String, String) {
    let (code, stdout, stderr) = common::run(args, b"");
    (code, String::from_utf8(stdout).unwrap(), stderr)
}

const FIXTURES: [(&str, &str); 8] = [
    ("claude-desktop-mcp-server-chatlog.log", "claude-desktop"),
    ("claude-desktop-mcp.log", "claude-desktop"),
    ("vscode.log", "vscode"),
    ("vscode-client-says.log", "vscode"),
    ("cursor.log", "cursor"),
    ("inspector.log", "inspector"),
    ("pino.log", "pino"),
    ("rpcscan-proxy.log", "rpcscan"),
];

#[test]
fn every_subcommand_recognises_each_format_and_says_so() {
    for (file, name) in FIXTURES {
        let path = fixture(file);
        let said = format!("(detected; --log-format {name})");
        let mut counts = Vec::new();
        for args in [
            vec!["classify", path.as_str()],
            vec!["classify", "--no-mmap", path.as_str()],
            vec!["stats", path.as_str()],
            vec!["filter", "-c", path.as_str()],
            vec!["pair", path.as_str()],
            vec!["respond", path.as_str()],
        ] {
            let (code, stdout, stderr) = rpcscan(&args);
            assert!(code == Some(0) || (args[0] == "filter" && code == Some(1)), "{args:?}");
            let first = stderr.lines().next().unwrap_or_default();
            assert!(first.ends_with(&said), "{args:?}: {stderr}");
            if args[0] == "classify" {
                counts.push(stdout.lines().count());
            }
        }
        // Named, the same messages, and nothing said.
        let (code, stdout, stderr) = rpcscan(&["classify", "--log-format", name, &path]);
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{file}");
        counts.push(stdout.lines().count());
        assert!(counts.iter().all(|&n| n == counts[0]), "{file}: {counts:?}");
    }
}

#[test]
fn a_claude_desktop_log_pairs_with_directions_and_latencies() {
    let (code, stdout, _) =
        rpcscan(&["pair", "--json", &fixture("claude-desktop-mcp-server-chatlog.log")]);
    assert_eq!(code, Some(0));
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let pairs: Vec<(String, f64)> = lines
        .iter()
        .filter(|e| e["event"] == "pair")
        .map(|e| (e["id"].to_string(), e["latency_ms"].as_f64().unwrap()))
        .collect();
    assert_eq!(pairs, [("0".to_owned(), 132.0), ("1".to_owned(), 54.0), ("2".to_owned(), 3.0)]);
    let summary = lines.last().unwrap();
    assert_eq!(summary["directions"], serde_json::json!(["c2s", "s2c"]));
    assert_eq!((&summary["cancelled"], &summary["invalid"]), (&1.into(), &1.into()));
    assert_eq!(summary["skipped_lines"]["host_lines"], 5);
    assert_eq!(summary["skipped_lines"]["no_match"], 6);
    assert!(summary.get("unreadable").is_none());
}

/// The README's old advice on a Claude Desktop log: every message is `trailing_bytes`
/// (the ` { metadata: undefined }` after it), and both reports say so.
#[test]
fn reports_say_what_they_could_not_read() {
    let path = fixture("claude-desktop-mcp-server-chatlog.log");
    let naive = r"^(?<ts>\S+) \[[^\]]*\] \[\w+\] Message from (?<dir>\w+): (?<msg>.*)$";
    for sub in ["pair", "stats"] {
        let (code, stdout, stderr) = rpcscan(&[sub, "--line-format", naive, &path]);
        assert_eq!(code, Some(0));
        let said = format!(
            "rpcscan: {path}: 21 of 21 lines held no message or an invalid one (read as \
             --line-format); the first, at byte 0 (no_match): 2025-07-12T05:51:44.598Z \
             [chatlog] [info] Initializing server... {{ metadata: undefined }}; it looks \
             like Claude Desktop: mcp-server-NAME.log and mcp.log: try --log-format \
             claude-desktop\n"
        );
        assert_eq!(stderr, said, "{sub}");
        // The report says it too, on its `unreadable` line.
        let line = stdout.lines().find(|l| l.starts_with("unreadable ")).unwrap_or_default();
        assert_eq!(line.split_once(' ').unwrap().1.trim_start(), &said[9..said.len() - 1]);
    }
    // pair counts what stats counts.
    let (_, stdout, _) = rpcscan(&["pair", "--line-format", naive, &path]);
    assert!(stdout.contains("\ninvalid                    10\n"), "{stdout}");
    assert!(stdout.contains("skipped lines              11  (no match 11,"), "{stdout}");
    let (_, stdout, _) = rpcscan(&["stats", "--json", "--line-format", naive, &path]);
    let stats: Value = serde_json::from_str(&stdout).unwrap();
    let unreadable = &stats["unreadable"][0];
    assert_eq!((&unreadable["lines"], &unreadable["unreadable"]), (&21.into(), &21.into()));
    assert_eq!(unreadable["suggested_format"], "claude-desktop");
    assert_eq!(stats["invalid_reasons"]["trailing_bytes"], 10);
    // With the format, nothing to say.
    let (_, _, stderr) = rpcscan(&["stats", "--log-format", "claude-desktop", &path]);
    assert_eq!(stderr, "");
}

#[test]
fn formats_are_listed_with_a_line_each() {
    let (code, listed, _) = rpcscan(&["formats"]);
    assert_eq!(code, Some(0));
    let (_, help, _) = rpcscan(&["stats", "--log-format", "help"]);
    assert_eq!(listed, help);
    for (_, name) in FIXTURES {
        assert!(listed.lines().any(|l| l.starts_with(name)), "{name}: {listed}");
    }
    assert!(listed.contains("{ metadata: undefined }"));
    let (code, _, stderr) = rpcscan(&["stats", "--log-format", "nope"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no log format \"nope\""), "{stderr}");
    let (code, _, _) = rpcscan(&["stats", "--log-format", "vscode", "--line-format", "(?<msg>.*)"]);
    assert_eq!(code, Some(2));
}
