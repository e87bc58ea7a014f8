//! One table of logs (`tests/data/agree/`), every product: through the SQL functions, each
//! log gives the messages, kinds and invalid reasons of `expected.json`, which the CLI
//! (cli/tests/agree.rs) and the Python package (python/tests/test_agree.py) are held to too.
//! The message is taken out of each line (`rpc_text(line)`, the `lines` column as text) with
//! SQL as a user would: `regexp_replace` for a
//! `--line-format` log, `json_get_str` for a message held as a JSON string field,
//! `json_get_json` for rpcscan's own proxy and gateway logs (their `proxy` records left
//! out). Pairing is the CLI's and Python's: SQL has no matcher.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use rpcscan_datafusion::LinesTable;
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/agree")
}

/// The SQL expression of a case's message, and the condition of a line that holds one.
fn message(case: &Value) -> (String, String) {
    if let Some(format) = case["line_format"].as_str() {
        // The prefix before `(?<msg>.*)$`, as a plain regular expression.
        let prefix = format.strip_suffix("(?<msg>.*)$").expect("a format ending in its message");
        let prefix = prefix.replace("(?<ts>", "(").replace("(?<dir>", "(").replace('\'', "''");
        return (
            format!("regexp_replace(rpc_text(line), '{prefix}', '')"),
            format!("rpc_text(line) ~ '{prefix}'"),
        );
    }
    if let Some(field) = case["json_field"].as_str() {
        let get = format!("json_get_str(rpc_text(line), '{field}')");
        return (get.clone(), format!("{get} IS NOT NULL"));
    }
    if case["file"].as_str().is_some_and(|f| f.ends_with(".ndjson")) {
        return ("line".to_owned(), "true".to_owned());
    }
    // An rpcscan proxy or gateway log: traffic records only.
    let get = "json_get_json(rpc_text(line), 'msg')".to_owned();
    (get.clone(), format!("json_get_str(rpc_text(line), 'dir') <> 'proxy' AND {get} IS NOT NULL"))
}

#[tokio::test]
async fn the_sql_functions_give_the_expected_kinds() {
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir().join("cases.json")).unwrap()).unwrap();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap())
            .unwrap();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let want = &expected[name];
        let mut ctx = SessionContext::new();
        rpcscan_datafusion::register(&ctx).unwrap();
        datafusion_functions_json::register_all(&mut ctx).unwrap();
        let path = dir().join(case["file"].as_str().unwrap());
        let table = LinesTable::try_new([path.to_str().unwrap()]).unwrap();
        ctx.register_table("logs", Arc::new(table)).unwrap();
        let (msg, holds) = message(case);
        let sql = format!(
            "SELECT rpc_kind(m) AS kind, rpc_invalid_reason(m) AS reason, count(*) AS n \
             FROM (SELECT {msg} AS m FROM logs WHERE {holds}) GROUP BY 1, 2"
        );
        let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let mut kinds: BTreeMap<String, u64> =
            ["request", "notification", "result", "error", "invalid"]
                .iter()
                .map(|k| (k.to_string(), 0))
                .collect();
        let mut reasons = BTreeMap::new();
        let mut messages = 0;
        for batch in &batches {
            let kind = batch.column(0).as_string::<i32>();
            let reason = batch.column(1).as_string::<i32>();
            let n = batch.column(2).as_primitive::<Int64Type>();
            for row in 0..batch.num_rows() {
                let count = n.value(row) as u64;
                messages += count;
                *kinds.get_mut(kind.value(row)).unwrap() += count;
                if reason.is_valid(row) {
                    *reasons.entry(reason.value(row).to_owned()).or_insert(0) += count;
                }
            }
        }
        let lines = std::fs::read_to_string(&path).unwrap().lines().count() as u64;
        assert_eq!(messages, want["messages"].as_u64().unwrap(), "{name}: messages");
        assert_eq!(lines - messages, want["skipped_lines"].as_u64().unwrap(), "{name}: skipped");
        assert_eq!(serde_json::to_value(&kinds).unwrap(), want["kinds"], "{name}: kinds");
        assert_eq!(
            serde_json::to_value(&reasons).unwrap(),
            want["invalid_reasons"],
            "{name}: invalid reasons"
        );
    }
}
