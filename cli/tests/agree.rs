//! One table of logs (`tests/data/agree/`), every product: the CLI's `stats --json` and
//! `pair --json` must give `expected.json`, which the Python package's `scan` / `pair`
//! (python/tests/test_agree.py) and the DataFusion functions (datafusion/tests/agree.rs)
//! are held to as well, so that the products agree with each other.
//!
//! `RPCSCAN_BLESS=1 cargo test -p rpcscan-cli --test agree` rewrites `expected.json` from
//! the CLI's answers; review the diff as any other change.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

#[allow(dead_code)] // `common::file`: these logs are committed, not written.
mod common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/agree")
}

/// The CLI options that read a case's log.
fn options(case: &Value) -> Vec<String> {
    let mut args = Vec::new();
    for (key, flag) in [
        ("line_format", "--line-format"),
        ("json_field", "--json-field"),
        ("ts_field", "--ts-field"),
        ("dir_field", "--dir-field"),
    ] {
        if let Some(v) = case[key].as_str() {
            args.extend([flag.to_owned(), v.to_owned()]);
        }
    }
    args
}

/// `rpcscan ARGS` → its stdout, which must succeed.
fn rpcscan(args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = common::run(&args, b"");
    assert_eq!(code, Some(0), "rpcscan {args:?}: {stderr}");
    String::from_utf8(stdout).unwrap()
}

/// What every product must answer for one log.
fn answers(case: &Value) -> Value {
    let path = dir().join(case["file"].as_str().unwrap());
    let path = path.to_str().unwrap().to_owned();
    let mut args = vec!["stats".to_owned(), "--json".to_owned()];
    args.extend(options(case));
    args.push(path.clone());
    let stats: Value = serde_json::from_str(&rpcscan(&args)).unwrap();
    let skipped = &stats["skipped_lines"];
    let skipped = ["no_match", "no_message_field", "proxy_records", "host_lines"]
        .iter()
        .map(|k| skipped[k].as_u64().unwrap())
        .sum::<u64>();
    let mut args = vec!["pair".to_owned(), "--json".to_owned()];
    args.extend(options(case));
    args.push(path);
    let out = rpcscan(&args);
    let mut lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary = lines.pop().unwrap();
    assert_eq!(summary["event"], "summary");
    let events: Vec<Value> = lines
        .iter()
        .map(|e| {
            // The id as its raw JSON text, as every product keeps it (`null` also where an
            // event has no id at all: `--json` cannot tell the two apart).
            let id = Value::String(e["id"].to_string());
            json!([e["event"], id, e["request_line"], e["response_line"], e["tool"]])
        })
        .collect();
    let mut counts = Map::new();
    for key in [
        "pairs",
        "unanswered",
        "orphans",
        "duplicates",
        "cancelled",
        "null_id_errors",
        "stray_notifications",
        "directions",
        "undirected",
    ] {
        counts.insert(key.to_owned(), summary[key].clone());
    }
    json!({
        "messages": stats["messages"],
        "kinds": stats["kinds"],
        "invalid_reasons": stats["invalid_reasons"],
        "skipped_lines": skipped,
        "pair_summary": counts,
        "pair_events": events,
    })
}

#[test]
fn the_cli_gives_the_expected_answers() {
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir().join("cases.json")).unwrap()).unwrap();
    let mut all = Map::new();
    for case in &cases {
        all.insert(case["name"].as_str().unwrap().to_owned(), answers(case));
    }
    let all = Value::Object(all);
    let expected = dir().join("expected.json");
    if std::env::var_os("RPCSCAN_BLESS").is_some() {
        let mut text = serde_json::to_string_pretty(&all).unwrap();
        text.push('\n');
        std::fs::write(&expected, text).unwrap();
    }
    let want: Value = serde_json::from_str(&std::fs::read_to_string(&expected).unwrap()).unwrap();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        assert_eq!(all[name], want[name], "{name}: the CLI's answers against expected.json");
    }
    assert_eq!(all, want);
}

/// The text report counts pairs without building them (`Pairing::feed_counting`); `--json`
/// builds and lists every one. Both must count the same: per log, the pairs, and per method
/// and per tool the answered requests and their errors.
#[test]
fn the_text_report_counts_the_pairs_the_json_lists() {
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir().join("cases.json")).unwrap()).unwrap();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let path = dir().join(case["file"].as_str().unwrap()).to_str().unwrap().to_owned();
        let mut args = vec!["pair".to_owned(), "--json".to_owned()];
        args.extend(options(case));
        args.push(path.clone());
        // (table, name) → [answered, errors], from the listed pairs.
        let mut listed = std::collections::BTreeMap::<(&str, String), [u64; 2]>::new();
        let json = rpcscan(&args);
        for event in json.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()) {
            if event["event"] != "pair" {
                continue;
            }
            let error = u64::from(event["outcome"] == "error");
            let mut tables = vec![("method", event["method"].as_str().unwrap().to_owned())];
            if let Some(tool) = event["tool"].as_str() {
                tables.push(("tool", tool.to_owned()));
            }
            for key in tables {
                let counts = listed.entry(key).or_default();
                counts[0] += 1;
                counts[1] += error;
            }
        }
        args.remove(1);
        let text = rpcscan(&args);
        // The text report's `method` and `tool` tables: NAME COUNT ERRORS [CODES].
        let mut counted = std::collections::BTreeMap::new();
        let mut table = None;
        let mut pairs = None;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["pairs", n] => pairs = n.parse::<u64>().ok(),
                ["method", "count", ..] => table = Some("method"),
                ["tool", "count", ..] => table = Some("tool"),
                [] => table = None,
                [name, count, errors, ..] if table.is_some() => {
                    let key = (table.unwrap(), (*name).to_owned());
                    counted.insert(key, [count.parse().unwrap(), errors.parse().unwrap()]);
                }
                _ => {}
            }
        }
        let total: u64 =
            listed.iter().filter(|((t, _), _)| *t == "method").map(|(_, [n, _])| n).sum();
        assert_eq!(pairs, Some(total), "{name}: pairs\n{text}");
        assert!(total > 0 || listed.is_empty(), "{name}");
        assert_eq!(counted, listed, "{name}: per method and tool\n{text}");
    }
}
