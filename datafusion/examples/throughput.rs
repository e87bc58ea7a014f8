//! Embedded throughput of `SELECT rpc_kind(line), count(*) FROM logs GROUP BY 1` over one
//! NDJSON file, next to the cost of reading its lines alone (`SELECT count(*)`) and next to
//! the same classification written with `datafusion-functions-json` (jiter-based
//! `json_get_str` / `json_contains`, a dev-dependency only).
//!
//! ```text
//! cargo run --release --example throughput -- FILE [RUNS]
//! ```
//!
//! Every query is run RUNS times (default 3) in one session and the best time is printed as
//! rows, seconds, million rows/s and GB/s of input. Before timing, one untimed query puts
//! both verdicts side by side: the kind counts must agree on every line rpcscan accepts; the
//! lines where they disagree (all of which rpcscan rejects) are printed with rpcscan's reason.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use rpcscan_datafusion::LinesTable;

/// The `line` column is Binary and the JSON functions take strings: `TRY_CAST` validates
/// UTF-8 (NULL, hence `invalid`, when a line is not UTF-8). Measured alone as "utf8 cast".
const JSON_LINES: &str = "SELECT TRY_CAST(line AS VARCHAR) AS j FROM logs";

/// The classification a user of `json_get`-style functions would write: `jsonrpc` must be
/// the string "2.0"; a string `method` makes a request (with an `id` member) or a
/// notification (without); otherwise a `result` or an `error` member decides. Each call
/// parses the line again from its start up to the member it looks for.
const JSON_KIND: &str = "CASE \
       WHEN json_get_str(j, 'jsonrpc') IS DISTINCT FROM '2.0' THEN 'invalid' \
       WHEN json_get_str(j, 'method') IS NOT NULL THEN \
         CASE WHEN json_contains(j, 'id') THEN 'request' ELSE 'notification' END \
       WHEN json_contains(j, 'result') THEN 'result' \
       WHEN json_contains(j, 'error') THEN 'error' \
       ELSE 'invalid' END";

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: throughput FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(3);
    let bytes = std::fs::metadata(path)?.len() as f64;

    let mut ctx = SessionContext::new();
    rpcscan_datafusion::register(&ctx)?;
    datafusion_functions_json::register_all(&mut ctx)?;
    ctx.register_table("logs", Arc::new(LinesTable::try_new([path.as_str()])?))?;
    println!(
        "file: {path} ({:.1} MB), {} partitions, load average {}",
        bytes / 1e6,
        ctx.state().config().target_partitions(),
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "?".into())
    );

    // Untimed: both verdicts of every line, side by side.
    let cross = collect(
        &ctx,
        &format!(
            "SELECT rpc_kind(line) AS rpc, {JSON_KIND} AS json, \
                    rpc_invalid_reason(line) AS reason, count(*) AS n \
             FROM (SELECT line, TRY_CAST(line AS VARCHAR) AS j FROM logs) \
             GROUP BY 1, 2, 3"
        ),
    )
    .await?;
    let (mut by_rpc, mut by_json) = (BTreeMap::new(), BTreeMap::new());
    let mut disagree = Vec::new();
    for (row, n) in rows(&cross) {
        let [rpc, json, reason] = [&row[0], &row[1], &row[2]];
        *by_rpc.entry(rpc.clone()).or_insert(0) += n;
        *by_json.entry(json.clone()).or_insert(0) += n;
        if rpc != json {
            disagree.push(format!("{n:>8}  rpc_kind {rpc} ({reason}), json {json}"));
        }
    }
    println!("kind counts (rpc_kind / json_get-style):");
    let kinds: std::collections::BTreeSet<&String> = by_rpc.keys().chain(by_json.keys()).collect();
    for kind in kinds {
        println!(
            "  {kind:>12}: {:>9} / {:>9}",
            by_rpc.get(kind).unwrap_or(&0),
            by_json.get(kind).unwrap_or(&0)
        );
    }
    println!("lines where they disagree:");
    for line in &disagree {
        println!("  {line}");
    }
    for (row, n) in rows(&cross) {
        assert!(
            row[0] == row[1] || row[0] == "invalid",
            "json_get-style query says {} on {n} lines rpcscan accepts as {}",
            row[1],
            row[0]
        );
    }

    let queries = [
        ("lines only", "SELECT count(*) AS n FROM logs".to_string()),
        ("lines + utf8 cast", format!("SELECT count(j) AS n FROM ({JSON_LINES})")),
        (
            "rpc_kind group by",
            "SELECT rpc_kind(line) AS kind, count(*) AS n FROM logs GROUP BY 1".to_string(),
        ),
        (
            "json_get group by",
            format!("SELECT {JSON_KIND} AS kind, count(*) AS n FROM ({JSON_LINES}) GROUP BY 1"),
        ),
    ];
    let mut best_of = BTreeMap::new();
    for (label, sql) in &queries {
        let mut best = f64::MAX;
        let mut counted = 0;
        for _ in 0..runs {
            let start = Instant::now();
            let batches = collect(&ctx, sql).await?;
            best = best.min(start.elapsed().as_secs_f64());
            counted = rows(&batches).iter().map(|(_, n)| n).sum::<i64>();
        }
        best_of.insert(*label, best);
        println!(
            "{label:>18}: {counted} rows, best of {runs}: {best:.3} s = {:.2} M rows/s, {:.3} GB/s",
            counted as f64 / best / 1e6,
            bytes / best / 1e9
        );
    }
    println!(
        "json_get-style / rpc_kind time: {:.2}x",
        best_of["json_get group by"] / best_of["rpc_kind group by"]
    );
    Ok(())
}

async fn collect(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

/// Each row's leading columns as text (NULL as ""), with the trailing count.
fn rows(batches: &[RecordBatch]) -> Vec<(Vec<String>, i64)> {
    let mut out = Vec::new();
    for batch in batches {
        let last = batch.num_columns() - 1;
        let keys: Vec<_> = (0..last)
            .map(|c| cast(batch.column(c), &DataType::Utf8).expect("cast to text"))
            .collect();
        let counts = batch.column(last).as_primitive::<Int64Type>();
        for r in 0..batch.num_rows() {
            let key = keys
                .iter()
                .map(|k| {
                    let k = k.as_string::<i32>();
                    if k.is_null(r) {
                        String::new()
                    } else {
                        k.value(r).to_string()
                    }
                })
                .collect();
            out.push((key, counts.value(r)));
        }
    }
    out
}
